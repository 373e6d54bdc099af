#include "core/column_stats/column_stats_impl.hpp"

namespace tl {

template <class T>
void column_stats(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0, ValueError, "column_stats: negative shape");
  TL_REQUIRE(out != nullptr || X.cols == 0, ValueError, "column_stats: no output buffer");
  check_placement(ctx, X, "X");
  if (w.data) {
    TL_REQUIRE(w.size == X.rows, ValueError, "sample_weight has ", w.size, " entries but X has ", X.rows, " rows");
    check_placement(ctx, w, "sample_weight");
  }
  ctx.dispatch([&] { detail::column_stats_cpu(ctx, X, w, out); },
               [&] { detail::column_stats_cuda(ctx, X, w, out); });
}

template void column_stats<float>(const Context&, MatrixView<const float>, VectorView<const float>, ColStat*);
template void column_stats<double>(const Context&, MatrixView<const double>, VectorView<const double>, ColStat*);

}  // namespace tl
