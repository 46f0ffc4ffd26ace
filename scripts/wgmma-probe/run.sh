#!/usr/bin/env bash
# Builds the wgmma probe (probe.cu) for sm_90a and runs it: both kernels checked against the
# fp64 reference and timed on the built-in configurations, one line per (configuration, kernel)
# and a table at the end. Needs only nvcc (CUDA 12.x or 13.x) and an H100 / H200.
#
#   scripts/wgmma-probe/run.sh [OUT_DIR [ROWS CMIN CMAX DENSITY NCOLS]]
#
# OUT_DIR (default /tmp) receives the binary wgmma-probe. The optional five numbers replace the
# built-in list by one configuration. WGMMA_GROUP=1|2|4 forces the wgmma commit-group size.
# Exit status: the probe's (0 all PASS, 1 a verification failed, 2 no usable device or build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp}
shift || true
mkdir -p "$out"

nvcc=${NVCC:-}
if [[ -z $nvcc ]]; then
  if command -v nvcc >/dev/null; then nvcc=nvcc; else nvcc=/usr/local/cuda/bin/nvcc; fi
fi

# The -gencode form builds only the sm_90a image (the -arch=sm_90a shorthand also runs a plain
# compute_90 pass, in which the wgmma code is compiled out).
"$nvcc" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
  -o "$out/wgmma-probe" "$here/probe.cu" || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader \
  2>/dev/null || true
exec "$out/wgmma-probe" "$@"
