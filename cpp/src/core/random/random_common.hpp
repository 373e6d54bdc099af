// Pieces of the random-array algorithms shared by the CPU and CUDA backends:
// the canonical weighted CDF and the searches over it.
#pragma once
#include <cstdint>

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/random.hpp"
#include "twinlearn/core/rng.hpp"

namespace tl::detail {

inline std::int64_t cdf_num_chunks(std::int64_t n) { return (n + kCdfChunk - 1) / kCdfChunk; }

// Chunk c: writes the sequential inclusive prefix of w over the chunk into
// cdf and returns the chunk total.
template <class T>
TL_HD double cdf_chunk_prefix(const T* w, std::int64_t n, std::int64_t c, double* cdf) {
  const std::int64_t b = c * kCdfChunk;
  const std::int64_t e = b + kCdfChunk < n ? b + kCdfChunk : n;
  double s = 0.0;
  for (std::int64_t i = b; i < e; ++i) {
    s = tl::num::add(s, static_cast<double>(w[i]));
    cdf[i] = s;
  }
  return s;
}

// offsets[c] = totals[0] + ... + totals[c-1], sequentially.
TL_HD void cdf_offsets(const double* totals, std::int64_t nc, double* offsets) {
  double s = 0.0;
  for (std::int64_t c = 0; c < nc; ++c) {
    offsets[c] = s;
    s = tl::num::add(s, totals[c]);
  }
}

// First i in [0, n) with cdf[i] > t (strict) or >= t; n when none.
TL_HD std::int64_t first_above(const double* cdf, std::int64_t n, double t, bool strict) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const bool above = strict ? cdf[mid] > t : cdf[mid] >= t;
    if (above)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// Draw j of a weighted choice with replacement over a finished CDF.
TL_HD std::int64_t weighted_draw(const double* cdf, std::int64_t n, std::uint64_t seed, std::uint64_t stream,
                                 std::uint64_t j) {
  const double total = cdf[n - 1];
  const double t = tl::num::mul(rng::uniform<double>(seed, stream, j), total);
  std::int64_t i = first_above(cdf, n, t, true);
  if (i == n) i = first_above(cdf, n, total, false);
  return i;
}

}  // namespace tl::detail
