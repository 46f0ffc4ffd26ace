#!/usr/bin/env bash
# Installs what sparsetune needs from Debian's packages (only what is missing), checks the CUDA
# toolkit, and configures and builds the project into ./build.
# usage: scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ pkg-config libcli11-dev nlohmann-json3-dev libspdlog-dev catch2
          libxgboost-dev libfast-float-dev zlib1g-dev libsqlite3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

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
