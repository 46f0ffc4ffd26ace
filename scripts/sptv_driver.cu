// Times an emitted SpTV folder's run() through its kernel.h, device-resident: the mode's vector
// fixed, the median and fastest of 50 runs after 5, y written to y.bin so that designs can be
// compared (scripts/bench-sptv-formats.sh). Built beside the folder's kernel.cu:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o drv kernel.cu sptv_driver.cu
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernel.h"
int main() {
  using namespace sparsetune_kernel;
  Format f;
  if (load("format.safetensors", &f) != cudaSuccess) {
    printf("FAIL load\n");
    return 1;
  }
  std::vector<float> hx(kCols);
  for (long long i = 0; i < kCols; ++i) hx[i] = 1.0f + (float)((i * 7919) % 97) / 97.0f;
  float *x, *y;
  cudaMalloc(&x, kCols * 4);
  cudaMalloc(&y, kRows * 4);
  cudaMemcpy(x, hx.data(), kCols * 4, cudaMemcpyHostToDevice);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 55; ++i) {
    cudaEventRecord(a);
    run(f, x, y);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 5) t.push_back(ms);
  }
  if (cudaGetLastError() != cudaSuccess) {
    printf("FAIL run\n");
    return 1;
  }
  std::sort(t.begin(), t.end());
  std::vector<float> hy(kRows);
  cudaMemcpy(hy.data(), y, kRows * 4, cudaMemcpyDeviceToHost);
  FILE* o = fopen("y.bin", "wb");
  fwrite(hy.data(), 4, kRows, o);
  fclose(o);
  double s = 0;
  for (float v : hy) s += v;
  printf("median %.4f ms  min %.4f  sum %.6e\n", t[t.size() / 2], t[0], s);
  return 0;
}
