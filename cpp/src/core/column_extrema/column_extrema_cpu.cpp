#include <algorithm>
#include <vector>

#include "core/column_extrema/column_extrema_impl.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
void column_extrema_cpu(const Context& ctx, MatrixView<const T> X, ColExtrema* out) {
  using namespace extrema_detail;
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  const std::int64_t rows = X.rows, cols = X.cols;
  const std::int64_t nchunks = colstats_num_chunks(rows);
  // partials[j * nchunks + c]: column j, chunk c (the geometry of column_stats).
  std::vector<ColExtrema> partials(static_cast<std::size_t>(nchunks * cols));
  parallel_for(ctx, nchunks, [&](std::int64_t c) {
    const std::int64_t r0 = c * kColStatsChunk;
    const std::int64_t r1 = std::min(rows, r0 + kColStatsChunk);
    std::vector<ColExtrema> acc(static_cast<std::size_t>(cols));
    for (std::int64_t i = r0; i < r1; ++i)
      for (std::int64_t j = 0; j < cols; ++j) push(acc[j], static_cast<double>(X(i, j)));
    for (std::int64_t j = 0; j < cols; ++j) partials[j * nchunks + c] = acc[j];
  });
  parallel_for(ctx, cols, [&](std::int64_t j) {
    // Chunk order, as the CUDA backend; the rule makes any order give these bits.
    ColExtrema acc;
    for (std::int64_t c = 0; c < nchunks; ++c) acc = merge(acc, partials[j * nchunks + c]);
    out[j] = finish(acc);
  });
}

template void column_extrema_cpu<float>(const Context&, MatrixView<const float>, ColExtrema*);
template void column_extrema_cpu<double>(const Context&, MatrixView<const double>, ColExtrema*);

}  // namespace tl::detail
