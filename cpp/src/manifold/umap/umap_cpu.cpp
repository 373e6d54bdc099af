// UMAP layout on the CPU: each epoch's schedule over the edges, then every
// head vertex's displacement (parallel over vertices, each summed in its own
// fixed order), then the moves.
#include <algorithm>
#include <vector>

#include "manifold/umap/umap_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::umap_detail {

namespace {
// Below this much work (items x their cost) a loop runs on the calling
// thread: a thread team's start and barrier cost more. Same bits either way.
constexpr std::int64_t kParallelMin = std::int64_t(1) << 16;

template <class Fn>
void loop(const Context& ctx, std::int64_t n, std::int64_t cost, Fn&& fn) {
  if (n * cost < kParallelMin) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
  } else {
    parallel_for(ctx, n, fn);
  }
}
}  // namespace

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
  // Per vertex: its edges, each with its negative samples, times the width.
  const std::int64_t vertex_cost = std::max<std::int64_t>(
      1, (n_edges / std::max<std::int64_t>(g.n_head, 1)) * static_cast<std::int64_t>(p.negative_sample_rate + 2) * dim);
  for (std::int64_t n = 0; n < p.n_epochs; ++n) {
    loop(ctx, n_edges, 1, [&](std::int64_t e) {
      schedule_edge(e, n, p.negative_sample_rate, eps, next.data(), next_neg.data(), count.data());
    });
    g.epoch = n;
    g.alpha = epoch_alpha(p.initial_alpha, n, p.n_epochs);
    loop(ctx, g.n_head, vertex_cost, [&](std::int64_t i) { vertex_delta(g, i, delta.data() + i * dim); });
    loop(ctx, g.n_head, dim, [&](std::int64_t i) {
      for (std::int64_t d = 0; d < dim; ++d) head[i * dim + d] = tl::num::add(head[i * dim + d], delta[i * dim + d]);
    });
  }
}

}  // namespace tl::umap_detail
