// CPU backend of agglomerative clustering's single linkage: Prim's scan with
// the distances computed on the fly (twinlearn/cluster/agglomerative.hpp).
#include <algorithm>
#include <limits>
#include <vector>

#include "cluster/agglomerative/agglomerative_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

void agglo_prim_cpu(const Context& ctx, const AggloPoints& p, std::int64_t* from, std::int64_t* to, double* w) {
  const std::int64_t n = p.n;
  constexpr std::int64_t kChunk = 2048;  // candidates per task; any split picks the same vertex
  const std::int64_t nchunks = (n + kChunk - 1) / kChunk;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> dist(static_cast<std::size_t>(n), inf);
  std::vector<std::uint8_t> in_tree(static_cast<std::size_t>(n), 0);
  std::vector<double> best_v(static_cast<std::size_t>(nchunks));
  std::vector<std::int64_t> best_i(static_cast<std::size_t>(nchunks));
  std::int64_t cur = 0;
  for (std::int64_t k = 0; k + 1 < n; ++k) {
    in_tree[cur] = 1;
    parallel_for(ctx, nchunks, [&](std::int64_t c) {
      double bv = inf;
      std::int64_t bi = std::numeric_limits<std::int64_t>::max();
      const std::int64_t j1 = std::min(n, (c + 1) * kChunk);
      for (std::int64_t j = c * kChunk; j < j1; ++j) {
        if (in_tree[j]) continue;
        const double v = agglo_distance(p, cur, j);
        if (v < dist[j]) dist[j] = v;
        if (agglo_better(dist[j], j, bv, bi)) {
          bv = dist[j];
          bi = j;
        }
      }
      best_v[c] = bv;
      best_i[c] = bi;
    });
    double bv = inf;
    std::int64_t bi = std::numeric_limits<std::int64_t>::max();
    for (std::int64_t c = 0; c < nchunks; ++c)
      if (agglo_better(best_v[c], best_i[c], bv, bi)) {
        bv = best_v[c];
        bi = best_i[c];
      }
    from[k] = cur;
    to[k] = bi;
    w[k] = bv;
    cur = bi;
  }
}

}  // namespace tl::detail
