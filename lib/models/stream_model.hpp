#pragma once
// IAP-SpTV §5.2: how many CUDA streams a slice set of one format is split over. With n streams,
// host-to-device copies, kernels and device-to-host copies of the n batches overlap; each stream
// costs λ (creation and launch overhead):
//   T(n) = TT_h2d/n + CT + TT_d2h/n + λn   when CT ≥ TT_h2d (computation dominates)   (20)
//   T(n) = TT_h2d + CT/n + TT_d2h/n + λn   otherwise (transfer dominates; also (21))
// T is convex in n (Theorem 1), minimal at n_opt = sqrt((TT_h2d + TT_d2h) / λ), resp.
// sqrt((CT + TT_d2h) / λ) (eq. 24); the integer answer is the better neighbour, in [1, N].
#include <cstdint>

namespace sparsetune::models {

struct StreamCosts {
  double h2d_s = 0;     // TT_h2d: the slice set's bytes over the host-to-device bandwidth
  double d2h_s = 0;     // TT_d2h: its results back
  double kernel_s = 0;  // CT: the kernels over the whole set
  double lambda_s = 0;  // λ: the overhead of one more stream (measured once per device)
};

double pipeline_time(const StreamCosts& c, double n);          // T(n), eq. (20)/(21)
double continuous_optimum(const StreamCosts& c);               // eq. (24); +inf when λ = 0
int best_stream_count(const StreamCosts& c, int max_streams);  // argmin over integers, eq. (22)

// Transfer time of `bytes` at `gbs` GB/s (1e9 bytes per second).
inline double transfer_s(double bytes, double gbs) { return gbs > 0 ? bytes / (gbs * 1e9) : 0.0; }

}  // namespace sparsetune::models
