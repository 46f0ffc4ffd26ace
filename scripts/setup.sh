#!/usr/bin/env bash
# Installs what sparsetune needs from Debian's packages (only what is missing), checks the CUDA
# toolkit, and configures and builds the project into ./build.
# usage: scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-packages.sh $(grep -v '^#' scripts/debian-packages.txt)

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda_runtime.h" ] || ! ls "$cuda"/lib64/libnvrtc.so* >/dev/null 2>&1; then
  echo "setup: the CUDA toolkit (headers, NVRTC, cuSPARSE) was not found under $cuda." >&2
  echo "setup: install the CUDA Toolkit there or set CUDA_HOME; no GPU is needed to build." >&2
  exit 1
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$cuda" "$@" >build-configure.log 2>&1 ||
  { cat build-configure.log >&2; exit 1; }
rm -f build-configure.log
cmake --build build -j"$jobs"
