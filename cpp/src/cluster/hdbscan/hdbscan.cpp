// Validation and dispatch of HDBSCAN's core distances and spanning tree
// (twinlearn/cluster/hdbscan.hpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "cluster/hdbscan/hdbscan_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl {

void hdbscan_core_distances(const Context& ctx, MatrixView<const double> X, Metric metric, std::int64_t k,
                            double* core) {
  const std::int64_t n = X.rows;
  TL_REQUIRE(k >= 1 && k <= n, ValueError, "min_samples (", k, ") must be at most the number of samples in X (",
             n, ")");
  std::vector<double> dist(static_cast<std::size_t>(n * k));
  std::vector<std::int64_t> ind(static_cast<std::size_t>(n * k));
  knn_search<double>(ctx, X, X, metric, k, dist.data(), ind.data());
  for (std::int64_t i = 0; i < n; ++i) core[i] = dist[static_cast<std::size_t>(i * k + k - 1)];
}

void hdbscan_core_distances_precomputed(const Context& ctx, MatrixView<const double> D, std::int64_t k,
                                        double alpha, double* core) {
  const std::int64_t n = D.rows;
  TL_REQUIRE(D.on_host(), ValueError, "HDBSCAN: the precomputed matrix must be in host memory");
  TL_REQUIRE(D.cols == n, ValueError, "HDBSCAN: the precomputed matrix must be square, got ", D.rows, "x", D.cols);
  TL_REQUIRE(k >= 1 && k <= n, ValueError, "min_samples (", k, ") must be at most the number of samples in X (",
             n, ")");
  TL_REQUIRE(alpha > 0.0 && std::isfinite(alpha), ValueError, "alpha must be > 0, got ", alpha);
  parallel_for(ctx, n, [&](std::int64_t i) {
    std::vector<double> row(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) row[static_cast<std::size_t>(j)] = alpha == 1.0 ? D(i, j) : D(i, j) / alpha;
    std::nth_element(row.begin(), row.begin() + (k - 1), row.end());
    core[i] = row[static_cast<std::size_t>(k - 1)];
  });
}

void hdbscan_mst(const Context& ctx, MatrixView<const double> X, Metric metric, bool precomputed, const double* core,
                 double alpha, bool source_is_current, std::int64_t* src, std::int64_t* dst, double* weight) {
  TL_REQUIRE(X.on_host(), ValueError, "HDBSCAN: X must be in host memory (it is copied to the device)");
  TL_REQUIRE(X.col_stride == 1 || X.cols <= 1, ValueError, "HDBSCAN: X's rows must have unit stride");
  TL_REQUIRE(alpha > 0.0 && std::isfinite(alpha), ValueError, "alpha must be > 0, got ", alpha);
  if (precomputed)
    TL_REQUIRE(X.cols == X.rows, ValueError, "HDBSCAN: the precomputed matrix must be square, got ", X.rows, "x",
               X.cols);
  if (X.rows < 2) return;
  ctx.dispatch(
      [&] { detail::hdbscan_mst_cpu(ctx, X, metric, precomputed, core, alpha, source_is_current, src, dst, weight); },
      [&] { detail::hdbscan_mst_cuda(ctx, X, metric, precomputed, core, alpha, source_is_current, src, dst, weight); });
}

}  // namespace tl
