#!/usr/bin/env bash
# libFuzzer targets of every reader of outside input: .mtx, .tns, the safetensors container, graph
# JSON, the format binary and the tuning-database import, built with clang-14 (AddressSanitizer,
# UndefinedBehaviorSanitizer, LeakSanitizer) into build-fuzz.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]     build, seed the corpora, run each target SECONDS
#                                              (default 60); the original form
#   scripts/fuzz.sh build                      build the targets only
#   scripts/fuzz.sh corpus                     seed build-fuzz/fuzz-corpus/<target> from tests/data,
#                                              configs/graphs and files a regular build's sparsetune
#                                              makes ($SPARSETUNE, default build/apps/sparsetune/
#                                              sparsetune): emitted format binaries, a tuning db
#   scripts/fuzz.sh run [--runs N] [--seconds S] [--jobs J] [TARGET ...]
#                                              run already built targets ($FUZZ_BIN, default
#                                              build-fuzz/tests/fuzz): J processes per target, N
#                                              executions in all (split between them) or S seconds
# Each run prints one line per target: executions, new corpus units, and OK or FOUND; findings go
# to build-fuzz/fuzz-artifacts/ (a crash there becomes a regression test), logs to
# build-fuzz/fuzz-logs/. Exits non-zero when any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${SPARSETUNE_FUZZ_BUILD:-build-fuzz}
all_targets=(mtx tns safetensors graph format db)
jobs=$(nproc 2>/dev/null || echo 2)

do_build() {
  bash scripts/install-packages.sh clang-14 libclang-rt-14-dev $(grep -v '^#' scripts/debian-packages.txt)
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DSPARSETUNE_BUILD_FUZZERS=ON \
    >"$build.configure.log" 2>&1 || { cat "$build.configure.log" >&2; exit 1; }
  rm -f "$build.configure.log"
  cmake --build "$build" -j"$jobs" --target "${@/#/fuzz_}"
}

do_corpus() {
  local c="$build/fuzz-corpus" st=${SPARSETUNE:-build/apps/sparsetune/sparsetune}
  for t in "${all_targets[@]}"; do mkdir -p "$c/$t"; done
  cp -f tests/data/*.mtx tests/data/*.mtx.gz "$c/mtx/" 2>/dev/null || true
  cp -f tests/data/*.tns "$c/tns/" 2>/dev/null || true
  cp -f tests/data/*.safetensors "$c/safetensors/" 2>/dev/null || true
  cp -f configs/graphs/*.json "$c/graph/"
  if [ -x "$st" ]; then
    local tmp
    tmp=$(mktemp -d)
    "$st" gen stencil2d --nx 5 -o "$tmp/a.mtx" >/dev/null
    "$st" gen kron --scale 5 -o "$tmp/b.mtx" >/dev/null
    for g in configs/graphs/*.json; do
      for m in a b; do
        n=$(basename "$g" .json)-$m
        "$st" emit-kernel --graph "$g" "$tmp/$m.mtx" -o "$tmp/$n" >/dev/null 2>&1 &&
          cp "$tmp/$n/format.safetensors" "$c/format/$n.safetensors" &&
          cp "$tmp/$n/format.safetensors" "$c/safetensors/$n.safetensors"
      done
    done
    # 24-bit column words (nz_col_hi), with and without row steps packed into them.
    { printf '%%%%MatrixMarket matrix coordinate real general\n40 70000 40\n'
      for i in $(seq 1 40); do printf '%d %d %d.5\n' "$i" $(((i * i * 7919) % 70000 + 1)) "$i"; done
    } >"$tmp/c.mtx"
    for n in csr-scalar segmented-coo; do
      "$st" emit-kernel --graph "configs/graphs/$n.json" "$tmp/c.mtx" -o "$tmp/$n-split" \
        --split-words >/dev/null 2>&1 &&
        cp "$tmp/$n-split/format.safetensors" "$c/format/$n-split.safetensors"
    done
    "$st" -q tune "$tmp/a.mtx" --budget 0 --max-candidates 6 --db "$c/db/tuning.db" \
      -o "$tmp/t" >/dev/null 2>&1 || true
    rm -f "$c/db/"*-wal "$c/db/"*-shm
    rm -rf "$tmp"
  else
    echo "fuzz: no $st: the format and db corpora start from nothing" >&2
  fi
}

# run_target TARGET RUNS SECONDS: RUNS (0: unbounded) executions over $jobs processes, or SECONDS.
run_target() {
  local t=$1 runs=$2 seconds=$3 bin=${FUZZ_BIN:-$build/tests/fuzz}
  local corpus="$build/fuzz-corpus/$t" logs="$build/fuzz-logs/$t" artifacts="$build/fuzz-artifacts"
  mkdir -p "$corpus" "$logs" "$artifacts"
  rm -f "$logs"/*.log
  local limit=(-max_total_time="$seconds")
  [ "$runs" -gt 0 ] && limit=(-runs=$(( (runs + jobs - 1) / jobs )))
  local dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  local max_len=4096
  case $t in format|db|safetensors) max_len=65536 ;; esac
  local rc=0
  (cd "$logs" && ASAN_OPTIONS=detect_leaks=1 "$OLDPWD/$bin/fuzz_$t" "$OLDPWD/$corpus" "${limit[@]}" \
    -jobs="$jobs" -workers="$jobs" -max_len="$max_len" -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 "${dict[@]/#-dict=/-dict=$OLDPWD/}" -artifact_prefix="$OLDPWD/$artifacts/$t-" \
    >"$OLDPWD/$logs/main.txt" 2>&1) || rc=$?
  local execs units found
  execs=$(cat "$logs"/fuzz-*.log 2>/dev/null | sed -n 's/^stat::number_of_executed_units: *//p' |
    awk '{s += $1} END {print s + 0}')
  units=$(cat "$logs"/fuzz-*.log 2>/dev/null | sed -n 's/^stat::new_units_added: *//p' |
    awk '{s += $1} END {print s + 0}')
  found=$(ls "$artifacts" 2>/dev/null | grep -c "^$t-" || true)
  if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ] || grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|deadly signal" "$logs"/*.log 2>/dev/null; then
    echo "fuzz: $t executions $execs new-units $units FOUND (rc $rc; see $logs and $artifacts)"
    return 1
  fi
  echo "fuzz: $t executions $execs new-units $units OK"
}

do_run() {
  local runs=0 seconds=60 targets=()
  while [ $# -gt 0 ]; do
    case $1 in
      --runs) runs=$2; shift 2 ;;
      --seconds) seconds=$2; shift 2 ;;
      --jobs) jobs=$2; shift 2 ;;
      *) targets+=("$1"); shift ;;
    esac
  done
  [ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
  local status=0
  for t in "${targets[@]}"; do run_target "$t" "$runs" "$seconds" || status=1; done
  return $status
}

case "${1:-}" in
  build) shift; t=("$@"); [ ${#t[@]} -gt 0 ] || t=("${all_targets[@]}"); do_build "${t[@]}" ;;
  corpus) do_corpus ;;
  run) shift; do_run "$@" ;;
  *)
    seconds=${1:-60}
    shift || true
    t=("$@")
    [ ${#t[@]} -gt 0 ] || t=("${all_targets[@]}")
    do_build "${t[@]}"
    do_corpus
    do_run --seconds "$seconds" "${t[@]}"
    ;;
esac
