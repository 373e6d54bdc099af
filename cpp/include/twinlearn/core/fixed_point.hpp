// Exact fixed-point accumulation (docs/NUMERICS.md, rule 2).
//
// A value x is quantized to the integer q = round(x * 2^k), rounding half to
// even, for a scale exponent k; q * 2^-k is its fixed-point value. Integer
// addition is exact and associative, so sums of quantized values have the
// same bits in any order: on any number of threads, and on the GPU with
// atomicAdd. Only the quantization rounds, once per value, identically on
// both backends (x * 2^k is an exact product; the rounding is IEEE
// round-half-even, the default mode, which the library never changes).
//
// Overflow bound. For a sum of at most n values, let L = 62 - ceil(log2 n).
// Every value must satisfy |x| * 2^k < 2^L; then |q| <= 2^L and any sum of at
// most n of them has magnitude <= n * 2^L <= 2^62 < 2^63, so no partial sum
// can overflow int64 whatever the order. The accumulating functions check the
// bound for every value at run time and raise tl::ValueError when it (or
// finiteness) is violated. fixed_point_scale(max_abs, n) returns the largest
// k that satisfies the bound for values of magnitude up to max_abs.
#pragma once
#include <cstdint>
#include <cstring>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/math_bits.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl {

// q represents q * 2^-exponent.
struct FixedScale {
  int exponent = 0;
};

inline constexpr int kFixedTotalBits = 62;     // sums stay below 2^62 in magnitude
inline constexpr int kFixedMaxExponent = 2000;  // |exponent| <= this (2^k spans all doubles)

// ceil(log2(n)) for n >= 1 (0 for n <= 1).
inline int fixed_count_bits(std::int64_t n) {
  int b = 0;
  while (b < 63 && (std::int64_t(1) << b) < n) ++b;
  return b;
}

// L of the header comment: values must satisfy |x| * 2^k < 2^L.
inline int fixed_value_bits(std::int64_t n) { return kFixedTotalBits - fixed_count_bits(n); }

// The largest exponent k with max_abs * 2^k < 2^fixed_value_bits(n): the
// finest scale at which n values of magnitude <= max_abs sum without
// overflow. max_abs == 0 gives k = fixed_value_bits(n) (as for max_abs < 1).
// Raises tl::ValueError when max_abs is negative or not finite.
FixedScale fixed_point_scale(double max_abs, std::int64_t n);

// fixed_point_scale for the entries of values (rows x cols, host or device),
// summed into histograms of `rows` entries at most: max|x| computed with the
// canonical reductions. Raises tl::ValueError on NaN or infinite entries.
template <class T>
FixedScale fixed_point_scale_for(const Context& ctx, MatrixView<const T> values);

namespace fixed_detail {

// 2^e as a double, exact for -1022 <= e <= 1023.
TL_HD double pow2(int e) { return num::double_from_bits(static_cast<std::uint64_t>(e + 1023) << 52); }

// x * 2^k as two products by powers of two (|k| <= 2044). Exact whenever the
// result is a normal number; results below the normal range round to 0 when
// quantized either way, so the double rounding cannot be seen.
TL_HD double scaled(double x, int k) {
  const int a = k / 2, b = k - a;
  return num::mul(num::mul(x, pow2(a)), pow2(b));
}

TL_HD double abs(double x) { return x < 0.0 ? -x : x; }

}  // namespace fixed_detail

// x * 2^k within the bound |x * 2^k| < 2^value_bits (false for NaN or inf).
TL_HD bool fixed_in_range(double scaled_x, int value_bits) {
  return fixed_detail::abs(scaled_x) < fixed_detail::pow2(value_bits);
}

// round(x * 2^k) half to even; the caller has checked fixed_in_range.
TL_HD std::int64_t fixed_round(double scaled_x) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(scaled_x);
#else
  return static_cast<std::int64_t>(std::llrint(scaled_x));
#endif
}

TL_HD std::int64_t fixed_quantize(double x, FixedScale s) {
  return fixed_round(fixed_detail::scaled(x, s.exponent));
}

// q * 2^-k as a double (one rounding, to nearest, when |q| > 2^53).
TL_HD double fixed_dequantize(std::int64_t q, FixedScale s) {
#if defined(__CUDA_ARCH__)
  const double d = __ll2double_rn(q);
#else
  const double d = static_cast<double>(q);
#endif
  return fixed_detail::scaled(d, -s.exponent);
}

// Per-bin sums of quantized values.
//   values: rows x n_values (host or device), the values of each row
//   bins:   rows entries, int32 (host or device); row i goes to bin bins[i],
//           which must lie in [0, n_bins)
//   out:    n_bins x n_values int64, host memory, row-major:
//           out[b * n_values + v] = sum over rows i with bins[i] == b of
//           fixed_quantize(values(i, v), scale)
// The bound is applied with n = rows. Raises tl::ValueError for a bin out of
// range, a value that is not finite, or a value outside the bound.
template <class T>
void fixed_histogram(const Context& ctx, MatrixView<const T> values, VectorView<const std::int32_t> bins,
                     std::int64_t n_bins, FixedScale scale, std::int64_t* out);

}  // namespace tl
