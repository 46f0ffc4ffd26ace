#!/usr/bin/env bash
# SpTV device-resident, one slice format on every slice at a time: each design emitted by `tune
# --op sptv --budget 0 --slice-format F`, its kernel.cu built by nvcc with scripts/sptv_driver.cu
# and timed through kernel.h, y compared with all CSR's; the baselines (`bench --op sptv`) in the
# same run. On the skewed generated tensors of docs/benchmarks.md ("SpTV device-resident: COO in
# column-sorted thread blocks").
#
# usage: scripts/bench-sptv-formats.sh SPARSETUNE [OUT]
# NNZ (default "10000000 100000000") the generated sizes, MODES (default "0 1 2"), FORMATS
# (default "CSR COO ELL SCOO0"; SCOO<E>: COO in column-sorted blocks of at most E entries, 0 for
# the size chosen per part), JOBS (default 4) designs built at once, DTYPE (default f32).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
st=$(realpath "${1:?usage: $0 SPARSETUNE [OUT]}")
out=$(realpath -m "${2:-sptv-formats}")
driver=$(realpath scripts/sptv_driver.cu)
mkdir -p "$out"
export st out driver DTYPE=${DTYPE:-f32}
build() {  # tensor mode format
  local t=$1 m=$2 f=$3 dir flag="" fmt=$3
  dir="$out/$(basename "$1" .safetensors)-m$2-$3"
  case $f in SCOO*) flag="--coo-sorted --coo-block-nnz ${f#SCOO}" fmt=COO ;; esac
  rm -rf "$dir"
  # shellcheck disable=SC2086
  "$st" -q tune "$t" --op sptv --mode "$m" --budget 0 --dtype "$DTYPE" --slice-format "$fmt" \
    $flag -o "$dir" > "$dir.log" 2>&1 || { echo "tune $dir failed: $(tail -2 "$dir.log")"; return; }
  (cd "$dir" && cp "$driver" . && nvcc -O3 -std=c++17 -arch=sm_90 -o drv kernel.cu sptv_driver.cu \
    > build.log 2>&1) || echo "$dir: build failed"
}
export -f build
for n in ${NNZ:-10000000 100000000}; do
  t="$out/skewed-$n.safetensors"
  [ -s "$t" ] || "$st" -q gen tensor --dims 512,200000,100000 --nnz "$n" --skew 1.1 --seed 7 \
    -o "$t" > /dev/null || exit 1
  # shellcheck disable=SC2016  # $0.. are xargs' arguments to the inner shell
  for m in ${MODES:-0 1 2}; do for f in ${FORMATS:-CSR COO ELL SCOO0}; do echo "$t $m $f"; done; done |
    xargs -P "${JOBS:-4}" -n 3 bash -c 'build "$0" "$1" "$2"'
  for m in ${MODES:-0 1 2}; do
    "$st" --json bench "$t" --op sptv --mode "$m" > "$out/bench-$n-m$m.json" 2>&1
    for f in ${FORMATS:-CSR COO ELL SCOO0}; do
      dir="$out/skewed-$n-m$m-$f"
      [ -x "$dir/drv" ] || continue
      r=$(cd "$dir" && ./drv 2>&1 | tail -1)
      ref="$out/skewed-$n-m$m-CSR/y.bin"
      e=$([ -f "$ref" ] && python3 - "$dir/y.bin" "$ref" <<'PY'
import array, math, sys
a, b = array.array('f'), array.array('f')
a.frombytes(open(sys.argv[1], 'rb').read()); b.frombytes(open(sys.argv[2], 'rb').read())
num = sum((x - y) ** 2 for x, y in zip(a, b)); den = sum(y * y for y in b)
print("%.2e" % math.sqrt(num / max(den, 1e-300)) if len(a) == len(b) else "lengths differ")
PY
)
      echo "$n mode $m $f: $r  err_vs_CSR ${e:-} bytes $(stat -c %s "$dir/format.safetensors")" |
        tee -a "$out/sptv.txt"
    done
    python3 - "$out/bench-$n-m$m.json" <<'PY'
import json, sys
try:
    b = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit("  baselines: none (" + open(sys.argv[1]).read().strip()[:200] + ")")
print("  baselines: " + " ".join(f"{r.get('name')}={r.get('time_ms', {}).get('median')}"
                                 for r in b.get('results', [])))
PY
  done
done
