// Borders of a fit with row weights, shared by the CPU and CUDA backends of
// the gradient-boosted trees: host code over a host matrix, run by both, so
// the borders are the same bits on either.
//
// The unweighted rule (compute_borders, gbdt::select_borders) on the sorted
// non-NaN sample v[0..m): every boundary when there are at most max_borders,
// else for j = 1..max_borders the first boundary position p (the number of
// values below it) with p >= floor(j * m / (max_borders + 1)), that is
// (p + 1) * (max_borders + 1) > j * m. Weighted, a row of weight w counts as
// w rows: rows of weight 0 are left out (their values and their NaN), p is
// the weight below the boundary, m the total weight W, and the unit 1 is
// u = min(1, W / m_pos) (m_pos rows of positive weight):
//   (p_w + u) * (max_borders + 1) > j * W.
// With whole-number weights u = 1 and every quantity is an exact integer, so
// the borders are exactly those of the data with each row repeated w times
// (and weights of 1 give the unweighted borders); with weights whose mean is
// below 1, u is that mean, so scaling such weights does not starve the
// quantiles.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "ensemble/gbdt/gbdt_math.hpp"
#include "ensemble/gbdt/gbdt_splits.hpp"
#include "twinlearn/core/array.hpp"

namespace tl::gbdt {

// Feature f's borders from the host matrix X and the row weights w (finite,
// >= 0), written to out (kMaxBordersPadded slots; the caller fills the rest
// with +inf): the sample rows are compute_borders's, NaN gets its own border
// where a row of positive weight holds NaN (nan_mode Min and Learned:
// -infinity first, Max: +infinity last). Returns the number of borders.
template <class T>
int weighted_feature_borders(MatrixView<const T> X, const double* w, std::int64_t f, int border_count,
                             GbdtNanMode nan_mode, double* out) {
  const std::int64_t n = X.rows;
  bool has_nan = false;
  for (std::int64_t i = 0; i < n && !has_nan; ++i) has_nan = w[i] > 0.0 && num::is_nan(X(i, f));
  const std::int64_t S = std::min<std::int64_t>(n, kBorderSample);
  // (value, weight) of the sample's rows of positive weight, sorted: the
  // sorted array is unique (keys are canonical), so are the sums below.
  std::vector<std::pair<double, double>> vw;
  vw.reserve(static_cast<std::size_t>(S));
  for (std::int64_t k = 0; k < S; ++k) {
    const std::int64_t row = n <= kBorderSample ? k : k * n / S;
    const double x = canonical_key(static_cast<double>(X(row, f)));
    if (!num::is_nan(x) && w[row] > 0.0) vw.emplace_back(x, w[row]);
  }
  std::sort(vw.begin(), vw.end());
  const std::int64_t m = static_cast<std::int64_t>(vw.size());
  // Distinct values and, for each boundary (a value above its predecessor),
  // the weight of the values below it, summed in sorted order.
  std::vector<double> below;
  std::vector<std::int64_t> at;  // index in vw of the boundary's first value
  double W = 0.0;
  for (std::int64_t i = 0; i < m; ++i) {
    if (i > 0 && vw[i - 1].first < vw[i].first) {
      below.push_back(W);
      at.push_back(i);
    }
    W = num::add(W, vw[i].second);
  }
  const std::int64_t nb = static_cast<std::int64_t>(at.size());
  const int maxb = has_nan ? std::min(border_count, kMaxBordersPadded - 2) : border_count;
  const bool nan_low = nan_mode != GbdtNanMode::Max;
  double* dst = has_nan && nan_low ? out + 1 : out;
  int c = 0;
  auto border = [&](std::int64_t k) { return midpoint(vw[at[k] - 1].first, vw[at[k]].first); };
  if (nb <= maxb) {
    for (std::int64_t k = 0; k < nb; ++k) dst[c++] = border(k);
  } else {
    const double u = std::min(1.0, num::div(W, static_cast<double>(m)));
    const double slots = static_cast<double>(maxb + 1);
    std::int64_t last = -1;
    for (int j = 1; j <= maxb; ++j) {
      const double target = num::mul(static_cast<double>(j), W);
      // first boundary k with (below[k] + u) * slots > target (below increasing)
      std::int64_t lo = 0, hi = nb;
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (num::mul(num::add(below[mid], u), slots) > target)
          hi = mid;
        else
          lo = mid + 1;
      }
      if (lo >= nb) break;
      if (lo > last) {
        dst[c++] = border(lo);
        last = lo;
      }
    }
  }
  return has_nan ? add_nan_border(out, c, nan_low) : c;
}

}  // namespace tl::gbdt
