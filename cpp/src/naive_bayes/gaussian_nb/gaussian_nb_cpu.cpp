#include <algorithm>
#include <vector>

#include "naive_bayes/gaussian_nb/gaussian_nb_common.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {

template <class T>
void class_column_stats_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const ClassLayout& layout,
                            std::int64_t n_classes, ColStat* out) {
  using namespace colstats_detail;
  TL_REQUIRE(X.on_host() && (!w.data || w.on_host()), ValueError, "the CPU backend needs host arrays");
  const std::int64_t cols = X.cols, nchunks = layout.n_chunks;
  // partials[j * nchunks + t]: column j, chunk t (the chunks of class c are
  // chunk_base[c] .. chunk_base[c + 1] - 1).
  std::vector<ColStat> partials(static_cast<std::size_t>(nchunks * cols));
  // One task per chunk; its rows (in class order) are walked in order, all
  // columns side by side, exactly as column_stats walks a gathered matrix.
  parallel_for(ctx, nchunks, [&](std::int64_t t) {
    const std::int64_t c = layout.chunk_class[t];
    const std::int64_t p0 = layout.class_start[c] + (t - layout.chunk_base[c]) * kColStatsChunk;
    const std::int64_t p1 = std::min(layout.class_start[c + 1], p0 + kColStatsChunk);
    std::vector<ChunkAcc> acc(static_cast<std::size_t>(cols));
    for (std::int64_t p = p0; p < p1; ++p) {
      const std::int64_t i = layout.perm[p];
      const double wi = w.data ? static_cast<double>(w[i]) : 1.0;
      for (std::int64_t j = 0; j < cols; ++j) push(acc[j], static_cast<double>(X(i, j)), wi);
    }
    for (std::int64_t j = 0; j < cols; ++j) partials[j * nchunks + t] = finish(acc[j]);
  });
  parallel_for(ctx, n_classes * cols, [&](std::int64_t e) {
    const std::int64_t c = e / cols, j = e % cols;
    const std::int64_t nc = layout.chunk_base[c + 1] - layout.chunk_base[c];
    if (nc == 0) {
      out[e] = ColStat{};
      return;
    }
    ColStat* p = partials.data() + j * nchunks + layout.chunk_base[c];
    tree_reduce_inplace(p, nc, 1, [](const ColStat& a, const ColStat& b) { return merge(a, b); });
    out[e] = p[0];
  });
}

template <class T>
void gaussian_nb_jll_cpu(const Context& ctx, MatrixView<const T> X, const double* theta, const double* var,
                         const double* joint, const double* nconst, std::int64_t n_classes, double* out) {
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  const std::int64_t cols = X.cols;
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    for (std::int64_t c = 0; c < n_classes; ++c) {
      const double* th = theta + c * cols;
      const double* va = var + c * cols;
      const double s = lane_reduce(
          cols, 0.0, [&](std::int64_t j) { return jll_term(static_cast<double>(X(i, j)), th[j], va[j]); },
          lane_ops::Add{});
      out[i * n_classes + c] = jll_finish(s, joint[c], nconst[c]);
    }
  });
}

template void class_column_stats_cpu<float>(const Context&, MatrixView<const float>, VectorView<const float>,
                                            const ClassLayout&, std::int64_t, ColStat*);
template void class_column_stats_cpu<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                             const ClassLayout&, std::int64_t, ColStat*);
template void gaussian_nb_jll_cpu<float>(const Context&, MatrixView<const float>, const double*, const double*,
                                         const double*, const double*, std::int64_t, double*);
template void gaussian_nb_jll_cpu<double>(const Context&, MatrixView<const double>, const double*, const double*,
                                          const double*, const double*, std::int64_t, double*);

}  // namespace tl::detail
