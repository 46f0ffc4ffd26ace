#!/usr/bin/env bash
# The [gpu] tests and the cuSPARSE benchmarks on a lent GPU machine (docs/gpu.md).
#
# Here, on the build machine:
#   scripts/gpu-run.sh prepare [MATRIX.mtx.gz ...]
#     builds sparsetune and gpu_tests in build-runtime, bundles them with the libraries the GPU
#     machine lacks into .device/bundle, and copies the named matrices (default: those the
#     benchmark table uses) and the small shared tensors into .device/shared.
# There, from the repository root (the bundle travels in .device/):
#   scripts/gpu-run.sh smoke      device info, measured bandwidth, fault isolation, edge cases
#   scripts/gpu-run.sh tests      every [gpu] test
#   scripts/gpu-run.sh bench      fp32 SpMV (every algorithm) and SpMM (N = 32, 128) on every
#                                 matrix in .device/shared/matrices with >= 100k entries, plus
#                                 a Kronecker graph (scale 20) and a 27-point 128^3 stencil
#                                 generated there; JSON per matrix and a summary table
# Results go to $OUT (or ./gpu-results when OUT is unset).
set -uo pipefail
cd "$(dirname "$0")/.."
dev=.device
out=${OUT:-gpu-results}
mkdir -p "$out"
run() { "$dev/bundle/run" "$@"; }
export SPARSETUNE_SHARED_DIR="$PWD/$dev/shared"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/sparsetune-cache}

bench_set=(G3_circuit landmark Maragal_6 bcsstk16 wiki-Vote luxembourg_osm delaunay_n16
           ca-CondMat bcsstk13 mbeacxc pubmed)

case "${1:-}" in
  prepare)
    shift
    cmake -S . -B build-runtime -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
    make -C build-runtime -j2 sparsetune gpu_tests || exit 1
    rm -rf "$dev/bundle" "$dev/shared"
    ../shared/tools/device-bundle.sh "$dev/bundle" build-runtime/apps/sparsetune/sparsetune \
      build-runtime/tests/gpu/gpu_tests || exit 1
    mkdir -p "$dev/shared/matrices" "$dev/shared/tensors"
    if [ $# -gt 0 ]; then files=("$@"); else
      files=(); for m in "${bench_set[@]}"; do files+=("../shared/matrices/$m.mtx.gz"); done
    fi
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
    mkdir -p "$out/bench"
    gen=/tmp/sparsetune-gen
    mkdir -p "$gen"
    run sparsetune gen kron --scale 20 -o "$gen/kron20.mtx" &&
      run sparsetune gen stencil3d --n 128 --points 27 -o "$gen/stencil27_128.mtx" ||
      echo "gen failed: the generated matrices are left out"
    for m in "$dev"/shared/matrices/*.mtx.gz "$gen"/*.mtx; do
      [ -f "$m" ] || continue
      name=$(basename "$m"); name=${name%%.*}
      run sparsetune --json bench "$m" --op spmv --runs 30 >"$out/bench/$name-spmv.json" ||
        echo "$name spmv failed"
      run sparsetune --json bench "$m" --op spmm --n 32 128 --runs 30 \
        >"$out/bench/$name-spmm.json" || echo "$name spmm failed"
    done
    python3 scripts/bench-table.py "$out/bench" | tee "$out/bench-table.md"
    ;;
  *)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac
