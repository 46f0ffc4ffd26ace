#pragma once
// Unstructured random matrices: Erdős–Rényi G(n, p) and power-law row lengths.
#include <cstdint>

#include "core/matrix.hpp"

namespace sparsetune::gen {

// G(n, p). Not symmetric: each of the n^2 positions (diagonal included) is present
// independently with probability p; E[nnz] = n^2 p. Symmetric: each pair i < j is present with
// probability p and stored both ways, no diagonal; E[nnz] = n (n - 1) p. Values uniform in
// (0, 1] (mirrored entries equal). Skip sampling makes it O(n + nnz).
struct ErdosRenyiParams {
  std::int64_t n = 10000;
  double p = 0.001;
  bool symmetric = false;
};
Csr64 erdos_renyi(const ErdosRenyiParams& p, std::uint64_t seed);

// n x cols matrix whose row lengths follow a power law; columns of a row are distinct and
// uniform at random, values uniform in (0, 1].
//  - degree == 0: lengths are drawn independently with P(k) ~ k^-exponent on
//    [min_length, max_length] (exponent >= 0; 0 = uniform lengths).
//  - degree > 0 (Chung–Lu): row i (before a random shuffle of the rows) expects
//    w_i = s (i + 1)^(-1 / (exponent - 1)) entries, s chosen so that the mean is `degree`,
//    realised as floor(w_i) plus one with probability frac(w_i), capped at cols (which lowers
//    the mean when the head row would exceed it). The tail of the length distribution then
//    falls as k^-exponent; needs exponent > 1.
struct PowerLawParams {
  std::int64_t n = 10000;
  std::int64_t cols = 0;  // 0: n
  double exponent = 2.5;
  std::int64_t min_length = 1;
  std::int64_t max_length = 0;  // 0: cols
  double degree = 0.0;
};
Csr64 power_law(const PowerLawParams& p, std::uint64_t seed);

// Expected mean and variance of the row length in the independent mode (degree == 0).
void power_law_moments(const PowerLawParams& p, double& mean, double& variance);

}  // namespace sparsetune::gen
