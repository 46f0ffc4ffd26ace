#!/usr/bin/env bash
# Builds the libFuzzer targets of the input readers with clang-14 (AddressSanitizer and
# UndefinedBehaviorSanitizer) into build-fuzz, then runs each for a bounded time on a corpus
# seeded from tests/data. Findings are written to build-fuzz/fuzz-artifacts/; the script exits
# non-zero when any target found one.
# usage: scripts/fuzz.sh [SECONDS per target, default 60] [target ...]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(mtx tns safetensors)
build=${SPARSETUNE_FUZZ_BUILD:-build-fuzz}
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/install-packages.sh clang-14 libclang-rt-14-dev $(grep -v '^#' scripts/debian-packages.txt)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DSPARSETUNE_BUILD_FUZZERS=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
rm -f "$build.configure.log"
cmake --build "$build" -j"$jobs" --target "${targets[@]/#/fuzz_}"

declare -A seeds=([mtx]="*.mtx *.mtx.gz" [tns]="*.tns *.tns.gz" [safetensors]="*.safetensors")
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  for pattern in ${seeds[$t]}; do
    for f in tests/data/$pattern; do [ -e "$f" ] && cp -f "$f" "$corpus/"; done
  done
  echo "fuzz: $t for ${seconds}s"
  if ! "$build/tests/fuzz/fuzz_$t" "$corpus" -max_total_time="$seconds" -max_len=4096 \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -dict="tests/fuzz/$t.dict" \
      -artifact_prefix="$artifacts/$t-" 2>"$build/fuzz-$t.log"; then
    echo "fuzz: $t FOUND A FAILURE (see $build/fuzz-$t.log and $artifacts/)" >&2
    tail -40 "$build/fuzz-$t.log" >&2
    status=1
  else
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build/fuzz-$t.log" |
      sed "s/^/fuzz: $t /"
  fi
done
exit $status
