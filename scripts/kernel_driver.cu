// Runs one emitted kernel as a user's program would: kernel.h loads format.safetensors, x comes
// from x.f64 (written by `emit-kernel --reference`), y is checked against y_reference.f64 by its
// relative L2 error (also alpha A x + beta y for alpha = -2, beta = 0 on a NaN-poisoned y and for
// alpha = 0.5, beta = -1.5), then timed (median of 25 runs after 5 warm-ups, CUDA events). Build it beside kernel.cu:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o run kernel.cu kernel_driver.cu
// The same checks run through kernel.h's Graph. Prints "OK|FAIL err <relative L2 error> ms
// <median ms> graph_ms <median ms through Graph> warm_ms <ms> warm_graph_ms <ms>" (warm: 100
// back-to-back runs timed together).
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernel.h"

static std::vector<double> read_f64(const char* path) {
  std::vector<double> v;
  if (std::FILE* f = std::fopen(path, "rb")) {
    double d;
    while (std::fread(&d, sizeof d, 1, f) == 1) v.push_back(d);
    std::fclose(f);
  }
  return v;
}

int main() {
  using namespace sparsetune_kernel;
  Format f;
  if (load("format.safetensors", &f) != cudaSuccess) {
    std::printf("FAIL load\n");
    return 1;
  }
  const auto x = read_f64("x.f64"), yref = read_f64("y_reference.f64");
  if (static_cast<long long>(x.size()) != kCols || static_cast<long long>(yref.size()) != kRows) {
    std::printf("FAIL no reference vectors (emit-kernel --reference)\n");
    return 1;
  }
  std::vector<value_t> xv(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if constexpr (sizeof(value_t) == 2) {
      const __half h = __float2half(static_cast<float>(x[i]));
      std::memcpy(&xv[i], &h, 2);
    } else {
      xv[i] = static_cast<value_t>(x[i]);
    }
  }
  value_t* dx = nullptr;
  result_t* dy = nullptr;
  cudaMalloc(&dx, sizeof(value_t) * std::max<std::size_t>(1, x.size()));
  cudaMalloc(&dy, sizeof(result_t) * std::max<long long>(1, kRows));
  cudaMemcpy(dx, xv.data(), sizeof(value_t) * x.size(), cudaMemcpyHostToDevice);
  cudaMemset(dy, 0xff, sizeof(result_t) * std::max<long long>(1, kRows));  // poisoned
  cudaError_t e = run(f, dx, dy);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("FAIL cuda %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::vector<result_t> y(kRows);
  cudaMemcpy(y.data(), dy, sizeof(result_t) * kRows, cudaMemcpyDeviceToHost);
  // Relative L2 error of y against alpha * yref + beta * y0.
  auto error = [&](const std::vector<result_t>& out, double alpha, double beta,
                   const std::vector<result_t>& y0) {
    double num = 0, den = 0;
    for (long long i = 0; i < kRows; ++i) {
      const double want = alpha * yref[i] + (beta != 0 ? beta * y0[i] : 0.0);
      num += (out[i] - want) * (out[i] - want);
      den += want * want;
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  };
  double err = error(y, 1.0, 0.0, y);
  // alpha = -2, beta = 0 on a poisoned y (never read), then alpha = 0.5, beta = -1.5 on y = A x.
  cudaMemset(dy, 0xff, sizeof(result_t) * std::max<long long>(1, kRows));
  run(f, dx, dy, result_t(-2), result_t(0));
  std::vector<result_t> y2(kRows), y3(kRows);
  cudaMemcpy(y2.data(), dy, sizeof(result_t) * kRows, cudaMemcpyDeviceToHost);
  err = std::max(err, error(y2, -2.0, 0.0, y2));
  cudaMemcpy(dy, y.data(), sizeof(result_t) * kRows, cudaMemcpyHostToDevice);
  run(f, dx, dy, result_t(0.5), result_t(-1.5));
  cudaMemcpy(y3.data(), dy, sizeof(result_t) * kRows, cudaMemcpyDeviceToHost);
  err = std::max(err, error(y3, 0.5, -1.5, y));
  // The same three cases through kernel.h's Graph (captured, then replayed).
  Graph graph;
  cudaMemset(dy, 0xff, sizeof(result_t) * std::max<long long>(1, kRows));
  graph.run(f, dx, dy);
  graph.run(f, dx, dy);  // a replay
  cudaMemcpy(y2.data(), dy, sizeof(result_t) * kRows, cudaMemcpyDeviceToHost);
  err = std::max(err, error(y2, 1.0, 0.0, y2));
  cudaMemset(dy, 0xff, sizeof(result_t) * std::max<long long>(1, kRows));
  graph.run(f, dx, dy, result_t(-2), result_t(0));
  cudaMemcpy(y2.data(), dy, sizeof(result_t) * kRows, cudaMemcpyDeviceToHost);
  err = std::max(err, error(y2, -2.0, 0.0, y2));
  cudaMemcpy(dy, y.data(), sizeof(result_t) * kRows, cudaMemcpyHostToDevice);
  graph.run(f, dx, dy, result_t(0.5), result_t(-1.5));
  cudaMemcpy(y3.data(), dy, sizeof(result_t) * kRows, cudaMemcpyDeviceToHost);
  err = std::max(err, error(y3, 0.5, -1.5, y));
  if (cudaGetLastError() != cudaSuccess) err = INFINITY;
  if (!std::isfinite(err)) err = INFINITY;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  // Median of 25 single runs, and warm: 100 back-to-back runs timed together, per run.
  auto median_single = [&](auto&& call) {
    for (int i = 0; i < 5; ++i) call();
    std::vector<float> t;
    for (int i = 0; i < 25; ++i) {
      cudaEventRecord(a);
      call();
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  auto warm = [&](auto&& call) {
    cudaEventRecord(a);
    for (int i = 0; i < 100; ++i) call();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms / 100;
  };
  auto plain = [&] { run(f, dx, dy); };
  auto graphed = [&] { graph.run(f, dx, dy); };
  const double ms = median_single(plain);
  const double graph_ms = median_single(graphed);
  const double warm_ms = warm(plain), warm_graph_ms = warm(graphed);
  const double tol = sizeof(value_t) == 8 ? 1e-12 : sizeof(value_t) == 4 ? 1e-5 : 1e-2;
  const bool ok = std::isfinite(err) && err <= tol;
  std::printf("%s err %.3e ms %.4f graph_ms %.4f warm_ms %.4f warm_graph_ms %.4f\n",
              ok ? "OK" : "FAIL", err, ms, graph_ms, warm_ms, warm_graph_ms);
  release(&f);
  return ok ? 0 : 2;
}
