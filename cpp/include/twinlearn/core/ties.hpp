// Tie rules and value ordering (docs/NUMERICS.md, rule 6), shared by the CPU
// and CUDA backends.
//
// The value order used by every min/max/argmin/argmax/top-k/sort:
//   -inf < ... < -denormals < -0 == +0 < +denormals < ... < +inf < NaN
// -0 and +0 compare equal, and all NaNs compare equal to each other and
// greater than +inf. So argmin skips NaN unless every entry is NaN, and
// argmax returns the first NaN when there is one (as NumPy's argmax does).
//
// Ties are broken by index: the lowest index wins, for argmin and argmax
// alike, and a stable sort keeps equal values in index order (also when
// sorting in descending order). Because (value, index) pairs are totally
// ordered, argmin/argmax merges are associative and commutative: any
// reduction tree gives the same winner.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::ties {

// a before b in the value order (strict): NaN last, -0 == +0.
template <class T> TL_HD bool value_less(T a, T b) {
  if (tl::num::is_nan(a)) return false;
  if (tl::num::is_nan(b)) return true;
  return a < b;
}
template <class T> TL_HD bool value_equal(T a, T b) { return !value_less(a, b) && !value_less(b, a); }

// (a, ia) wins over (b, ib) for argmin: smaller value, then lower index.
template <class T> TL_HD bool argmin_better(T a, std::int64_t ia, T b, std::int64_t ib) {
  if (value_less(a, b)) return true;
  if (value_less(b, a)) return false;
  return ia < ib;
}
// (a, ia) wins over (b, ib) for argmax: larger value, then lower index.
template <class T> TL_HD bool argmax_better(T a, std::int64_t ia, T b, std::int64_t ib) {
  if (value_less(b, a)) return true;
  if (value_less(a, b)) return false;
  return ia < ib;
}

template <class T> struct ValueIndex {
  T value;
  std::int64_t index;  // -1: empty
};
// Merges for reductions; an empty side (index -1) loses.
template <class T> TL_HD ValueIndex<T> argmin_merge(ValueIndex<T> a, ValueIndex<T> b) {
  if (a.index < 0) return b;
  if (b.index < 0) return a;
  return argmin_better(a.value, a.index, b.value, b.index) ? a : b;
}
template <class T> TL_HD ValueIndex<T> argmax_merge(ValueIndex<T> a, ValueIndex<T> b) {
  if (a.index < 0) return b;
  if (b.index < 0) return a;
  return argmax_better(a.value, a.index, b.value, b.index) ? a : b;
}

// Index of the minimum / maximum of x[0], x[stride], ... (-1 when n == 0).
template <class T> TL_HD std::int64_t argmin(const T* x, std::int64_t n, std::int64_t stride = 1) {
  std::int64_t best = n > 0 ? 0 : -1;
  for (std::int64_t i = 1; i < n; ++i)
    if (argmin_better(x[i * stride], i, x[best * stride], best)) best = i;
  return best;
}
template <class T> TL_HD std::int64_t argmax(const T* x, std::int64_t n, std::int64_t stride = 1) {
  std::int64_t best = n > 0 ? 0 : -1;
  for (std::int64_t i = 1; i < n; ++i)
    if (argmax_better(x[i * stride], i, x[best * stride], best)) best = i;
  return best;
}

// IEEE 754 totalOrder as an unsigned key: -NaN < -inf < ... < -0 < +0 < ...
// < +inf < +NaN, NaNs ordered by payload. Distinguishes -0 from +0.
TL_HD std::uint32_t total_order_key(float x) {
  const std::uint32_t u = tl::num::to_bits(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
TL_HD std::uint64_t total_order_key(double x) {
  const std::uint64_t u = tl::num::to_bits(x);
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
// The value whose total_order_key is k (T = float or double).
template <class T> TL_HD T from_total_order_key(typename tl::num::math_detail::Fmt<T>::U k) {
  using F = tl::num::math_detail::Fmt<T>;
  return F::from((k & F::SIGN) ? (k & ~F::SIGN) : ~k);
}
// Key of the value order above: -0 maps to +0's key and every NaN to the
// largest key, so sorting by (sort_key, index) is the stable value-order sort.
TL_HD std::uint32_t sort_key(float x) {
  if (tl::num::is_nan(x)) return 0xffffffffu;
  return total_order_key(x == 0.0f ? 0.0f : x);
}
TL_HD std::uint64_t sort_key(double x) {
  if (tl::num::is_nan(x)) return 0xffffffffffffffffull;
  return total_order_key(x == 0.0 ? 0.0 : x);
}

// ---------------------------------------------------------------------------
// Host helpers
// ---------------------------------------------------------------------------
// Stable argsort of x[0..n) in the value order; descending puts larger values
// first but keeps equal values in increasing index order.
template <class T> std::vector<std::int64_t> stable_argsort(const T* x, std::int64_t n, bool descending = false) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), std::int64_t(0));
  if (descending)
    std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return value_less(x[b], x[a]); });
  else
    std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return value_less(x[a], x[b]); });
  return idx;
}

// The k best entries, best first: the largest (or smallest) values, ties by
// lowest index. Equal to the first k of stable_argsort(x, n, largest).
template <class T> std::vector<std::int64_t> top_k(const T* x, std::int64_t n, std::int64_t k, bool largest = true) {
  k = std::max<std::int64_t>(0, std::min(k, n));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), std::int64_t(0));
  auto better = [&](std::int64_t a, std::int64_t b) {
    return largest ? argmax_better(x[a], a, x[b], b) : argmin_better(x[a], a, x[b], b);
  };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), better);
  idx.resize(static_cast<std::size_t>(k));
  return idx;
}

}  // namespace tl::ties
