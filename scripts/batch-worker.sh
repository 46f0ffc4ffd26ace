#!/usr/bin/env bash
# One matrix of scripts/batch.sh, on the GPU of its parallel slot: runs tune (or bench) under a
# time limit, keeps its output and log, and marks the matrix done in OUT/status/NAME.json (ok, or
# failed with the reason). A worker stopped by TERM or INT (Ctrl-C on the batch) stops its
# program and leaves the matrix undone, so a re-run does it again.
#   batch-worker.sh SLOT INDEX PATH NAME FAMILY     (settings come in BATCH_* variables)
set -uo pipefail
slot=$1 index=$2 path=$3 name=$4 family=$5
out=$BATCH_OUT
gpu=$((slot - 1))
log="$out/logs/$name"

json_text() {  # a JSON string of $1: quotes and backslashes escaped, control characters dropped
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\037')"
}

if [ "$BATCH_MODE" = tune ]; then
  cmd=("$BATCH_ST" tune "$path" --op "$BATCH_OP" --dtype "$BATCH_DTYPE" --budget "$BATCH_BUDGET"
       --db "$BATCH_DB" --family "$family" -o "$out/tuned/$name" --json)
else
  cmd=("$BATCH_ST" bench "$path" --op "$BATCH_OP" --dtype "$BATCH_DTYPE" --json)
  [ "$BATCH_OP" = sptv ] || cmd+=(--db "$BATCH_DB")  # matrices' results feed the report
fi

start=$(date +%s.%N)
CUDA_VISIBLE_DEVICES=$gpu timeout -k 10 "$BATCH_TIMEOUT" "${cmd[@]}" >"$log.json" 2>"$log.err" &
child=$!
stopped=0
trap 'stopped=1; kill -TERM "$child" 2>/dev/null' TERM INT
wait "$child"
rc=$?
# A signal makes wait return early: wait again for the program to end.
while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done
seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
if [ "$stopped" = 1 ]; then
  echo "batch: $name stopped (not done)" >&2
  exit 130
fi

if [ "$rc" = 0 ]; then
  status=ok reason=""
elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  status=failed reason="timed out after ${BATCH_TIMEOUT}s"
else
  status=failed
  reason=$(grep -v '^\s*$' "$log.err" | tail -n 1)
  reason=${reason:-"exit status $rc"}
fi
tmp="$out/status/.$name.json.$$"
printf '{"name": %s, "path": %s, "family": %s, "index": %s, "gpu": %s, "mode": %s, "status": "%s", "rc": %s, "seconds": %s, "reason": %s}\n' \
  "$(json_text "$name")" "$(json_text "$path")" "$(json_text "$family")" "$index" "$gpu" \
  "$(json_text "$BATCH_MODE")" "$status" "$rc" "$seconds" "$(json_text "$reason")" >"$tmp"
mv "$tmp" "$out/status/$name.json"
echo "batch: $name $status in ${seconds}s on GPU $gpu${reason:+: $reason}" >&2
