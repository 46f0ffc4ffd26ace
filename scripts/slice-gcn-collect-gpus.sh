#!/usr/bin/env bash
# `sparsetune slice-gcn collect` over every GPU of one machine. The work is cut into jobs of one
# (round, tensor, mode) each; the GPUs take them from one queue, so a GPU that finishes early takes
# the next job rather than idling beside a slow shard. Each job writes OUTDIR/ROUND/NAME-MODE.csv;
# a job whose CSV is already there is skipped, so running the script again resumes it. Merge the
# result with `sparsetune slice-gcn merge OUTDIR/*/*.csv -o labels.csv`: a CSV names its tensors
# relative to its own folder and the merged file relative to itself, so keep OUTDIR where it is
# relative to the tensors (or rewrite the names) when the labels move to another machine.
#
# usage: scripts/slice-gcn-collect-gpus.sh OUTDIR ROUNDS TENSOR... [-- collect options...]
#   ST=build/apps/sparsetune/sparsetune scripts/slice-gcn-collect-gpus.sh out A,B g1.tns \
#     KG_JF17K_3.tns.gz -- --max-slices 96 --runs 60
# ROUNDS is a comma-separated list of round names (A,B: every job twice). Environment: ST (the
# sparsetune command, default `sparsetune` on PATH), GPUS (how many, default every GPU nvidia-smi
# lists), DEADLINE (seconds for the whole script; a job that would run past it is interrupted and
# left for the next run). Exit status: 0 when every job has its CSV, 1 otherwise (each job's log is
# OUTDIR/log/ROUND-NAME-MODE.log).
set -uo pipefail
usage() { sed -n '/^# usage:/,/^[^#]/ s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
case "${1:-}" in -h | --help) usage 0 ;; esac
[ $# -ge 3 ] || usage
start=$(date +%s)
OUTDIR=$1 ROUNDS=$2
shift 2
tensors=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do tensors+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
opts=("$@")
for a in "${opts[@]}"; do
  case $a in
    -o | --out | --out=* | --mode | --mode=*)
      echo "$0: $a: the script sets --out and --mode per job" >&2
      exit 2
      ;;
  esac
done
[ ${#tensors[@]} -ge 1 ] || usage
ST=${ST:-sparsetune}
command -v "$ST" >/dev/null || { echo "$0: no sparsetune command: $ST (set ST)" >&2; exit 2; }
GPUS=${GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)}
[ "$GPUS" -ge 1 ] 2>/dev/null || { echo "$0: no GPU (nvidia-smi lists none; set GPUS)" >&2; exit 2; }
end=$((start + ${DEADLINE:-1000000000}))

# Each tensor's modes, read once: a tensor's every mode; a matrix file is one slice, timed along
# mode 1 as collect reads it.
modes_of=()
for t in "${tensors[@]}"; do
  [ -e "$t" ] || { echo "$0: no such tensor: $t" >&2; exit 2; }
  info=$("$ST" --json features "$t" 2>/dev/null | head -c 400)
  case $info in
    *'"kind": "matrix"'*) modes_of+=(1) ;;
    *'"kind": "tensor"'*)
      modes_of+=("$(seq 0 $(($(sed -n 's/.*"order": *\([0-9]*\).*/\1/p' <<<"$info") - 1)))") ;;
    *) echo "$0: $t: not a tensor or matrix sparsetune reads" >&2; exit 2 ;;
  esac
done

# The jobs: every round, tensor and mode, in the order given (put the largest tensors first).
mkdir -p "$OUTDIR/log"
queue=$(mktemp "$OUTDIR/.queue.XXXXXX")
trap 'rm -f "$queue" "$queue.taken"' EXIT
IFS=, read -r -a rounds <<<"$ROUNDS"
for r in "${rounds[@]}"; do
  mkdir -p "$OUTDIR/$r"
  for i in "${!tensors[@]}"; do
    for k in ${modes_of[$i]}; do echo "$r ${tensors[$i]} $k"; done
  done
done >"$queue"
: >"$queue.taken"

# The next job: the queue's line after the ones already taken, under a lock.
# shellcheck disable=SC2016  # $1, $2 and n are the inner sh's
next() { flock "$queue.taken" sh -c 'n=$(wc -l <"$2"); sed -n "$((n + 1))p" "$1"; echo x >>"$2"' \
  _ "$queue" "$queue.taken"; }

# A job's name: the tensor's file name without extensions, and the mode.
job_name() {
  local base
  base=$(basename "$1")
  echo "${base%%.*}-$2"
}

worker() {
  local gpu=$1 line r t k name left
  while line=$(next) && [ -n "$line" ]; do
    read -r r t k <<<"$line"
    name=$(job_name "$t" "$k")
    [ -s "$OUTDIR/$r/$name.csv" ] && continue
    left=$((end - $(date +%s) - 5))
    [ $left -gt 20 ] || return 0
    if CUDA_VISIBLE_DEVICES=$gpu timeout -s INT -k 10 $left "$ST" --json slice-gcn collect "$t" \
      --mode "$k" "${opts[@]}" -o "$OUTDIR/$r/.$name.csv" >"$OUTDIR/log/$r-$name.log" 2>&1; then
      mv "$OUTDIR/$r/.$name.csv" "$OUTDIR/$r/$name.csv"
      echo "gpu $gpu: $r/$name.csv at $(($(date +%s) - start)) s"
    else
      rm -f "$OUTDIR/$r/.$name.csv"
      echo "gpu $gpu: $r/$name failed or was interrupted (log/$r-$name.log)" >&2
    fi
  done
}
for ((g = 0; g < GPUS; ++g)); do worker $g & done
wait

missing=0
while read -r r t k; do
  [ -s "$OUTDIR/$r/$(job_name "$t" "$k").csv" ] || missing=$((missing + 1))
done <"$queue"
echo "$(($(wc -l <"$queue") - missing)) of $(wc -l <"$queue") jobs have their CSV, in $(($(date +%s) - start)) s"
[ $missing -eq 0 ]
