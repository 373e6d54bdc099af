#include <algorithm>
#include <vector>

#include "core/gram/gram_common.hpp"
#include "twinlearn/core/reduce.hpp"

namespace tl {
namespace {

template <class T>
void validate(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0 && Y.cols >= 0, ValueError, "gram: negative shape");
  check_placement(ctx, X, "X");
  if (Y.cols > 0) {
    TL_REQUIRE(Y.data != nullptr, ValueError, "gram: Y has columns but no data");
    TL_REQUIRE(Y.rows == X.rows, ValueError, "y has ", Y.rows, " rows but X has ", X.rows);
    check_placement(ctx, Y, "y");
  }
  if (w.data) {
    TL_REQUIRE(w.size == X.rows, ValueError, "sample_weight has ", w.size, " entries but X has ", X.rows, " rows");
    check_placement(ctx, w, "sample_weight");
  }
}

// The tree over the batch results (each a complete subtree of the canonical
// tree, the last one possibly partial), the mirror and the canonical NaN.
void finish(const std::vector<double>& batches, std::int64_t D, double* out) {
  const std::int64_t DD = D * D;
  const std::int64_t nb = static_cast<std::int64_t>(batches.size()) / std::max<std::int64_t>(DD, 1);
  for (std::int64_t j = 0; j < D; ++j) {
    for (std::int64_t k = j; k < D; ++k) {
      gram_detail::TreeStack st;
      for (std::int64_t b = 0; b < nb; ++b) st.push(batches[b * DD + j * D + k]);
      const double v = num::canonical(st.result());
      out[j * D + k] = v;
      out[k * D + j] = v;
    }
  }
}

}  // namespace

template <class T>
NumericMode gram(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                 const T* offset, double* out) {
  validate(ctx, X, Y, w);
  const std::int64_t D = X.cols + Y.cols;
  if (D == 0) return NumericMode::Identical;
  TL_REQUIRE(out != nullptr, ValueError, "gram: no output buffer");
  if (X.rows == 0) {
    std::fill(out, out + D * D, 0.0);
    return NumericMode::Identical;
  }
  std::vector<double> batches;
  const NumericMode delivered =
      ctx.dispatch([&] { return detail::gram_cpu(ctx, X, Y, w, offset, kGramChunk, batches); },
                   [&] { return detail::gram_cuda(ctx, X, Y, w, offset, batches); });
  finish(batches, D, out);
  return delivered;
}

template <class T>
NumericMode gram_moments(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, bool center, double* out,
                         ColStat* stats) {
  validate(ctx, X, Y, VectorView<const T>());
  const std::int64_t d = X.cols, t = Y.cols, D = d + t;
  if (D == 0) return NumericMode::Identical;
  TL_REQUIRE(out != nullptr && stats != nullptr, ValueError, "gram_moments: no output buffer");
  if (ctx.mode() == NumericMode::Fast && X.rows > 0) {
    const bool done = ctx.dispatch([] { return false; },
                                   [&] { return detail::gram_moments_fast_cuda(ctx, X, Y, center, out, stats); });
    if (done) return NumericMode::Fast;
  }
  column_stats(ctx, X, VectorView<const T>(), stats);
  if (t > 0) column_stats(ctx, Y, VectorView<const T>(), stats + d);
  std::vector<T> off;
  if (center) {
    off.resize(static_cast<std::size_t>(D));
    for (std::int64_t c = 0; c < D; ++c) off[c] = static_cast<T>(stats[c].mean);
  }
  return gram(ctx, X, Y, VectorView<const T>(), center ? off.data() : nullptr, out);
}

template <class T>
void gram_with_chunk_for_testing(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y,
                                 VectorView<const T> w, const T* offset, std::int64_t chunk, double* out) {
  validate(ctx, X, Y, w);
  TL_REQUIRE(chunk > 0, ValueError, "gram: chunk must be positive");
  TL_REQUIRE(!ctx.is_cuda(), ValueError, "gram_with_chunk_for_testing runs on the CPU backend only");
  const std::int64_t D = X.cols + Y.cols;
  if (D == 0) return;
  if (X.rows == 0) {
    std::fill(out, out + D * D, 0.0);
    return;
  }
  std::vector<double> batches;
  detail::gram_cpu(ctx, X, Y, w, offset, chunk, batches);
  finish(batches, D, out);
}

#define TL_INSTANTIATE(T)                                                                                       \
  template NumericMode gram<T>(const Context&, MatrixView<const T>, MatrixView<const T>, VectorView<const T>, \
                               const T*, double*);                                                             \
  template NumericMode gram_moments<T>(const Context&, MatrixView<const T>, MatrixView<const T>, bool, double*,  \
                                       ColStat*);                                                              \
  template void gram_with_chunk_for_testing<T>(const Context&, MatrixView<const T>, MatrixView<const T>,       \
                                               VectorView<const T>, const T*, std::int64_t, double*);
TL_INSTANTIATE(float)
TL_INSTANTIATE(double)
#undef TL_INSTANTIATE

}  // namespace tl
