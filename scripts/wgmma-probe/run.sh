#!/usr/bin/env bash
# Builds the wgmma probe (probe.cu) for sm_90a and runs it: both kernels checked against the
# fp64 reference and timed on the built-in configurations, one line per (configuration, kernel)
# and a table at the end. Needs only nvcc (CUDA 12.x or 13.x) and an H100 / H200.
#
#   scripts/wgmma-probe/run.sh [OUT_DIR [ROWS CMIN CMAX DENSITY NCOLS]]
#   scripts/wgmma-probe/run.sh OUT_DIR --cpu [ROWS CMIN CMAX DENSITY NCOLS]   (no GPU needed)
#
# OUT_DIR (default /tmp) receives the binary wgmma-probe. The optional five numbers replace the
# built-in list by one configuration. WGMMA_GROUP=1|2|4 forces the wgmma commit-group size.
# --cpu emulates both kernels on the CPU instead (index math and fragment mappings, probe.cu).
# Exit status: the probe's (0 all PASS, 1 a verification failed, 2 no usable device, a failed
# build or a failed SASS check).
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

# The SASS must not touch the registers of a wgmma in flight (sasscheck.py; ptxas of CUDA 13.0
# did, see "A registers" in probe.cu). Needs cuobjdump (next to nvcc, or CUOBJDUMP) and python3;
# skipped with a note where either is missing. WGMMA_SASS_CHECK=0 runs the probe despite a failure.
cuobjdump=${CUOBJDUMP:-$(dirname "$(command -v "$nvcc")")/cuobjdump}
if [[ -x $cuobjdump ]] && command -v python3 >/dev/null; then
  "$cuobjdump" -sass "$out/wgmma-probe" >"$out/wgmma-probe.sass"
  if ! python3 "$here/sasscheck.py" "$out/wgmma-probe.sass"; then
    echo "sasscheck: a wgmma's registers are accessed while it is in flight" >&2
    [[ ${WGMMA_SASS_CHECK:-1} == 0 ]] || exit 2
  fi
else
  echo "sasscheck: skipped (no cuobjdump at $cuobjdump, or no python3)" >&2
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader \
  2>/dev/null || true
exec "$out/wgmma-probe" "$@"
