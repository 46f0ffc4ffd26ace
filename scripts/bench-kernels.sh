#!/usr/bin/env bash
# Generated SpMV kernels of the known formats (configs/graphs) on a GPU: each is emitted with
# `sparsetune emit-kernel --reference`, built with nvcc as a user would (scripts/kernel_driver.cu
# includes kernel.h), checked against the fp64 reference and timed.
#
# Here:   scripts/bench-kernels.sh prepare BUILD_DIR
#           bundles BUILD_DIR/apps/sparsetune/sparsetune into .device/kernels (with the graphs
#           and the driver) so that it can travel to the GPU machine.
# There:  scripts/bench-kernels.sh run [DTYPE]
#           generates a 27-point 96^3 stencil and a scale-18 Kronecker graph, emits every known
#           graph for both (f32 unless DTYPE is given), builds, checks, times; one line per
#           case in $OUT/kernels.txt: matrix, graph, OK/FAIL, error, median ms, the same through
#           kernel.h's Graph, warm ms plain and through Graph, format bytes, rows, cols, nnz. `build [DTYPE]` and `time` are its two halves (build is CPU work
#           that can overlap other GPU work). With AB_UNGUARDED=1 each case is also built with
#           the stored-zero guard of ST_MAC removed (every stored entry multiplied, as before the
#           guard existed) and timed as "<graph>+unguarded": the guard's cost, in one command.
#           With AB_WIDE=1, each case whose kernel indexes in 32 bits is also built with st_idx_t
#           typed long long (64-bit index arithmetic, the same format binary) and timed as
#           "<graph>+wide". With AB_SPLIT=1, each case is also emitted with --split-words and,
#           where that splits any column words (24-bit columns), timed as "<graph>+split".
set -uo pipefail
cd "$(dirname "$0")/.."
dev=.device/kernels
case "${1:-}" in
  prepare)
    build=${2:?usage: $0 prepare BUILD_DIR}
    rm -rf "$dev"
    ../shared/tools/device-bundle.sh "$dev/bundle" "$build/apps/sparsetune/sparsetune" || exit 1
    cp -r configs/graphs "$dev/graphs" && cp scripts/kernel_driver.cu "$dev/" ;;
  run)
    "$0" build "${2:-f32}" && "$0" time ;;
  build)
    dtype=${2:-f32}
    out=$(realpath -m "${OUT:-$dev/results}")
    rm -rf "$dev/work"
    mkdir -p "$out" "$dev/m" "$dev/work"
    cd "$dev"
    st() { bundle/run sparsetune "$@"; }
    st gen stencil3d --n 96 --points 27 -o m/stencil27.safetensors >> "$out/log.txt" 2>&1
    st gen kron --scale 18 -o m/kron18.safetensors >> "$out/log.txt" 2>&1
    # $EXTRA_MATRICES: more matrix files (paths from the repository root), e.g. small ones where
    # launch overhead shows.
    names="stencil27 kron18"
    for p in ${EXTRA_MATRICES:-}; do
      n=$(basename "$p"); n=${n%%.*}
      st convert "../../$p" "m/$n.safetensors" >> "$out/log.txt" 2>&1 && names="$names $n"
    done
    # nvcc builds folder $1's kernel.cu beside the driver, as a user would.
    build_run() {
      (cd "$1" && nvcc -O3 -std=c++17 -arch=sm_90 -o run kernel.cu kernel_driver.cu > build.log 2>&1)
    }
    # Folder $1 copied to $2 (its JSON too) with kernel.cu edited by the sed expression $3.
    variant() {
      cp -r "$1" "$2" && cp "$1.json" "$2.json" && rm -f "$2/run" && sed -i "$3" "$2/kernel.cu"
    }
    job() {
      m=$1 g=$2 d=work/$1.$2
      bundle/run sparsetune --json emit-kernel --graph "graphs/$g.json" "m/$m.safetensors" \
        -o "$d" --dtype "$dtype" --reference > "$d.json" 2> "$d.err" || { echo "$m $g: $(head -c 200 "$d.err")"; return; }
      cp kernel_driver.cu "$d/" && build_run "$d" || echo "$m $g: nvcc failed"
      if [ -n "${AB_UNGUARDED:-}" ]; then
        u=work/$1.$2+unguarded
        variant "$d" "$u" 's/(sum) += st_v_ != (st_acc_t)0 ? st_p_ : (st_acc_t)0;/(sum) += st_p_;/' &&
          ! grep -q 'st_v_ != (st_acc_t)0' "$u/kernel.cu" && build_run "$u" ||
          echo "$m $g: unguarded build failed"
      fi
      if [ -n "${AB_WIDE:-}" ] && grep -q 'typedef int st_idx_t;' "$d/kernel.cu"; then
        u=work/$1.$2+wide
        variant "$d" "$u" 's/typedef int st_idx_t;/typedef long long st_idx_t;/' && build_run "$u" ||
          echo "$m $g: wide build failed"
      fi
      if [ -n "${AB_SPLIT:-}" ]; then
        u=work/$1.$2+split
        bundle/run sparsetune --json emit-kernel --graph "graphs/$g.json" "m/$m.safetensors" \
          -o "$u" --dtype "$dtype" --reference --split-words > "$u.json" 2> "$u.err" &&
          if python3 -c "import json,sys; sys.exit(json.load(open('$u.json'))['arrays_split'] == 0)"; then
            cp kernel_driver.cu "$u/" && build_run "$u" || echo "$m $g: split build failed"
          else rm -rf "$u" "$u.json" "$u.err"; fi
      fi
    }
    export -f job build_run variant
    export dtype AB_UNGUARDED AB_WIDE AB_SPLIT
    for m in $names; do for g in graphs/*.json; do echo "$m $(basename "$g" .json)"; done; done |
      xargs -P "${JOBS:-6}" -n 2 bash -c 'job "$0" "$1"' >> "$out/log.txt" 2>&1 ;;
  time)
    out=$(realpath -m "${OUT:-$dev/results}")
    cd "$dev"
    for d in work/*/; do
      n=$(basename "$d")
      [ -x "$d/run" ] || continue
      r=$(cd "$d" && timeout 120 ./run | tail -1)
      s=$(python3 -c "import json; j=json.load(open('work/$n.json')); print(j['format_bytes'], j['rows'], j['cols'], j['nnz'])")
      echo "${n%%.*} ${n#*.} $r $s"
    done | tee "$out/kernels.txt" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
