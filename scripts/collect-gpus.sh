#!/usr/bin/env bash
# `sparsetune collect` over every GPU of one machine: one command per GPU on its shard of the list
# (`collect --shard I/N`, CUDA_VISIBLE_DEVICES=I), each into its own database DB.gpuI (resumable:
# run the script again and each shard skips what it measured), merged into DB at the end.
#
# usage: scripts/collect-gpus.sh LIST DB [collect options...]
#   ST=build/apps/sparsetune/sparsetune scripts/collect-gpus.sh corpus.list tuning.db --budget 10
# Environment: ST (the sparsetune command, default `sparsetune` on PATH), GPUS (how many, default
# every GPU nvidia-smi lists), SEED_DB (a database each shard starts from where it has none yet,
# so that what it holds is skipped), DEADLINE (seconds for the whole script; the shards are
# interrupted before it, cleanly, and resume on the next run). Generated matrices go to
# DB.gen/gpuI. Exit status: 0, or 1 when a shard failed a matrix or was interrupted (each shard's
# log, DB.gpuI.log, says which).
set -uo pipefail
usage() { sed -n '/^# usage:/,/^[^#]/ s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
case "${1:-}" in -h | --help) usage 0 ;; esac
[ $# -ge 2 ] || usage
start=$(date +%s)
LIST=$1 DB=$2
shift 2
ST=${ST:-sparsetune}
command -v "$ST" >/dev/null || { echo "$0: no sparsetune command: $ST (set ST)" >&2; exit 2; }
[ -e "$LIST" ] || { echo "$0: no such list: $LIST" >&2; exit 2; }
for a in "$@"; do
  case $a in
    --db | --db=* | --gen-dir | --gen-dir=* | --shard | --shard=*)
      echo "$0: $a: the script sets --db, --gen-dir and --shard per GPU" >&2
      exit 2
      ;;
  esac
done
GPUS=${GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)}
[ "$GPUS" -ge 1 ] 2>/dev/null || { echo "$0: no GPU (nvidia-smi lists none; set GPUS)" >&2; exit 2; }
if [ -n "${SEED_DB:-}" ] && [ ! -f "$SEED_DB" ]; then
  echo "$0: no such SEED_DB: $SEED_DB" >&2
  exit 2
fi
limit=()
if [ -n "${DEADLINE:-}" ]; then
  # Room for the merge after the shards stop.
  limit=(timeout -s INT -k 15 $((DEADLINE - 30 - ($(date +%s) - start))))
fi
rc=0
pids=()
for ((i = 0; i < GPUS; i++)); do
  if [ ! -f "$DB.gpu$i" ] && [ -n "${SEED_DB:-}" ]; then cp "$SEED_DB" "$DB.gpu$i"; fi
  CUDA_VISIBLE_DEVICES=$i "${limit[@]}" "$ST" collect "$LIST" --shard "$i/$GPUS" \
    --db "$DB.gpu$i" --gen-dir "$DB.gen/gpu$i" "$@" >"$DB.gpu$i.log" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < GPUS; i++)); do
  wait "${pids[$i]}" || rc=1
  echo "gpu $i: $(grep -E 'done, .* skipped' "$DB.gpu$i.log" | tail -n 1)"
done
for ((i = 0; i < GPUS; i++)); do
  [ -f "$DB.gpu$i" ] && { "$ST" db --db "$DB" merge "$DB.gpu$i" || rc=1; }
done
"$ST" db --db "$DB" stats
echo "in $(($(date +%s) - start)) s"
exit $rc
