#!/usr/bin/env bash
# The [gpu] tests and the cuSPARSE benchmarks on a lent GPU machine (docs/gpu.md).
#
# Here, on the build machine:
#   [BUILD=folder] scripts/gpu-run.sh prepare [MATRIX.mtx.gz ...]
#     builds sparsetune and gpu_tests in $BUILD (default build-runtime), bundles them with the
#     libraries the GPU machine lacks into .device/bundle, and copies the named matrices
#     (default: all 47 shared ones, about 40 MB) and three small shared tensors (the [gpu] SpTV test reads aminoacid) into
#     .device/shared.
# There, from the repository root (the bundle travels in .device/):
#   scripts/gpu-run.sh smoke      device info, measured bandwidth, fault isolation, edge cases
#   scripts/gpu-run.sh tests      every [gpu] test
#   scripts/gpu-run.sh bench      fp32 SpMV (every algorithm) and SpMM (N = 32, 128) on the
#                                 shared matrices with >= 100k entries, plus a Kronecker graph
#                                 (scale 20) and a 27-point 128^3 stencil generated there;
#                                 JSON per matrix (bench.tar.gz) and a summary table
#   scripts/gpu-run.sh all        bench, the G3_circuit check, then every [gpu] test
#   scripts/gpu-run.sh formats    every known-format graph (configs/graphs) emitted (fp32) for
#                                 G3_circuit, a Kronecker scale-20 matrix and a 27-point 100^3
#                                 stencil (formats-emit, 8 at a time), run with `sparsetune run --runs 30`, next to
#                                 `sparsetune bench --op spmv`; formats.tar.gz, formats-table.md
#   scripts/gpu-run.sh tunes      `sparsetune tune --dtype f32` on G3_circuit, the larger shared
#                                 matrices, kron20 and a 27-point 100^3 stencil (budget
#                                 $TUNE_BUDGET s each, default 60; $TUNE_MATRICES names a
#                                 subset, and the generated kron18, geometric_1m (2^20 points),
#                                 banded_1m (17 diagonals) and powerlaw_1m (mean degree 16) are
#                                 made and tuned only when named there or TUNE_ALL=1);
#                                 tune.tar.gz, tune-table.md
#   scripts/gpu-run.sh peers      fp64 SpMV on $PEER_MATRICES (default: the shared matrices with
#                                 >= 50k entries, kron18/20, a 27-point 100^3 stencil, powerlaw,
#                                 geometric and banded 2^20 matrices): `sparsetune tune` (budget
#                                 $TUNE_BUDGET s, default 60; cuSPARSE's algorithms inside it),
#                                 DASP's spmv_double and MatXtract at several (tau_c, tau_r), all
#                                 in this one command from .device/peers (build-peers.sh);
#                                 peers.tar.gz, peers-table.md
#   scripts/gpu-run.sh spmm       SpMM fp32 on $SPMM_MATRICES for N in $SPMM_N: cuSPARSE's
#                                 algorithms, GE-SpMM (.device/peers/spmm.out) and, where this
#                                 build has it, `tune --op spmm`; spmm.tar.gz, spmm-table.md
#   scripts/gpu-run.sh ncu        Nsight Compute figures (achieved bandwidth, launches, stall
#                                 reasons) of the tuned winner, cuSPARSE and DASP on
#                                 $NCU_MATRICES in $NCU_DTYPE (default f64; f32 leaves DASP
#                                 out); ncu.tar.gz, ncu-table.md
#   scripts/gpu-run.sh ncu-spmm   the same for SpMM fp32 on $NCU_SPMM (NAME:N pairs): the tuned
#                                 winner, cuSPARSE's algorithms and GE-SpMM; ncu-spmm.tar.gz,
#                                 ncu-spmm-table.md
#   scripts/gpu-run.sh batch      scripts/batch.sh over the shared matrices and 10 generated
#                                 ones on every GPU ($BATCH_BUDGET s each, default 8),
#                                 interrupted after $BATCH_INTERRUPT s (if set) and resumed;
#                                 batch.tar.gz (database, status, logs, nvidia-smi samples),
#                                 which .device/resume/ carries to a next command to resume
#                                 (scripts/gpu-samples-plot.py draws gpu-samples.csv, here)
#   scripts/gpu-run.sh exec       the [gpu] tests (while formats-emit works on the CPU),
#                                 formats, then tunes, inside one deadline
#                                 ($DEADLINE s, default 570): each step gets what is left
# Results go to $OUT (or ./gpu-results when OUT is unset).
set -uo pipefail
cd "$(dirname "$0")/.."
dev=.device
out=${OUT:-gpu-results}
mkdir -p "$out"
run() { "$dev/bundle/run" "$@"; }
export SPARSETUNE_SHARED_DIR="$PWD/$dev/shared"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/sparsetune-cache}
export SPARSETUNE_CONFIG_DIR="$PWD/configs"
export GPU_RUN_START=${GPU_RUN_START:-$(date +%s)}
start=$GPU_RUN_START
# Seconds left of $DEADLINE since the first gpu-run.sh of this command started, never more than $1.
left() {
  local l=$(( ${DEADLINE:-570} - ($(date +%s) - start) ))
  [ "$l" -gt "$1" ] && l=$1
  [ "$l" -lt 1 ] && l=1
  echo "$l"
}

# plain_named DIR NAME: DIR/NAME.mtx, a plain .mtx (the peers read neither gzip nor
# safetensors) of a shared matrix or of one of the generated benchmark matrices, made once.
plain_named() {
  local dir=$1 name=$2 f=$1/$2.mtx
  [ -f "$f" ] && return 0
  mkdir -p "$dir"
  case $name in
    kron18) run sparsetune gen kron --scale 18 -o "$f" ;;
    kron20) run sparsetune gen kron --scale 20 -o "$f" ;;
    stencil27_100) run sparsetune gen stencil3d --n 100 --points 27 -o "$f" ;;
    powerlaw_1m) run sparsetune gen powerlaw --n 1048576 --degree 16 -o "$f" ;;
    geometric_1m) run sparsetune gen geometric --n 1048576 --degree 8 -o "$f" ;;
    banded_1m) run sparsetune gen banded --n 1048576 --bandwidth 8 -o "$f" ;;
    *) [ -f "$dev/shared/matrices/$name.mtx.gz" ] || return 1
       run sparsetune convert "$dev/shared/matrices/$name.mtx.gz" "$f" ;;
  esac >/dev/null
}

# tune_one MATRIX DB OUT LOG [DTYPE]: `sparsetune tune` in DTYPE (default f64) with a $TUNE_BUDGET s
# budget (default 60) into folder OUT, its JSON report to LOG.json and its messages to LOG.err,
# within the deadline; $TUNE_RANK (flushed or warm, default flushed) is its --rank-by.
tune_one() {
  timeout "$(left $(( ${TUNE_BUDGET:-60} + 90 )))" "$dev/bundle/run" sparsetune --json tune "$1" \
    --dtype "${5:-f64}" --budget "${TUNE_BUDGET:-60}" --db "$2" --force -o "$3" \
    --rank-by "${TUNE_RANK:-flushed}" >"$4.json" 2>"$4.err"
}

# prof OUT.csv SKIP COUNT FILTER PROGRAM ARGS...: Nsight Compute over COUNT kernels whose names
# match the regex FILTER ("." for all) after the first SKIP of them, one CSV (--page raw);
# $NCU_EXTRA adds sections.
prof() {
  local csv=$1 skip=$2 count=$3 filter=$4; shift 4
  local sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy ${NCU_EXTRA:-}"
  timeout "$(left 240)" ncu --clock-control none --target-processes all $sections \
    -k "regex:$filter" --launch-skip "$skip" --launch-count "$count" --csv --page raw "$@" \
    >"$csv" 2>"${csv%.csv}.err"
}

# The shared matrices with at least 100k entries once symmetric ones are mirrored.
bench_set=(G3_circuit landmark Maragal_6 delaunay_n16 bcsstk16 luxembourg_osm ca-CondMat wiki-Vote)

case "${1:-}" in
  prepare)
    shift
    build=${BUILD:-build-runtime}  # the build folder to bundle from
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
    make -C "$build" -j2 sparsetune gpu_tests || exit 1
    rm -rf "$dev/bundle" "$dev/shared"
    ../shared/tools/device-bundle.sh "$dev/bundle" "$build/apps/sparsetune/sparsetune" \
      "$build/tests/gpu/gpu_tests" || exit 1
    mkdir -p "$dev/shared/matrices" "$dev/shared/tensors"
    if [ $# -gt 0 ]; then files=("$@"); else files=(../shared/matrices/*.mtx.gz); fi
    cp "${files[@]}" "$dev/shared/matrices/" || exit 1
    cp ../shared/tensors/{d_LMOP,T2_d_LMOP,aminoacid,KG_JF17K_3}.tns.gz "$dev/shared/tensors/" || exit 1
    cp ../shared/matrices/SOURCES.tsv "$dev/shared/matrices/" || exit 1
    # GNU parallel (one Perl script) for the batch step: the GPU machine has no package manager.
    mkdir -p "$dev/bin" && cp "$(command -v parallel)" "$dev/bin/" || exit 1
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
  formats-emit)
    # Emitting is CPU work: every (matrix, graph) at once, 8 at a time, while the GPU does other
    # things; `formats` then only measures.
    work=/tmp/sparsetune-formats
    mkdir -p "$work/json" "$work/gen" "$work/emit"
    g3="$dev/shared/matrices/G3_circuit.mtx.gz"
    [ -f "$work/gen/G3_circuit.safetensors" ] ||
      run sparsetune convert "$g3" "$work/gen/G3_circuit.safetensors" >/dev/null
    [ -f "$work/gen/kron20.safetensors" ] ||
      run sparsetune gen kron --scale 20 -o "$work/gen/kron20.safetensors" >/dev/null
    [ -f "$work/gen/stencil27_100.safetensors" ] ||
      run sparsetune gen stencil3d --n 100 --points 27 -o "$work/gen/stencil27_100.safetensors" \
        >/dev/null
    for m in "$work"/gen/*.safetensors; do
      for gfile in configs/graphs/*.json; do echo "$m $gfile"; done
    done | xargs -P 8 -L 1 "$0" emit-one
    ;;
  emit-one)
    work=/tmp/sparsetune-formats
    name=$(basename "$2" .safetensors); gname=$(basename "$3" .json)
    timeout 150 "$dev/bundle/run" sparsetune emit-kernel --graph "$3" "$2" --dtype f32 \
      -o "$work/emit/$name-$gname" >/dev/null 2>"$work/json/$name-$gname.err" ||
      rm -rf "$work/emit/$name-$gname"
    ;;
  formats)
    work=/tmp/sparsetune-formats
    [ -d "$work/emit" ] || "$0" formats-emit
    for m in "$work"/gen/*.safetensors; do
      name=$(basename "$m" .safetensors)
      echo "== formats on $name $(date +%T)"
      timeout "$(left 60)" "$dev/bundle/run" sparsetune --json bench "$m" --op spmv --runs 30 \
        >"$work/json/$name-cusparse.json" 2>"$work/json/$name-cusparse.err"
      for gfile in configs/graphs/*.json; do
        gname=$(basename "$gfile" .json)
        e="$work/emit/$name-$gname"
        [ -d "$e" ] || { echo "$gname: not emitted"; continue; }
        timeout "$(left 60)" "$dev/bundle/run" sparsetune --json run "$e" --matrix "$m" \
          --runs 30 >"$work/json/$name-$gname.json" 2>>"$work/json/$name-$gname.err"
        echo "$gname: exit $?"
        rm -rf "$e"
      done
      tar -czf "$out/formats.tar.gz" -C "$work" json
    done
    python3 scripts/gpu-exec-table.py formats "$work/json" >"$out/formats-table.md"
    ;;
  tunes)
    work=/tmp/sparsetune-tunes
    mkdir -p "$work/json" "$work/gen" "$work/out"
    [ -f "$work/gen/kron20.safetensors" ] ||
      run sparsetune gen kron --scale 20 -o "$work/gen/kron20.safetensors"
    [ -f "$work/gen/stencil27_100.safetensors" ] ||
      run sparsetune gen stencil3d --n 100 --points 27 -o "$work/gen/stencil27_100.safetensors"
    # The rest of the generated set, made only when named in $TUNE_MATRICES (or TUNE_ALL=1).
    want() { [ -n "${TUNE_ALL:-}" ] || [[ " ${TUNE_MATRICES:-} " == *" $1 "* ]]; }
    want kron18 && [ ! -f "$work/gen/kron18.safetensors" ] &&
      run sparsetune gen kron --scale 18 -o "$work/gen/kron18.safetensors"
    want geometric_1m && [ ! -f "$work/gen/geometric_1m.safetensors" ] &&
      run sparsetune gen geometric --n 1048576 --degree 8 -o "$work/gen/geometric_1m.safetensors"
    want banded_1m && [ ! -f "$work/gen/banded_1m.safetensors" ] &&
      run sparsetune gen banded --n 1000000 --bandwidth 8 -o "$work/gen/banded_1m.safetensors"
    want powerlaw_1m && [ ! -f "$work/gen/powerlaw_1m.safetensors" ] &&
      run sparsetune gen powerlaw --n 1000000 --degree 16 -o "$work/gen/powerlaw_1m.safetensors"
    inputs=()
    for m in G3_circuit luxembourg_osm delaunay_n16 wiki-Vote bcsstk16 Maragal_6 landmark ca-CondMat; do
      [ -f "$dev/shared/matrices/$m.mtx.gz" ] && inputs+=("$dev/shared/matrices/$m.mtx.gz")
    done
    for g in kron20 stencil27_100 kron18 geometric_1m banded_1m powerlaw_1m; do
      [ -f "$work/gen/$g.safetensors" ] && inputs+=("$work/gen/$g.safetensors")
    done
    for m in "${inputs[@]}"; do
      [ -f "$m" ] || continue
      name=$(basename "$m"); name=${name%%.*}
      # TUNE_MATRICES="a b ...": only these names
      [ -n "${TUNE_MATRICES:-}" ] && [[ " $TUNE_MATRICES " != *" $name "* ]] && continue
      t0=$(date +%s.%N)
      echo "== tune $name $(date +%T)"
      timeout "$(left $(( ${TUNE_BUDGET:-60} + 90 )))" "$dev/bundle/run" sparsetune --json tune "$m" \
        --dtype f32 --budget "${TUNE_BUDGET:-60}" --db "$work/tuning.db" --force \
        -o "$work/out/$name" >"$work/json/$name.json" 2>"$work/json/$name.err"
      echo "exit $?"
      python3 -c "import sys; print(round($(date +%s.%N) - $t0, 1))" >"$work/json/$name.wall"
      tar -czf "$out/tune.tar.gz" -C "$work" json
    done
    python3 scripts/gpu-exec-table.py tune "$work/json" >"$out/tune-table.md"
    ;;
  peers)
    work=/tmp/sparsetune-peers
    mkdir -p "$work/json" "$work/mtx" "$work/data"
    peers=$PWD/$dev/peers
    names=${PEER_MATRICES:-"G3_circuit landmark Maragal_6 delaunay_n16 bcsstk16 luxembourg_osm ca-CondMat wiki-Vote pubmed kron18 kron20 stencil27_100 powerlaw_1m geometric_1m banded_1m"}
    # $PEER_DTYPE: f64 (default; DASP's spmv_double and MatXtract) or f16 (DASP's spmv_half;
    # MatXtract has no fp16 program).
    dt=${PEER_DTYPE:-f64}
    dasp=spmv_double; [ "$dt" = f16 ] && dasp=spmv_half
    for name in $names; do
      plain_named "$work/mtx" "$name" || continue
      m=$work/mtx/$name.mtx
      echo "== peers on $name ($dt) $(date +%T)"
      tune_one "$m" "$work/tuning.db" "$work/out-$name" "$work/json/$name-tune" "$dt"
      if [ -x "$peers/$dasp" ]; then
        (cd "$work" && timeout "$(left 60)" "$peers/$dasp" "$m") >"$work/json/$name-dasp.txt" 2>&1
      fi
      if [ "$dt" = f64 ] && [ -x "$peers/matxtract_perftest" ]; then
        # $MATX_SETTINGS: "tau_c,tau_r" pairs separated by spaces ("default": its own choice).
        for tc in ${MATX_SETTINGS:-default 0.2,0.1 0.5,0.3 0.8,0.5 1.0,0.9}; do
          [ "$tc" = default ] && tc="" || tc=${tc/,/ }
          tag=${tc:-default}; tag=${tag// /-}
          (cd "$work" && timeout "$(left 60)" "$peers/matxtract_perftest" $tc "$m") \
            >"$work/json/$name-matx-$tag.txt" 2>&1
        done
      fi
      tar -czf "$out/peers.tar.gz" -C "$work" json
    done
    python3 scripts/peers-table.py "$work/json" >"$out/peers-table.md"
    ;;
  spmm)
    # SpMM fp32 on $SPMM_MATRICES for N in $SPMM_N: every cuSPARSE algorithm (`sparsetune bench
    # --op spmm`, flushed and warm), GE-SpMM's best algorithm (dgSPARSE's spmm.out from
    # .device/peers, on the same expanded .mtx), and `sparsetune tune --op spmm` with a budget of
    # $SPMM_BUDGET s (default 30) where this build has it; spmm.tar.gz, spmm-table.md.
    work=/tmp/sparsetune-spmm
    mkdir -p "$work/json" "$work/mtx"
    peers=$PWD/$dev/peers
    ns=${SPMM_N:-"32 64 128 256 512"}
    names=${SPMM_MATRICES:-"cora pubmed G3_circuit landmark Maragal_6 delaunay_n16 bcsstk16 luxembourg_osm ca-CondMat wiki-Vote kron18 kron20 stencil27_100 powerlaw_1m"}
    tune_spmm=0
    run sparsetune tune --help 2>/dev/null | grep -q -- "--n" && tune_spmm=1
    for name in $names; do
      plain_named "$work/mtx" "$name" || continue
      m=$work/mtx/$name.mtx
      echo "== spmm on $name $(date +%T)"
      nargs=(); for n in $ns; do nargs+=(--n "$n"); done
      timeout "$(left 300)" "$dev/bundle/run" sparsetune --json bench "$m" --op spmm --dtype f32 \
        "${nargs[@]}" --runs 20 >"$work/json/$name-cusparse.json" 2>"$work/json/$name-cusparse.err"
      for n in $ns; do
        [ -x "$peers/spmm.out" ] &&
          timeout "$(left 120)" "$peers/spmm.out" "$m" "$n" >"$work/json/$name-ge-$n.txt" 2>&1
        [ "$tune_spmm" = 1 ] &&
          timeout "$(left $(( ${SPMM_BUDGET:-30} + 90 )))" "$dev/bundle/run" sparsetune --json tune "$m" \
            --op spmm --n "$n" --dtype f32 --budget "${SPMM_BUDGET:-30}" --db "$work/tuning.db" --force \
            -o "$work/tuned-$name-$n" >"$work/json/$name-tune-$n.json" 2>"$work/json/$name-tune-$n.err"
      done
      tar -czf "$out/spmm.tar.gz" -C "$work" json
    done
    python3 scripts/spmm-table.py "$work/json" | tee "$out/spmm-table.md"
    ;;
  ncu)
    # Where the time goes, tuned against the peers: for each of $NCU_MATRICES, `tune` (budget
    # $TUNE_BUDGET, default 60), the winner rebuilt with nvcc as a user's program
    # (kernel_driver.cu), then Nsight Compute over its launches, over cuSPARSE's (inside
    # `sparsetune bench`), over DASP's and MatXtract's; scripts/ncu-summary.py turns the CSVs into
    # one table. $TUNE_RANK is the tune's --rank-by.
    work=/tmp/sparsetune-ncu
    dt=${NCU_DTYPE:-f64}  # f32: tuned and cuSPARSE only (DASP's program is fp64)
    mkdir -p "$work/csv" "$work/mtx"
    peers=$PWD/$dev/peers
    for name in ${NCU_MATRICES:-kron20 powerlaw_1m G3_circuit luxembourg_osm}; do
      plain_named "$work/mtx" "$name" || continue
      m=$work/mtx/$name.mtx
      echo "== ncu on $name $(date +%T)"
      tune_one "$m" "$work/tuning.db" "$work/tuned-$name" "$work/csv/$name-tune" "$dt"
      d=$work/emit-$name
      run sparsetune emit-kernel --graph "$work/tuned-$name/graph.json" "$m" --dtype "$dt" \
        --reference -o "$d" >/dev/null 2>"$work/csv/$name-emit.err" &&
        cp scripts/kernel_driver.cu "$d/" &&
        (cd "$d" && nvcc -O3 -std=c++17 -arch=sm_90 -o run kernel.cu kernel_driver.cu) \
          >"$work/csv/$name-nvcc.log" 2>&1 &&
        (cd "$d" && ./run) >"$work/csv/$name-driver.txt" 2>&1 &&
        (cd "$d" && prof "$work/csv/$name-tuned.csv" 20 12 . ./run)
      prof "$work/csv/$name-cusparse.csv" 0 "${NCU_CUSPARSE_COUNT:-80}" . \
        "$PWD/$dev/bundle/run" sparsetune bench "$m" --op spmv --dtype "$dt" --runs 3
      [ "$dt" = f64 ] && [ -x "$peers/spmv_double" ] &&
        (cd "$work" && prof "$work/csv/$name-dasp.csv" 0 20 "dasp|longPart" "$peers/spmv_double" "$m")
      # MatXtract's default crux: every kernel of its first 30 launches (hot and cold parts).
      [ "$dt" = f64 ] && [ -x "$peers/matxtract_perftest" ] &&
        (cd "$work" && prof "$work/csv/$name-matxtract.csv" 0 30 . "$peers/matxtract_perftest" "$m")
      tar -czf "$out/ncu.tar.gz" -C "$work" csv
    done
    python3 scripts/ncu-summary.py "$work/csv" | tee "$out/ncu-table.md"
    ;;
  ncu-spmm)
    # Where SpMM's time goes: for each NAME:N of $NCU_SPMM (default pubmed:128 G3_circuit:128),
    # the spmm step's winner or `tune --op spmm` (budget $SPMM_BUDGET s, default 20), then Nsight Compute over the
    # winner's launches inside `sparsetune run`, over cuSPARSE's SpMM algorithms inside
    # `sparsetune bench --op spmm` and over GE-SpMM's; ncu-spmm.tar.gz, ncu-spmm-table.md.
    work=/tmp/sparsetune-ncu-spmm
    mkdir -p "$work/csv" "$work/mtx"
    peers=$PWD/$dev/peers
    for case_ in ${NCU_SPMM:-pubmed:128 G3_circuit:128}; do
      name=${case_%%:*} n=${case_##*:}
      plain_named "$work/mtx" "$name" || continue
      m=$work/mtx/$name.mtx
      echo "== ncu-spmm on $name N=$n $(date +%T)"
      # The spmm step's winner when it ran before in this command, else a tune of its own.
      t=/tmp/sparsetune-spmm/tuned-$name-$n
      [ -d "$t" ] || {
        t=$work/tuned-$name-$n
        timeout "$(left $(( ${SPMM_BUDGET:-20} + 90 )))" "$dev/bundle/run" sparsetune --json tune \
          "$m" --op spmm --n "$n" --dtype f32 --budget "${SPMM_BUDGET:-20}" --force -o "$t" \
          >"$work/csv/$name-$n-tune.json" 2>"$work/csv/$name-$n-tune.err"
      }
      [ -d "$t" ] && prof "$work/csv/$name-$n-tuned.csv" 4 8 . \
        "$PWD/$dev/bundle/run" sparsetune run "$t" --n "$n" --runs 5
      prof "$work/csv/$name-$n-cusparse.csv" 0 "${NCU_CUSPARSE_COUNT:-60}" . \
        "$PWD/$dev/bundle/run" sparsetune bench "$m" --op spmm --n "$n" --dtype f32 --runs 3
      [ -x "$peers/spmm.out" ] &&
        prof "$work/csv/$name-$n-gespmm.csv" 0 24 . "$peers/spmm.out" "$m" "$n"
      tar -czf "$out/ncu-spmm.tar.gz" -C "$work" csv
    done
    python3 scripts/ncu-summary.py "$work/csv" | tee "$out/ncu-spmm-table.md"
    ;;
  batch)
    # scripts/batch.sh as a user runs it, on every GPU of the machine: the shared matrices and
    # generated ones (list: $work/batch.list), interrupted after $BATCH_INTERRUPT s (as Ctrl-C
    # would) and resumed until the deadline; nvidia-smi samples every GPU meanwhile.
    # batch.tar.gz holds the database, status files, logs and the GPU samples; unpacked into
    # .device/resume/ it lets the next command resume the batch.
    work=/tmp/sparsetune-batch
    mkdir -p "$work/gen" "$work/bin"
    printf '#!/bin/sh\nexec %s/%s/bundle/run sparsetune "$@"\n' "$PWD" "$dev" >"$work/bin/sparsetune"
    chmod +x "$work/bin/sparsetune"
    export PATH="$PWD/$dev/bin:$PATH"  # GNU parallel travels in .device/bin
    gen() {  # gen NAME FAMILY ARGS...
      local name=$1 fam=$2; shift 2
      [ -f "$work/gen/$name.safetensors" ] ||
        run sparsetune gen "$@" -o "$work/gen/$name.safetensors" >/dev/null
      echo "$work/gen/$name.safetensors gen:$fam" >>"$work/batch.list"
    }
    : >"$work/batch.list"
    # The shared matrices with their SuiteSparse group as family (SOURCES.tsv's provenance).
    for m in "$dev"/shared/matrices/*.mtx.gz; do
      f=$(basename "$m")
      # "... — Group/Name" for SuiteSparse matrices; anything else (Planetoid) is "other".
      g=$(awk -F'\t' -v f="$f" '$1 == f { n = split($8, a, " — "); print a[n] }' \
        "$dev/shared/matrices/SOURCES.tsv" 2>/dev/null | sed -n 's|^\([A-Za-z0-9_.-]*\)/[A-Za-z0-9_.-]*.*|\1|p')
      echo "$PWD/$m ${g:-other}" >>"$work/batch.list"
    done
    gen kron16 kron kron --scale 16
    gen kron18 kron kron --scale 18
    gen stencil2d_512 stencil stencil2d --nx 512
    gen stencil27_64 stencil stencil3d --n 64 --points 27
    gen geometric_256k geometric geometric --n 262144 --degree 8
    gen erdos_100k erdos erdos --n 100000 --degree 10
    gen banded_500k banded banded --n 500000 --bandwidth 4
    gen powerlaw_256k powerlaw powerlaw --n 262144 --degree 16
    gen powerlaw_1m powerlaw powerlaw --n 1048576 --degree 8
    gen blockdiag_64k blockdiag blockdiag --n 65536 --block-size 32 --noise 0.0001
    wc -l <"$work/batch.list"
    # BATCH_FRESH=1 starts over; else a batch carried over from an earlier command (its
    # database and status files in .device/resume/out) resumes.
    [ -n "${BATCH_FRESH:-}" ] && rm -rf "$work/out" "$work/batch.log" "$work/gpu-samples.csv"
    if [ -d "$dev/resume/out" ] && [ ! -d "$work/out" ]; then cp -r "$dev/resume/out" "$work/out"; fi
    nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 500 \
      >>"$work/gpu-samples.csv" 2>/dev/null &
    smi=$!
    args=("$work/batch.list" --budget "${BATCH_BUDGET:-8}" --out "$work/out" --sparsetune "$work/bin/sparsetune")
    # batch_for SECONDS LOG: a batch in its own process group, sent SIGINT (as Ctrl-C does)
    # when it is still running after SECONDS.
    batch_for() {
      setsid scripts/batch.sh "${args[@]}" >>"$2" 2>&1 &
      local b=$! t=0
      while kill -0 "$b" 2>/dev/null && [ "$t" -lt "$1" ]; do sleep 1; t=$((t + 1)); done
      kill -0 "$b" 2>/dev/null && kill -INT -- -"$b"
      wait "$b"
      echo "batch exit $? after $t s" | tee -a "$2"
    }
    [ -n "${BATCH_INTERRUPT:-}" ] && batch_for "$BATCH_INTERRUPT" "$work/batch.log"
    batch_for "$(left 600)" "$work/batch.log"
    kill "$smi"
    "$work/bin/sparsetune" db --db "$work/out/tuning.db" stats | tee "$work/db-stats.txt"
    tar -czf "$out/batch.tar.gz" -C "$work" out/tuning.db out/status out/logs out/joblog \
      batch.list batch.log gpu-samples.csv db-stats.txt
    tail -n 4 "$work/batch.log"
    ;;
  exec)
    run sparsetune info | tee "$out/info.txt"
    "$0" formats-emit >"$out/emit.log" 2>&1 &
    emitting=$!
    timeout "$(left 200)" "$dev/bundle/run" gpu_tests --reporter compact --durations yes \
      >"$out/gpu-tests.txt" 2>&1
    echo "gpu_tests exit $?" | tee -a "$out/gpu-tests.txt"
    wait "$emitting"
    "$0" formats
    "$0" tunes
    tail -4 "$out/gpu-tests.txt"
    cat "$out/formats-table.md" "$out/tune-table.md"
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
