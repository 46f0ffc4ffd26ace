#!/usr/bin/env bash
# Batch runs of `sparsetune tune` (or `bench`) over a list of matrices, one worker per GPU,
# resumable; the results land in one tuning database that `sparsetune report` turns into plots.
#
#   scripts/batch.sh LIST [options]        run (or resume) the batch
#   scripts/batch.sh merge OUT [DB ...]    join task databases (Slurm) into OUT/tuning.db
#
# LIST: one matrix a line, `WHAT [FAMILY]`; `#` starts a comment. WHAT is a path (.mtx,
# .mtx.gz, .safetensors; relative to the list's folder or the current one) or a SuiteSparse
# `Group/Name` found under $SUITESPARSE_DIR as ssget lays it out (MM/Group/Name/Name.mtx, or the
# MM/Group/Name.tar.gz archive, which is unpacked into OUT/suitesparse). FAMILY (default: the
# SuiteSparse group, else "matrix") colours the report's plots.
#
# Options:
#   --op spmv|spmm|sptv   operation (tune searches spmv; bench runs any)       [spmv]
#   --mode tune|bench     what runs per matrix                                 [tune]
#   --budget S            tune's budget per matrix, seconds                    [60]
#   --timeout S           hard limit per matrix (killed past it)               [budget*3+60]
#   --dtype f32|f64                                                            [f64]
#   -j, --gpus N          workers, one per GPU (CUDA_VISIBLE_DEVICES=0..N-1)   [GPUs found, else 1]
#   --out DIR             results: status/, logs/, tuned/, joblog              [batch-out]
#   --db FILE             tuning database                                      [OUT/tuning.db]
#   --part K/N            only lines K, K+N, K+2N, ... (0-based; Slurm arrays)
#   --retry-failed        run again the matrices that failed before
#   --report              run `sparsetune report` on the database at the end
#   --dry-run             print the resolved list (index, path, name, family) and stop
#   --sparsetune BIN      the program                            [$SPARSETUNE, else build's, else PATH]
#
# A matrix is done once OUT/status/NAME.json says so (ok, or failed with its reason); a re-run
# skips done matrices, and `tune` answers a matrix it finished before from the database. Ctrl-C
# stops the workers (their matrices stay undone) and the batch; run the same command to resume.
# Without a GPU, tune with --budget above 0 is refused (it would only predict, and the matrices
# would count as done); --budget 0 asks for predictions. The summary counts this list's matrices.
# Exit status: 0 every matrix ok, 1 some failed (listed at the end), 2 bad list or options,
# 130 interrupted.
set -euo pipefail

die() { echo "batch: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)

find_sparsetune() {
  if [ -n "${SPARSETUNE:-}" ]; then echo "$SPARSETUNE"; return; fi
  if [ -x "$here/build/apps/sparsetune/sparsetune" ]; then
    echo "$here/build/apps/sparsetune/sparsetune"; return
  fi
  command -v sparsetune || die "no sparsetune: build it (scripts/setup.sh) or set SPARSETUNE"
}

# ---- merge: the Slurm tasks' databases into one ----
if [ "${1:-}" = merge ]; then
  shift
  [ $# -ge 1 ] || die "usage: scripts/batch.sh merge OUT [DB ...]"
  out=$1; shift
  st=$(find_sparsetune)
  dbs=("$@")
  [ ${#dbs[@]} -gt 0 ] || mapfile -t dbs < <(ls "$out"/db/task-*.db 2>/dev/null)
  [ ${#dbs[@]} -gt 0 ] || die "$out/db: no task databases to merge"
  "$st" db --db "$out/tuning.db" merge "${dbs[@]}"
  exit
fi

# ---- options ----
list="" op=spmv mode=tune budget=60 timeout="" dtype=f64 gpus="" out=batch-out db=""
part="" retry=0 report=0 dry=0 st=""
# The value of option $1 (a missing or empty one is a usage error, exit 2).
arg() { [ -n "${2:-}" ] || die "$1 needs a value (see --help)"; printf '%s' "$2"; }
while [ $# -gt 0 ]; do
  case $1 in
    --op) op=$(arg "$@"); shift ;;
    --mode) mode=$(arg "$@"); shift ;;
    --budget) budget=$(arg "$@"); shift ;;
    --timeout) timeout=$(arg "$@"); shift ;;
    --dtype) dtype=$(arg "$@"); shift ;;
    -j|--gpus) gpus=$(arg "$@"); shift ;;
    --out) out=$(arg "$@"); shift ;;
    --db) db=$(arg "$@"); shift ;;
    --part) part=$(arg "$@"); shift ;;
    --retry-failed) retry=1 ;;
    --report) report=1 ;;
    --dry-run) dry=1 ;;
    --sparsetune) st=$(arg "$@"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$list" ] || die "one LIST only (got '$list' and '$1')"; list=$1 ;;
  esac
  shift
done
[ -n "$list" ] || die "usage: scripts/batch.sh LIST [options] (see --help)"
[ -f "$list" ] || die "$list: no such list"
case $op in spmv|spmm|sptv) ;; *) die "--op must be spmv, spmm or sptv (got '$op')" ;; esac
case $mode in tune|bench) ;; *) die "--mode must be tune or bench (got '$mode')" ;; esac
[ "$mode" = bench ] || [ "$op" = spmv ] ||
  die "tune searches --op spmv only; use --mode bench for $op"
[[ $budget =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--budget must be seconds (got '$budget')"
[ -n "$timeout" ] || timeout=$(awk -v b="$budget" 'BEGIN { printf "%d", b * 3 + 60 }')
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -gt 0 ] || die "--timeout must be whole seconds > 0"
part_k=0 part_n=1
if [ -n "$part" ]; then
  [[ $part =~ ^([0-9]+)/([0-9]+)$ ]] || die "--part must be K/N (got '$part')"
  part_k=${BASH_REMATCH[1]} part_n=${BASH_REMATCH[2]}
  [ "$part_n" -ge 1 ] && [ "$part_k" -lt "$part_n" ] || die "--part K/N needs 0 <= K < N"
fi
if [ -z "$gpus" ]; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "$gpus" -ge 1 ] 2>/dev/null || gpus=1
fi
[[ $gpus =~ ^[0-9]+$ ]] && [ "$gpus" -ge 1 ] || die "-j must be a number of GPUs >= 1"
[ -n "$st" ] || st=$(find_sparsetune)
[ -x "$st" ] || die "$st: not an executable"
# A search without a GPU only predicts, and its matrices would count as done: a later run on a
# GPU would skip them. Predictions on purpose are --budget 0.
if [ "$mode" = tune ] && [ "$dry" = 0 ] && awk -v b="$budget" 'BEGIN { exit !(b > 0) }' &&
  "$st" --json info 2>/dev/null | grep -q '"devices": \[\]'; then
  die "no GPU found: tune --budget $budget would only predict, and the batch would mark those matrices done; give --budget 0 for predictions on purpose"
fi

# ---- the list: every line resolved before anything runs ----
list_dir=$(cd "$(dirname "$list")" && pwd)
out=$(realpath -m -- "$out")  # created once the list is good: a bad list leaves no folder
[ -n "$db" ] || db="$out/tuning.db"

resolve_suitesparse() {  # Group Name lineno -> path
  local g=$1 n=$2 at=$3 root=${SUITESPARSE_DIR:-}
  [ -n "$root" ] || die "$at: '$g/$n' is not a file, and SUITESPARSE_DIR is not set"
  local c
  for c in "$root/MM/$g/$n/$n.mtx" "$root/MM/$g/$n/$n.mtx.gz" "$root/$g/$n/$n.mtx" \
           "$root/$g/$n/$n.mtx.gz" "$root/MM/$g/$n.mtx" "$root/$g/$n.mtx" "$root/$g/$n.mtx.gz"; do
    [ -f "$c" ] && { echo "$c"; return; }
  done
  for c in "$root/MM/$g/$n.tar.gz" "$root/$g/$n.tar.gz"; do
    if [ -f "$c" ]; then
      local dest="$out/suitesparse/$g"
      if [ ! -f "$dest/$n.mtx" ] && [ "$dry" = 0 ]; then
        mkdir -p "$dest"
        tar -xzf "$c" -C "$dest" "$n/$n.mtx" 2>/dev/null ||
          die "$at: $c: no $n/$n.mtx inside the archive"
        mv "$dest/$n/$n.mtx" "$dest/$n.mtx.part" && mv "$dest/$n.mtx.part" "$dest/$n.mtx"
        rmdir "$dest/$n" 2>/dev/null || true
      fi
      echo "$dest/$n.mtx"; return
    fi
  done
  die "$at: SuiteSparse matrix '$g/$n' not found under $root (looked for MM/$g/$n/$n.mtx and MM/$g/$n.tar.gz, as ssget stores them)"
}

jobs_file="$out/jobs.tsv"
tmp_jobs=$(mktemp)
trap 'rm -f "$tmp_jobs"' EXIT
declare -A seen=()
lineno=0 index=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  line=${line%%#*}
  read -r what family extra <<<"$line" || true
  [ -n "${what:-}" ] || continue
  at="$list:$lineno"
  [ -z "${extra:-}" ] || die "$at: expected 'PATH|Group/Name [FAMILY]', found more fields"
  if [[ $what = /* ]] && [ -f "$what" ]; then path=$what
  elif [ -f "$list_dir/$what" ]; then path="$list_dir/$what"
  elif [ -f "$what" ]; then path="$PWD/$what"
  elif [[ $what =~ ^([A-Za-z0-9_.+-]+)/([A-Za-z0-9_.+-]+)$ ]] && [[ $what != *.mtx* ]]; then
    path=$(resolve_suitesparse "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "$at")
    family=${family:-${BASH_REMATCH[1]}}
  else
    die "$at: '$what': no such file (and not a SuiteSparse Group/Name)"
  fi
  case $path in
    *.mtx|*.mtx.gz|*.safetensors) ;;
    *) die "$at: '$what': not a .mtx, .mtx.gz or .safetensors file" ;;
  esac
  name=$(basename "$path"); name=${name%.gz}; name=${name%.mtx}; name=${name%.safetensors}
  [ -z "${seen[$name]:-}" ] ||
    die "$at: '$name' is also line ${seen[$name]}; results are kept by name, so names must differ"
  seen[$name]=$lineno
  family=${family:-matrix}
  if [ $((index % part_n)) -eq "$part_k" ]; then
    printf '%s\t%s\t%s\t%s\n' "$index" "$path" "$name" "$family" >>"$tmp_jobs"
  fi
  index=$((index + 1))
done <"$list"
[ "$index" -gt 0 ] || die "$list: no matrices listed"

if [ "$dry" = 1 ]; then cat "$tmp_jobs"; exit 0; fi
mkdir -p "$out"
mv "$tmp_jobs" "$jobs_file"
command -v parallel >/dev/null ||
  die "GNU parallel is not installed (scripts/setup.sh installs it: apt-get install parallel)"

# ---- which matrices are left ----
mkdir -p "$out/status" "$out/logs" "$out/tuned"
todo="$out/todo.tsv"
: >"$todo"
done_n=0 total=0
while IFS=$'\t' read -r i path name family; do
  total=$((total + 1))
  s="$out/status/$name.json"
  if [ -f "$s" ] && { [ "$retry" = 0 ] || grep -q '"status": "ok"' "$s"; }; then
    done_n=$((done_n + 1))
  else
    printf '%s\t%s\t%s\t%s\n' "$i" "$path" "$name" "$family" >>"$todo"
  fi
done <"$jobs_file"
left=$((total - done_n))
echo "batch: $total matrices, $done_n done before, $left to run on $gpus GPU(s); $mode --op $op" \
  "--dtype $dtype$([ "$mode" = tune ] && echo " --budget $budget"), at most ${timeout}s each" >&2
echo "batch: database $db, results in $out" >&2

if [ "$left" -gt 0 ]; then
  export BATCH_ST="$st" BATCH_OUT="$out" BATCH_DB="$db" BATCH_OP="$op" BATCH_MODE="$mode" \
    BATCH_BUDGET="$budget" BATCH_TIMEOUT="$timeout" BATCH_DTYPE="$dtype"
  bar=()
  [ -t 2 ] && bar=(--bar)
  # One slot per GPU: slot s runs on GPU s-1. A first Ctrl-C makes parallel send TERM to the
  # running workers (which stop their matrix without marking it done) and exit.
  set +e
  parallel -j "$gpus" --colsep '\t' --joblog "$out/joblog" --halt never --termseq TERM,5000,KILL,25 \
    "${bar[@]}" "$here/scripts/batch-worker.sh" '{%}' '{1}' '{2}' '{3}' '{4}' :::: "$todo"
  rc=$?
  set -e
  [ "$rc" -lt 128 ] || { echo "batch: interrupted; run the same command to resume" >&2; exit 130; }
fi

# This list's matrices only (OUT may hold other lists' and parts' statuses).
ok=0 failed=0 failed_status=()
while IFS=$'\t' read -r i path name family; do
  s="$out/status/$name.json"
  [ -f "$s" ] || continue
  if grep -q '"status": "ok"' "$s"; then ok=$((ok + 1)); else
    failed=$((failed + 1)) failed_status+=("$s")
  fi
done <"$jobs_file"
echo "batch: $ok ok, $failed failed, $((total - ok - failed)) not run (of $total)" >&2
for f in "${failed_status[@]}"; do
  sed -n 's/.*"name": "\([^"]*\)".*"reason": "\(.*\)".*/  failed: \1: \2/p' "$f" >&2
done
if [ "$report" = 1 ]; then
  "$st" report "$db" -o "$out/report"
fi
# 0: every matrix ok; 1: all ran, some failed (listed above).
[ "$ok" -eq "$total" ] || exit 1
