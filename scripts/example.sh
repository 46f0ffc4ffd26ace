#!/usr/bin/env bash
# Sets up and builds, then runs sparsetune's main job on the example shipped with the repo: tune
# SpMV for a small 2D Poisson matrix (on a GPU it measures; without one it predicts with the cost
# model and says so), writing the format binary, kernel and report into build/poisson2d.tuned/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
st=./build/apps/sparsetune/sparsetune
$st info
$st features docs/examples/poisson2d_16x16.mtx --group alphasparse
$st tune docs/examples/poisson2d_16x16.mtx --force -o build/poisson2d.tuned
