// UMAP layout on the CPU: each epoch's schedule over the edges, then every
// head vertex's displacement (parallel over vertices, each summed in its own
// fixed order), then the moves.
#include <vector>

#include "manifold/umap/umap_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::umap_detail {

void layout_cpu(const Context& ctx, float* head, const float* tail, LayoutArgs g, const double* eps,
                const UmapLayoutParams& p) {
  const std::int64_t n_edges = g.indptr[g.n_head], dim = g.dim;
  std::vector<double> next(eps, eps + n_edges), next_neg(static_cast<std::size_t>(n_edges));
  for (std::int64_t e = 0; e < n_edges; ++e) next_neg[e] = tl::num::div(eps[e], p.negative_sample_rate);
  std::vector<std::int64_t> count(static_cast<std::size_t>(n_edges));
  std::vector<float> delta(static_cast<std::size_t>(g.n_head * dim));
  g.head = head;
  g.tail = tail ? tail : head;
  g.count = count.data();
  for (std::int64_t n = 0; n < p.n_epochs; ++n) {
    parallel_for(ctx, n_edges, [&](std::int64_t e) {
      schedule_edge(e, n, p.negative_sample_rate, eps, next.data(), next_neg.data(), count.data());
    });
    g.epoch = n;
    g.alpha = epoch_alpha(p.initial_alpha, n, p.n_epochs);
    parallel_for(ctx, g.n_head, [&](std::int64_t i) { vertex_delta(g, i, delta.data() + i * dim); });
    parallel_for(ctx, g.n_head, [&](std::int64_t i) {
      for (std::int64_t d = 0; d < dim; ++d) head[i * dim + d] = tl::num::add(head[i * dim + d], delta[i * dim + d]);
    });
  }
}

}  // namespace tl::umap_detail
