#!/usr/bin/env bash
# Several SpMV rankings' predict-only answers against the searched best, in one command over every
# GPU of the machine: the matrices of LIST_DIR (scripts/spmv-predict-list.py) are split
# round-robin over the GPUs, and on GPU I scripts/spmv-predict-check.sh runs part I under each
# ranking in turn, so every ranking is timed on every matrix beside the same searched best. The
# table (a row per matrix: the best's time, then each ranking's pick and share, lowest share
# first) and a summary per ranking are printed last.
#
# usage: scripts/spmv-predict-compare.sh LIST_DIR OUT_DIR RANKING...
#   RANKING: NAME=DIR, DIR holding spmv-rank.json and the files it names (as `train -o` writes
#   them under <arch>/), or `shipped` for the repository's configs/models.
#   ST=sparsetune scripts/spmv-predict-compare.sh /tmp/list /tmp/out shipped new=/tmp/m/sm_90
# OUT_DIR gets gpu.txt, NAME-gpuI/ (spmv-predict-check.sh's results per part) and NAME-gpuI.log.
# Environment: ST, SHARED, JOBS (default 4 per GPU) as for spmv-predict-check.sh; GPUS (default
# every GPU nvidia-smi lists); DEADLINE (seconds for the whole script, shared evenly between the
# rankings). share = searched best us / pick us (> 1: the pick won).
set -euo pipefail
usage() { sed -n '/^# usage:/,/^[^#]/ s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
case "${1:-}" in -h | --help) usage 0 ;; esac
[ $# -ge 3 ] || usage
start=$(date +%s)
root=$(cd "$(dirname "$0")/.." && pwd)
LIST=$(cd "$1" && pwd) || exit 2
OUT=$2
shift 2
[ -s "$LIST/matrices.tsv" ] || { echo "$0: $LIST has no matrices.tsv" >&2; exit 2; }
GPUS=${GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)}
[ "$GPUS" -ge 1 ] 2>/dev/null || { echo "$0: no GPU (nvidia-smi lists none; set GPUS)" >&2; exit 2; }
export JOBS=${JOBS:-4}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"
names=()
for r in "$@"; do
  name=${r%%=*}
  [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "$0: ranking name '$name' (letters, digits, _ . -)" >&2; exit 2; }
  cp -r "$root/configs" "$W/cfg-$name"
  if [ "$r" != shipped ]; then
    dir=${r#*=}
    if [ "$dir" = "$r" ] || [ ! -f "$dir/spmv-rank.json" ]; then
      echo "$0: $r: expected NAME=DIR with DIR/spmv-rank.json" >&2
      exit 2
    fi
    cp "$dir"/spmv-rank.* "$W/cfg-$name/models/sm_90/"
  fi
  names+=("$name")
done
{ nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || echo "no nvidia-smi"; } |
  sed "s/^/$GPUS x /" | tee "$OUT/gpu.txt"
part=
if [ -n "${DEADLINE:-}" ]; then part=$(((DEADLINE - 20 - ($(date +%s) - start)) / ${#names[@]})); fi
for ((i = 0; i < GPUS; i++)); do
  mkdir -p "$W/list$i"
  ln -s "$LIST/graphs" "$W/list$i/graphs"
  awk -F'\t' -v n="$GPUS" -v i="$i" '/^#/ || (++k - 1) % n == i' "$LIST/matrices.tsv" \
    >"$W/list$i/matrices.tsv"
  (
    export CUDA_VISIBLE_DEVICES=$i
    for name in "${names[@]}"; do
      SPARSETUNE_CONFIG_DIR=$W/cfg-$name WORK=$W/w-$name-$i DEADLINE=$part \
        bash "$root/scripts/spmv-predict-check.sh" "$W/list$i" "$OUT/$name-gpu$i" \
        >"$OUT/$name-gpu$i.log" 2>&1 || echo "$name on GPU $i: exit $?" >&2
    done
  ) &
done
wait
python3 - "$OUT" "$GPUS" "${names[@]}" <<'PY'
import math, sys
out, n, vs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for v in vs:
    for i in range(n):
        try:
            lines = open(f"{out}/{v}-gpu{i}/results.tsv").readlines()
        except OSError:
            continue
        for l in lines:
            f = l.rstrip("\n").split("\t")
            if f[9] != "-":  # share: both runs timed and verified
                r = rows.setdefault(f[0], {"label": f[1], "measured": int(f[4])})
                r[v] = (float(f[9]), f[10], float(f[7]), float(f[8]))
full = {k: r for k, r in rows.items() if all(v in r for v in vs)}
print(f"{len(rows)} matrices timed, {len(full)} under every ranking; share = best / pick "
      "(= : the pick is the best's graph)")
print(f"{'id':5} {'matrix':26} {'best us':>7} " + " ".join(f"{v[:14]:>14}" for v in vs))
for k, r in sorted(full.items(), key=lambda kv: min(kv[1][v][0] for v in vs)):
    print(f"{k:5} {r['label'][:26]:26} {r[vs[0]][3]:7.2f} "
          + " ".join(f"{r[v][2]:7.2f} {r[v][0]:.3f}{r[v][1]:1}" for v in vs))
for sel, what in ((lambda r: True, "all"), (lambda r: r["measured"] >= 5, ">= 5 candidates")):
    sub = [r for r in full.values() if sel(r)]
    for v in vs if sub else []:
        xs = [r[v][0] for r in sub]
        g = math.exp(sum(map(math.log, xs)) / len(xs))
        print(f"{what:16} {v:12} n={len(xs)} geomean {g:.3f} worst {min(xs):.3f} "
              f"under 0.75: {sum(x < 0.75 for x in xs)} within 10 %: {sum(x >= 0.9 for x in xs)}")
PY
echo "in $(($(date +%s) - start)) s"
