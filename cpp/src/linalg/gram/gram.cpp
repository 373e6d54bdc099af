// Validation and dispatch of tl::linalg::gram.
#include "linalg/gram/gram_impl.hpp"

namespace tl::linalg {

template <class T>
NumericMode gram(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset, MatrixView<T> G) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0, ValueError, "gram: negative shape");
  const std::int64_t n = X.rows, d = X.cols;
  TL_REQUIRE(G.rows == d && G.cols == d, ValueError, "gram: G must be ", d, " x ", d, ", got ", G.rows, " x ",
             G.cols);
  TL_REQUIRE((X.data || X.empty()) && (G.data || G.empty()), ValueError, "gram: no data");
  check_placement(ctx, X, "X");
  check_placement(ctx, G, "G");
  if (w.data) {
    TL_REQUIRE(w.size == n, ValueError, "sample_weight has ", w.size, " entries but X has ", n, " rows");
    check_placement(ctx, w, "sample_weight");
    TL_REQUIRE(w.device == X.device, ValueError, "sample_weight must live where X does");
  }
  if (d == 0) return NumericMode::Identical;
  if (n == 0) {
    TL_REQUIRE(G.on_host(), ValueError, "gram: an empty X needs a host G");
    for (std::int64_t i = 0; i < d; ++i)
      for (std::int64_t j = 0; j < d; ++j) G(i, j) = T(0);
    return NumericMode::Identical;
  }
  return ctx.dispatch([&] { return detail::gram_cpu<T>(ctx, X, w, offset, G); },
                      [&] { return detail::gram_cuda<T>(ctx, X, w, offset, G); });
}

template NumericMode gram<float>(const Context&, MatrixView<const float>, VectorView<const float>, const float*,
                                 MatrixView<float>);
template NumericMode gram<double>(const Context&, MatrixView<const double>, VectorView<const double>, const double*,
                                  MatrixView<double>);

}  // namespace tl::linalg
