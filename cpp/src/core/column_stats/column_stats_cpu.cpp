#include <vector>

#include "core/column_stats/column_stats_impl.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {

template <class T>
void column_stats_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out) {
  using namespace colstats_detail;
  const std::int64_t rows = X.rows, cols = X.cols;
  if (cols == 0) return;
  const std::int64_t nchunks = colstats_num_chunks(rows);
  if (nchunks == 0) {
    for (std::int64_t j = 0; j < cols; ++j) out[j] = ColStat{};
    return;
  }
  // partials[j * nchunks + c]: column j, chunk c.
  std::vector<ColStat> partials(static_cast<std::size_t>(nchunks * cols));
  // One task per chunk; the rows of a chunk are walked in order, all columns
  // side by side, so each column sees exactly the canonical sequence.
  parallel_for(ctx, nchunks, [&](std::int64_t c) {
    const std::int64_t r0 = c * kColStatsChunk;
    const std::int64_t r1 = std::min(rows, r0 + kColStatsChunk);
    std::vector<ChunkAcc> acc(static_cast<std::size_t>(cols));
    for (std::int64_t i = r0; i < r1; ++i) {
      const double wi = w.data ? static_cast<double>(w[i]) : 1.0;
      for (std::int64_t j = 0; j < cols; ++j) push(acc[j], static_cast<double>(X(i, j)), wi);
    }
    for (std::int64_t j = 0; j < cols; ++j) partials[j * nchunks + c] = finish(acc[j]);
  });
  parallel_for(ctx, cols, [&](std::int64_t j) {
    ColStat* p = partials.data() + j * nchunks;
    tree_reduce_inplace(p, nchunks, 1, [](const ColStat& a, const ColStat& b) { return merge(a, b); });
    out[j] = p[0];
  });
}

template void column_stats_cpu<float>(const Context&, MatrixView<const float>, VectorView<const float>, ColStat*);
template void column_stats_cpu<double>(const Context&, MatrixView<const double>, VectorView<const double>, ColStat*);

}  // namespace tl::detail
