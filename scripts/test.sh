#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs the whole test suite through ctest.
# [gpu] tests report "Skipped" when the machine has no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"
