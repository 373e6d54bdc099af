// Validation and dispatch of the fixed-point accumulation (twinlearn/core/fixed_point.hpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/fixed_point/fixed_point_common.hpp"
#include "twinlearn/core/reduce.hpp"

namespace tl {

FixedScale fixed_point_scale(double max_abs, std::int64_t n) {
  TL_REQUIRE(std::isfinite(max_abs) && max_abs >= 0.0, ValueError,
             "fixed_point_scale: max_abs must be finite and >= 0, got ", max_abs);
  const int L = fixed_value_bits(n);
  FixedScale s;
  if (max_abs == 0.0) {
    s.exponent = L;
    return s;
  }
  int e = 0;
  std::frexp(max_abs, &e);  // max_abs = f * 2^e, 0.5 <= f < 1, so max_abs < 2^e
  s.exponent = std::clamp(L - e, -kFixedMaxExponent, kFixedMaxExponent);
  return s;
}

template <class T>
FixedScale fixed_point_scale_for(const Context& ctx, MatrixView<const T> values) {
  TL_REQUIRE(values.rows >= 0 && values.cols >= 0, ValueError, "values: negative shape");
  double max_abs = 0.0;
  if (!values.empty()) {
    std::vector<T> lo(static_cast<std::size_t>(values.cols)), hi(static_cast<std::size_t>(values.cols));
    column_min<T>(ctx, values, lo.data());
    column_max<T>(ctx, values, hi.data());
    for (std::int64_t j = 0; j < values.cols; ++j) {
      TL_REQUIRE(std::isfinite(lo[j]) && std::isfinite(hi[j]), ValueError,
                 "fixed-point accumulation needs finite values; column ", j, " has NaN or infinity");
      max_abs = std::max(max_abs, std::max(std::fabs(static_cast<double>(lo[j])), std::fabs(static_cast<double>(hi[j]))));
    }
  }
  return fixed_point_scale(max_abs, values.rows);
}

namespace detail {
[[noreturn]] void throw_fixed_histogram_error(int code, std::int64_t rows, FixedScale scale) {
  if (code & kFixedBinOutOfRange) throw ValueError("fixed_histogram: a bin index is outside [0, n_bins)");
  throw ValueError(concat("fixed_histogram: a value is not finite or is too large for the scale: with ", rows,
                          " rows and exponent k = ", scale.exponent, " every |x| * 2^k must be below 2^",
                          fixed_value_bits(rows), " so that int64 sums cannot overflow; use a smaller exponent "
                          "(fixed_point_scale)"));
}
}  // namespace detail

template <class T>
void fixed_histogram(const Context& ctx, MatrixView<const T> values, VectorView<const std::int32_t> bins,
                     std::int64_t n_bins, FixedScale scale, std::int64_t* out) {
  TL_REQUIRE(values.rows >= 0 && values.cols >= 0, ValueError, "values: negative shape");
  TL_REQUIRE(bins.size == values.rows, ValueError, "bins has ", bins.size, " entries but values has ", values.rows,
             " rows");
  TL_REQUIRE(n_bins >= 0 && n_bins <= INT32_MAX, ValueError, "n_bins must be in [0, 2^31), got ", n_bins);
  TL_REQUIRE(values.rows == 0 || n_bins > 0, ValueError, "n_bins must be positive");
  TL_REQUIRE(scale.exponent >= -kFixedMaxExponent && scale.exponent <= kFixedMaxExponent, ValueError,
             "fixed-point exponent must be in [-", kFixedMaxExponent, ", ", kFixedMaxExponent, "], got ",
             scale.exponent);
  TL_REQUIRE(out != nullptr || n_bins * values.cols == 0, ValueError, "no output buffer");
  TL_REQUIRE((values.data != nullptr || values.empty()) && (bins.data != nullptr || bins.size == 0), ValueError,
             "no data");
  check_placement(ctx, values, "values");
  check_placement(ctx, bins, "bins");
  std::fill(out, out + n_bins * values.cols, std::int64_t(0));
  if (values.rows == 0 || values.cols == 0) return;
  ctx.dispatch([&] { detail::fixed_histogram_cpu<T>(ctx, values, bins, n_bins, scale, out); },
               [&] { detail::fixed_histogram_cuda<T>(ctx, values, bins, n_bins, scale, out); });
}

template FixedScale fixed_point_scale_for<float>(const Context&, MatrixView<const float>);
template FixedScale fixed_point_scale_for<double>(const Context&, MatrixView<const double>);
template void fixed_histogram<float>(const Context&, MatrixView<const float>, VectorView<const std::int32_t>,
                                     std::int64_t, FixedScale, std::int64_t*);
template void fixed_histogram<double>(const Context&, MatrixView<const double>, VectorView<const std::int32_t>,
                                      std::int64_t, FixedScale, std::int64_t*);

}  // namespace tl
