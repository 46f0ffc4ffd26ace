#!/usr/bin/env bash
# Times `sparsetune convert` on a matrix (default: the 107 MB G3_circuit) and prints each run and
# the median wall time, as reported by /usr/bin/time.
# usage: scripts/bench-read.sh [SPARSETUNE_BINARY] [MATRIX] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/apps/sparsetune/sparsetune}
matrix=${2:-../shared/matrices/G3_circuit.mtx.gz}
runs=${3:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
times=()
for ((i = 1; i <= runs; i++)); do
  /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$bin" --json convert "$matrix" "$out/m.safetensors" >"$out/json"
  read -r wall user sys rss <"$out/time"
  read_s=$(grep -o '"read_seconds": [0-9.e-]*' "$out/json" | cut -d' ' -f2)
  printf 'run %d: %s s wall (%s s user, %s s sys, %s MB peak), read %.3f s\n' "$i" "$wall" "$user" \
    "$sys" "$((rss / 1024))" "$read_s"
  times+=("$wall")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
echo "median of $runs: $median s wall ($(basename "$matrix") -> .safetensors)"
