#include <cstring>

#include "preprocessing/normalizer/normalizer_common.hpp"

namespace tl {

RowNorm parse_row_norm(const char* s) {
  if (std::strcmp(s, "l1") == 0) return RowNorm::L1;
  if (std::strcmp(s, "l2") == 0) return RowNorm::L2;
  if (std::strcmp(s, "max") == 0) return RowNorm::Max;
  throw ValueError(std::string("norm must be 'l1', 'l2' or 'max'; got '") + s + "'");
}

template <class T>
void normalizer_apply(const Context& ctx, MatrixView<const T> X, RowNorm norm, MatrixView<T> out) {
  TL_REQUIRE(X.rows == out.rows && X.cols == out.cols, ValueError, "Normalizer: output shape (", out.rows, ", ",
             out.cols, ") does not match input shape (", X.rows, ", ", X.cols, ")");
  TL_REQUIRE(norm == RowNorm::L1 || norm == RowNorm::L2 || norm == RowNorm::Max, ValueError,
             "Normalizer: unknown norm");
  check_placement(ctx, X, "X");
  check_placement(ctx, out, "out");
  if (X.empty()) return;
  ctx.dispatch([&] { detail::normalizer_apply_cpu(ctx, X, norm, out); },
               [&] { detail::normalizer_apply_cuda(ctx, X, norm, out); });
}

template void normalizer_apply<float>(const Context&, MatrixView<const float>, RowNorm, MatrixView<float>);
template void normalizer_apply<double>(const Context&, MatrixView<const double>, RowNorm, MatrixView<double>);

}  // namespace tl
