// Exact order statistics per column: the k-th smallest value of a column,
// found by selection (CPU) or by a per-column radix sort (CUDA).
//
// Order (docs/NUMERICS.md, rule 6): values are compared through an unsigned
// integer key whose order is the IEEE total order with every NaN mapped to
// the largest key, so -0 < +0 and NaN sorts after +inf. Selection under a
// total order has one answer, so both backends return the same bits. Ranks
// below the number of non-NaN entries of a column therefore select among the
// non-NaN values only, which is what NaN-ignoring quantiles need.
#pragma once
#include <cstdint>
#include <cstring>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl {

namespace select_detail {

template <class T>
struct KeyType;
template <>
struct KeyType<float> {
  using type = std::uint32_t;
};
template <>
struct KeyType<double> {
  using type = std::uint64_t;
};
template <class T>
using key_t = typename KeyType<T>::type;

template <class T>
TL_HD key_t<T> bits_of(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    return static_cast<key_t<T>>(__float_as_uint(v));
  else
    return static_cast<key_t<T>>(__double_as_longlong(v));
#else
  key_t<T> b;
  std::memcpy(&b, &v, sizeof(T));
  return b;
#endif
}

template <class T>
TL_HD T from_bits(key_t<T> b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    return __uint_as_float(static_cast<unsigned int>(b));
  else
    return __longlong_as_double(static_cast<long long>(b));
#else
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
#endif
}

// Order-preserving key: negative values flip all bits, non-negative ones set
// the sign bit; NaN (any payload, any sign) becomes the largest key.
template <class T>
TL_HD key_t<T> to_key(T v) {
  using K = key_t<T>;
  constexpr K sign = K(1) << (sizeof(K) * 8 - 1);
  if (tl::num::is_nan(v)) return ~K(0);
  const K b = bits_of(v);
  return (b & sign) ? static_cast<K>(~b) : static_cast<K>(b | sign);
}

// Inverse of to_key; the largest key maps back to a (positive) NaN.
template <class T>
TL_HD T from_key(key_t<T> k) {
  using K = key_t<T>;
  constexpr K sign = K(1) << (sizeof(K) * 8 - 1);
  const K b = (k & sign) ? static_cast<K>(k & ~sign) : static_cast<K>(~k);
  return from_bits<T>(b);
}

}  // namespace select_detail

// For each r in [0, k) and column j: out[r * cols + j] = the ranks[r * cols + j]-th
// smallest entry (0-based) of column j of X under the key order above; a
// rank of -1 gives NaN. X: rows x cols, host or the context's device.
// ranks and out: k * cols entries, host memory. Ranks must lie in [-1, rows).
template <class T>
void column_select(const Context& ctx, MatrixView<const T> X, const std::int64_t* ranks, std::int64_t k, T* out);

}  // namespace tl
