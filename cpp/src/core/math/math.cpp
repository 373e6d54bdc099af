#include "core/math/math_impl.hpp"

namespace tl {

MathFn parse_math_fn(const std::string& name) {
  if (name == "exp") return MathFn::Exp;
  if (name == "expm1") return MathFn::Expm1;
  if (name == "log") return MathFn::Log;
  if (name == "log1p") return MathFn::Log1p;
  if (name == "tanh") return MathFn::Tanh;
  if (name == "sigmoid") return MathFn::Sigmoid;
  if (name == "sin") return MathFn::Sin;
  if (name == "cos") return MathFn::Cos;
  if (name == "erf") return MathFn::Erf;
  throw ValueError("unknown function '" + name +
                   "': expected one of exp, expm1, log, log1p, tanh, sigmoid, sin, cos, erf");
}

RowFn parse_row_fn(const std::string& name) {
  if (name == "logsumexp") return RowFn::LogSumExp;
  if (name == "softmax") return RowFn::Softmax;
  if (name == "log_softmax") return RowFn::LogSoftmax;
  throw ValueError("unknown row function '" + name + "': expected one of logsumexp, softmax, log_softmax");
}

template <class T>
void math_apply(const Context& ctx, MathFn fn, VectorView<const T> x, VectorView<T> out) {
  TL_REQUIRE(x.size == out.size, ValueError, "math_apply: x has ", x.size, " elements but out has ", out.size);
  check_placement(ctx, x, "x");
  check_placement(ctx, out, "out");
  if (x.size == 0) return;
  ctx.dispatch([&] { detail::math_apply_cpu(ctx, fn, x, out); }, [&] { detail::math_apply_cuda(ctx, fn, x, out); });
}

template <class T>
void math_pow(const Context& ctx, VectorView<const T> x, VectorView<const T> y, VectorView<T> out) {
  TL_REQUIRE(x.size == out.size && y.size == out.size, ValueError, "math_pow: x, y and out have ", x.size, ", ",
             y.size, " and ", out.size, " elements");
  check_placement(ctx, x, "x");
  check_placement(ctx, y, "y");
  check_placement(ctx, out, "out");
  if (x.size == 0) return;
  ctx.dispatch([&] { detail::math_pow_cpu(ctx, x, y, out); }, [&] { detail::math_pow_cuda(ctx, x, y, out); });
}

template <class T>
void math_rows(const Context& ctx, RowFn fn, MatrixView<const T> X, MatrixView<T> out) {
  const std::int64_t want_cols = fn == RowFn::LogSumExp ? 1 : X.cols;
  TL_REQUIRE(out.rows == X.rows && out.cols == want_cols, ValueError, "math_rows: out has shape (", out.rows, ", ",
             out.cols, ") but (", X.rows, ", ", want_cols, ") is needed");
  check_placement(ctx, X, "X");
  check_placement(ctx, out, "out");
  if (X.rows == 0) return;
  ctx.dispatch([&] { detail::math_rows_cpu(ctx, fn, X, out); }, [&] { detail::math_rows_cuda(ctx, fn, X, out); });
}

#define TL_INSTANTIATE(T)                                                                              \
  template void math_apply<T>(const Context&, MathFn, VectorView<const T>, VectorView<T>);            \
  template void math_pow<T>(const Context&, VectorView<const T>, VectorView<const T>, VectorView<T>); \
  template void math_rows<T>(const Context&, RowFn, MatrixView<const T>, MatrixView<T>);
TL_INSTANTIATE(float)
TL_INSTANTIATE(double)
#undef TL_INSTANTIATE

}  // namespace tl
