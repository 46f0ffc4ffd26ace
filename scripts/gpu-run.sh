#!/usr/bin/env bash
# The [gpu] tests and the cuSPARSE benchmarks on a lent GPU machine (docs/gpu.md).
#
# Here, on the build machine:
#   scripts/gpu-run.sh prepare [MATRIX.mtx.gz ...]
#     builds sparsetune and gpu_tests in build-runtime, bundles them with the libraries the GPU
#     machine lacks into .device/bundle, and copies the named matrices (default: all 47 shared
#     ones, about 40 MB) and two small shared tensors into .device/shared.
# There, from the repository root (the bundle travels in .device/):
#   scripts/gpu-run.sh smoke      device info, measured bandwidth, fault isolation, edge cases
#   scripts/gpu-run.sh tests      every [gpu] test
#   scripts/gpu-run.sh bench      fp32 SpMV (every algorithm) and SpMM (N = 32, 128) on the
#                                 shared matrices with >= 100k entries, plus a Kronecker graph
#                                 (scale 20) and a 27-point 128^3 stencil generated there;
#                                 JSON per matrix (bench.tar.gz) and a summary table
#   scripts/gpu-run.sh all        bench, the G3_circuit check, then every [gpu] test
# Results go to $OUT (or ./gpu-results when OUT is unset).
set -uo pipefail
cd "$(dirname "$0")/.."
dev=.device
out=${OUT:-gpu-results}
mkdir -p "$out"
run() { "$dev/bundle/run" "$@"; }
export SPARSETUNE_SHARED_DIR="$PWD/$dev/shared"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/sparsetune-cache}

# The shared matrices with at least 100k entries once symmetric ones are mirrored.
bench_set=(G3_circuit landmark Maragal_6 delaunay_n16 bcsstk16 luxembourg_osm ca-CondMat wiki-Vote)

case "${1:-}" in
  prepare)
    shift
    cmake -S . -B build-runtime -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
    make -C build-runtime -j2 sparsetune gpu_tests || exit 1
    rm -rf "$dev/bundle" "$dev/shared"
    ../shared/tools/device-bundle.sh "$dev/bundle" build-runtime/apps/sparsetune/sparsetune \
      build-runtime/tests/gpu/gpu_tests || exit 1
    mkdir -p "$dev/shared/matrices" "$dev/shared/tensors"
    if [ $# -gt 0 ]; then files=("$@"); else files=(../shared/matrices/*.mtx.gz); fi
    cp "${files[@]}" "$dev/shared/matrices/" || exit 1
    cp ../shared/tensors/{d_LMOP,T2_d_LMOP}.tns.gz "$dev/shared/tensors/" || exit 1
    du -sh "$dev"
    ;;
  smoke)
    run sparsetune info | tee "$out/info.txt"
    run gpu_tests --reporter compact "a faulting or hanging kernel ends only the worker" 2>&1 |
      tee "$out/smoke-tests.txt"
    run gpu_tests --reporter compact "baselines agree with the reference on edge cases" 2>&1 |
      tee -a "$out/smoke-tests.txt"
    m=$(ls "$dev"/shared/matrices/*.mtx.gz | head -1)
    run sparsetune bench "$m" --op spmv
    run sparsetune bench "$m" --op spmm --n 64
    t=$(ls "$dev"/shared/tensors/*.tns.gz | head -1)
    [ -n "$t" ] && run sparsetune bench "$t" --op sptv --mode 0
    ;;
  tests)
    run gpu_tests --reporter compact 2>&1 | tee "$out/gpu-tests.txt"
    ;;
  bench)
    work=/tmp/sparsetune-bench
    mkdir -p "$work/json" "$work/gen"
    run sparsetune gen kron --scale 20 -o "$work/gen/kron20.mtx" &&
      run sparsetune gen stencil3d --n 128 --points 27 -o "$work/gen/stencil27_128.mtx" ||
      echo "gen failed: the generated matrices are left out"
    inputs=()
    for m in "${bench_set[@]}"; do
      [ -f "$dev/shared/matrices/$m.mtx.gz" ] && inputs+=("$dev/shared/matrices/$m.mtx.gz")
    done
    inputs+=("$work"/gen/*.mtx)
    for m in "${inputs[@]}"; do
      [ -f "$m" ] || continue
      name=$(basename "$m"); name=${name%%.*}
      echo "== $name $(date +%T)"
      run sparsetune --json bench "$m" --op spmv --runs 30 >"$work/json/$name-spmv.json" ||
        echo "$name spmv failed"
      run sparsetune --json bench "$m" --op spmm --n 32 128 --runs 30 \
        >"$work/json/$name-spmm.json" || echo "$name spmm failed"
      tar -czf "$out/bench.tar.gz" -C "$work" json  # what is done so far comes back
    done
    python3 scripts/bench-table.py "$work/json" >"$out/bench-table.md"
    ;;
  g3)
    g3="$dev/shared/matrices/G3_circuit.mtx.gz"
    { run sparsetune bench "$g3" --op spmv && run sparsetune bench "$g3" --op spmm --n 64; } 2>&1 |
      tee "$out/g3.txt"
    ;;
  all)
    run sparsetune info | tee "$out/info.txt"
    "$0" bench
    "$0" g3
    timeout 240 "$dev/bundle/run" gpu_tests --reporter compact 2>&1 | tail -40 >"$out/gpu-tests.txt"
    cat "$out/gpu-tests.txt" | tail -8
    cat "$out/bench-table.md"
    ;;
  *)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac
