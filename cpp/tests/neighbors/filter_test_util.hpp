// Helpers of the host tests of the tensor-core filters' rules
// (KMeansCertify, KnnCertify): the canonical values the filter values are
// placed around, and how far they may be placed.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/distance/distance_common.hpp"

namespace tltest {

// Squared norms of the rows of A (row-major, d features) into out; returns
// the largest.
inline float row_sqnorms(const std::vector<float>& A, std::int64_t d, std::vector<float>& out) {
  const std::int64_t rows = static_cast<std::int64_t>(A.size()) / d;
  out.assign(static_cast<std::size_t>(rows), 0.0f);
  float mx = 0.0f;
  for (std::int64_t r = 0; r < rows; ++r) {
    out[r] = tl::dist::sqnorm(&A[r * d], d);
    mx = std::max(mx, out[r]);
  }
  return mx;
}

// x's canonical squared distances to the rows of B (norms bn): value as the
// CPU's chain gives it (sq_from_dot, clamped at 0) and unclamped, the
// chain's |x|² + |b|² - 2 x·b, from which the filter's values are placed.
inline void canonical_sq_rows(const float* x, float xn, const std::vector<float>& B, const std::vector<float>& bn,
                              std::int64_t d, std::vector<float>& value, std::vector<float>& unclamped) {
  const std::size_t rows = bn.size();
  value.resize(rows);
  unclamped.resize(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const float dot = tl::dist::accumulate<float, tl::dist::Family::Dot>(x, &B[r * d], d, 0.0f);
    unclamped[r] = tl::num::sub(tl::num::add(xn, bn[r]), tl::num::mul(2.0f, dot));
    value[r] = tl::dist::sq_from_dot(xn, bn[r], dot);
  }
}

// How far from the canonical values the tests place filter values: just
// inside the bound E for norms xn and bn_max (1 - 2^-6 of it, so that their
// own rounding to float stays within the rest).
inline double placed_slack(float xn, float bn_max) {
  return tl::dist::kFilterSlack * (static_cast<double>(xn) + bn_max) * (1.0 - 0x1p-6);
}

}  // namespace tltest
