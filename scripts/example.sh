#!/usr/bin/env bash
# Sets up and builds, then runs sparsetune's main job on the example shipped with the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/apps/sparsetune/sparsetune info
./build/apps/sparsetune/sparsetune features docs/examples/poisson2d_16x16.mtx
