#include "core/column_extrema/column_extrema_impl.hpp"

namespace tl {

template <class T>
void column_extrema(const Context& ctx, MatrixView<const T> X, ColExtrema* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0, ValueError, "column_extrema: negative shape");
  TL_REQUIRE(out != nullptr || X.cols == 0, ValueError, "column_extrema: no output buffer");
  check_placement(ctx, X, "X");
  if (X.cols == 0) return;
  if (X.rows == 0) {
    for (std::int64_t j = 0; j < X.cols; ++j) out[j] = extrema_detail::finish(ColExtrema{});
    return;
  }
  ctx.dispatch([&] { detail::column_extrema_cpu(ctx, X, out); }, [&] { detail::column_extrema_cuda(ctx, X, out); });
}

template void column_extrema<float>(const Context&, MatrixView<const float>, ColExtrema*);
template void column_extrema<double>(const Context&, MatrixView<const double>, ColExtrema*);

}  // namespace tl
