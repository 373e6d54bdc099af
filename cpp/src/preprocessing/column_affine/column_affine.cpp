#include "preprocessing/column_affine/column_affine_common.hpp"

namespace tl {

template <class T>
std::int64_t column_affine_apply(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                 MatrixView<T> out) {
  TL_REQUIRE(X.rows == out.rows && X.cols == out.cols, ValueError, "column_affine_apply: output shape (", out.rows,
             ", ", out.cols, ") does not match input shape (", X.rows, ", ", X.cols, ")");
  TL_REQUIRE(!steps.clip || steps.clip_lo <= steps.clip_hi, ValueError, "column_affine_apply: clip range [",
             steps.clip_lo, ", ", steps.clip_hi, "] is empty");
  check_placement(ctx, X, "X");
  check_placement(ctx, out, "out");
  if (X.empty()) return 0;
  return ctx.dispatch([&] { return detail::column_affine_apply_cpu(ctx, X, steps, out); },
                      [&] { return detail::column_affine_apply_cuda(ctx, X, steps, out); });
}

template std::int64_t column_affine_apply<float>(const Context&, MatrixView<const float>, const ColumnAffine&,
                                                 MatrixView<float>);
template std::int64_t column_affine_apply<double>(const Context&, MatrixView<const double>, const ColumnAffine&,
                                                  MatrixView<double>);

}  // namespace tl
