#include "linear_model/linear_decision/linear_decision_common.hpp"

namespace tl {

template <class T>
std::int64_t linear_decision(const Context& ctx, MatrixView<const T> X, const T* coef, const T* intercept,
                             std::int64_t t, MatrixView<T> out) {
  TL_REQUIRE(t >= 0, ValueError, "linear_decision: negative number of targets");
  TL_REQUIRE(out.rows == X.rows && out.cols == t, ValueError, "linear_decision: output shape (", out.rows, ", ",
             out.cols, ") does not match (", X.rows, ", ", t, ")");
  TL_REQUIRE(coef != nullptr || t == 0 || X.cols == 0, ValueError, "linear_decision: no coefficients");
  check_placement(ctx, X, "X");
  check_placement(ctx, out, "out");
  if (X.rows == 0 || t == 0) return 0;
  return ctx.dispatch([&] { return detail::linear_decision_cpu(ctx, X, coef, intercept, t, out); },
                      [&] { return detail::linear_decision_cuda(ctx, X, coef, intercept, t, out); });
}

template std::int64_t linear_decision<float>(const Context&, MatrixView<const float>, const float*, const float*,
                                             std::int64_t, MatrixView<float>);
template std::int64_t linear_decision<double>(const Context&, MatrixView<const double>, const double*,
                                              const double*, std::int64_t, MatrixView<double>);

}  // namespace tl
