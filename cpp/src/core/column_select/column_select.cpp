#include "core/column_select/column_select_impl.hpp"

namespace tl {

template <class T>
void column_select(const Context& ctx, MatrixView<const T> X, const std::int64_t* ranks, std::int64_t k, T* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0 && k >= 0, ValueError, "column_select: negative shape");
  check_placement(ctx, X, "X");
  const std::int64_t n = k * X.cols;
  if (n == 0) return;
  TL_REQUIRE(ranks != nullptr && out != nullptr, ValueError, "column_select: no rank or output buffer");
  for (std::int64_t e = 0; e < n; ++e)
    TL_REQUIRE(ranks[e] >= -1 && ranks[e] < X.rows, ValueError, "column_select: rank ", ranks[e], " is outside [-1, ",
               X.rows, ")");
  ctx.dispatch([&] { detail::column_select_cpu(ctx, X, ranks, k, out); },
               [&] { detail::column_select_cuda(ctx, X, ranks, k, out); });
}

template void column_select<float>(const Context&, MatrixView<const float>, const std::int64_t*, std::int64_t, float*);
template void column_select<double>(const Context&, MatrixView<const double>, const std::int64_t*, std::int64_t,
                                    double*);

}  // namespace tl
