#include <vector>

#include "manifold/umap/umap_common.hpp"
#include "twinlearn/core/error.hpp"

namespace tl {

void umap_layout(const Context& ctx, float* head, std::int64_t n_head, const float* tail, std::int64_t n_tail,
                 std::int64_t dim, const std::int64_t* indptr, const std::int64_t* indices, const double* eps,
                 const std::int64_t* rindptr, const std::int64_t* redges, const UmapLayoutParams& p) {
  TL_REQUIRE(n_head >= 0 && n_tail >= 1 && dim >= 1, ValueError, "umap_layout: bad shape (n_head ", n_head, ", n_tail ",
             n_tail, ", dim ", dim, ")");
  TL_REQUIRE(p.n_epochs >= 0 && p.n_epochs < (std::int64_t(1) << 38), ValueError,
             "umap_layout: n_epochs must lie in [0, 2^38), got ", p.n_epochs);
  TL_REQUIRE(p.negative_sample_rate > 0.0, ValueError, "umap_layout: negative_sample_rate must be > 0");
  TL_REQUIRE(p.move_other == (tail == nullptr), ValueError,
             "umap_layout: move_other requires tail to be the head (null), and a fixed tail otherwise");
  TL_REQUIRE(!p.move_other || (n_tail == n_head && rindptr && redges), ValueError,
             "umap_layout: move_other needs n_tail == n_head and the reverse CSR");
  TL_REQUIRE(indptr[0] == 0, ValueError, "umap_layout: indptr[0] must be 0");
  for (std::int64_t i = 0; i < n_head; ++i)
    TL_REQUIRE(indptr[i + 1] >= indptr[i], ValueError, "umap_layout: indptr must be non-decreasing");
  const std::int64_t n_edges = indptr[n_head];
  for (std::int64_t e = 0; e < n_edges; ++e)
    TL_REQUIRE(indices[e] >= 0 && indices[e] < n_tail, ValueError, "umap_layout: edge ", e, " has tail ", indices[e],
               " outside [0, ", n_tail, ")");
  std::vector<std::int64_t> edge_head;
  if (p.move_other) {
    TL_REQUIRE(rindptr[0] == 0 && rindptr[n_head] == n_edges, ValueError,
               "umap_layout: the reverse CSR must hold every edge once");
    std::vector<char> seen(static_cast<std::size_t>(n_edges), 0);
    for (std::int64_t j = 0; j < n_head; ++j)
      for (std::int64_t q = rindptr[j]; q < rindptr[j + 1]; ++q) {
        const std::int64_t e = redges[q];
        TL_REQUIRE(q >= rindptr[j] && e >= 0 && e < n_edges && !seen[e] && indices[e] == j, ValueError,
                   "umap_layout: the reverse CSR is not the transpose of the graph");
        seen[e] = 1;
      }
    edge_head.resize(static_cast<std::size_t>(n_edges));
    for (std::int64_t i = 0; i < n_head; ++i)
      for (std::int64_t e = indptr[i]; e < indptr[i + 1]; ++e) edge_head[e] = i;
  }
  if (n_head == 0 || p.n_epochs == 0) return;
  umap_detail::LayoutArgs g{};
  g.n_head = n_head;
  g.n_tail = n_tail;
  g.dim = dim;
  g.indptr = indptr;
  g.indices = indices;
  g.rindptr = p.move_other ? rindptr : nullptr;
  g.redges = p.move_other ? redges : nullptr;
  g.edge_head = p.move_other ? edge_head.data() : nullptr;
  g.a = static_cast<float>(p.a);
  g.b = static_cast<float>(p.b);
  g.gamma = static_cast<float>(p.gamma);
  g.seed = p.seed;
  ctx.dispatch([&] { umap_detail::layout_cpu(ctx, head, tail, g, eps, p); },
               [&] { umap_detail::layout_cuda(ctx, head, tail, g, eps, p); });
}

}  // namespace tl
