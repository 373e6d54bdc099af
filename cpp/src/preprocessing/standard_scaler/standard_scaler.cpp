#include "preprocessing/standard_scaler/standard_scaler_common.hpp"

namespace tl {

template <class T>
std::int64_t standard_scaler_apply(const Context& ctx, MatrixView<const T> X, const double* mean, const double* scale,
                           MatrixView<T> out, bool inverse) {
  TL_REQUIRE(X.rows == out.rows && X.cols == out.cols, ValueError, "StandardScaler: output shape (", out.rows, ", ",
             out.cols, ") does not match input shape (", X.rows, ", ", X.cols, ")");
  check_placement(ctx, X, "X");
  check_placement(ctx, out, "out");
  if (X.empty()) return 0;
  return ctx.dispatch([&] { return detail::standard_scaler_apply_cpu(ctx, X, mean, scale, out, inverse); },
               [&] { return detail::standard_scaler_apply_cuda(ctx, X, mean, scale, out, inverse); });
}

template std::int64_t standard_scaler_apply<float>(const Context&, MatrixView<const float>, const double*, const double*,
                                           MatrixView<float>, bool);
template std::int64_t standard_scaler_apply<double>(const Context&, MatrixView<const double>, const double*, const double*,
                                            MatrixView<double>, bool);

}  // namespace tl
