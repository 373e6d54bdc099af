// CPU backend of HDBSCAN's spanning tree (twinlearn/cluster/hdbscan.hpp):
// Prim's algorithm with the distances computed on the fly. Each step splits
// the rows outside the tree into fixed chunks, one task each; a chunk's
// candidate is its smallest (reachability, index) and the chunks' candidates
// are merged by the same order, so the result does not depend on the chunks
// or the thread count.
#include <algorithm>
#include <limits>
#include <vector>

#include "cluster/hdbscan/hdbscan_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

namespace {

constexpr std::int64_t kChunk = 2048;  // rows per task of one Prim step

template <class PairFn>
void prim_cpu(const Context& ctx, std::int64_t n, const double* core, double alpha, bool source_is_current,
              PairFn&& pair, std::int64_t* src, std::int64_t* dst, double* weight) {
  std::vector<std::uint8_t> in_tree(static_cast<std::size_t>(n), 0);
  std::vector<double> best(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
  std::vector<std::int64_t> source(static_cast<std::size_t>(n), 1);
  const std::int64_t nchunks = (n + kChunk - 1) / kChunk;
  std::vector<double> cand_v(static_cast<std::size_t>(nchunks));
  std::vector<std::int64_t> cand_i(static_cast<std::size_t>(nchunks));
  std::int64_t cur = 0;
  for (std::int64_t step = 0; step + 1 < n; ++step) {
    in_tree[static_cast<std::size_t>(cur)] = 1;
    const double ccur = core[cur];
    auto chunk = [&](std::int64_t c) {
      const std::int64_t b = c * kChunk, e = std::min(n, b + kChunk);
      double bv = 0.0;
      std::int64_t bi = -1;
      for (std::int64_t j = b; j < e; ++j) {
        if (in_tree[static_cast<std::size_t>(j)]) continue;
        const double m = hdbscan_mrd(ccur, core[j], pair(cur, j), alpha);
        hdbscan_prim_update(m, cur, &best[static_cast<std::size_t>(j)], &source[static_cast<std::size_t>(j)]);
        const double v = best[static_cast<std::size_t>(j)];
        if (hdbscan_prim_better(v, j, bv, bi)) {
          bv = v;
          bi = j;
        }
      }
      cand_v[static_cast<std::size_t>(c)] = bv;
      cand_i[static_cast<std::size_t>(c)] = bi;
    };
    if (n - step < 4 * kChunk) {
      for (std::int64_t c = 0; c < nchunks; ++c) chunk(c);
    } else {
      parallel_for(ctx, nchunks, chunk);
    }
    double bv = 0.0;
    std::int64_t bi = -1;
    for (std::int64_t c = 0; c < nchunks; ++c) {
      const std::int64_t i = cand_i[static_cast<std::size_t>(c)];
      if (i >= 0 && hdbscan_prim_better(cand_v[static_cast<std::size_t>(c)], i, bv, bi)) {
        bv = cand_v[static_cast<std::size_t>(c)];
        bi = i;
      }
    }
    src[step] = source_is_current ? cur : source[static_cast<std::size_t>(bi)];
    dst[step] = bi;
    weight[step] = bv;
    cur = bi;
  }
}

template <dist::Family F>
void prim_rows(const Context& ctx, MatrixView<const double> X, Metric metric, const double* core, double alpha,
               bool source_is_current, std::int64_t* src, std::int64_t* dst, double* weight) {
  const std::int64_t n = X.rows, d = X.cols, ld = X.row_stride;
  const double* x = X.data;
  std::vector<double> norms;
  if (F == dist::Family::Dot) {
    norms.resize(static_cast<std::size_t>(n));
    hdbscan_row_sqnorms(X, norms.data());
  }
  const double* nr = norms.data();
  const MetricKind kind = metric.kind;
  const double p = metric.p;
  prim_cpu(ctx, n, core, alpha, source_is_current,
           [&](std::int64_t i, std::int64_t j) {
             return hdbscan_pair_distance<F>(x + i * ld, x + j * ld, d, kind, p, nr ? nr[i] : 0.0,
                                             nr ? nr[j] : 0.0);
           },
           src, dst, weight);
}

}  // namespace

void hdbscan_row_sqnorms(MatrixView<const double> X, double* out) {
  for (std::int64_t i = 0; i < X.rows; ++i) out[i] = dist::sqnorm(X.data + i * X.row_stride, X.cols);
}

void hdbscan_mst_cpu(const Context& ctx, MatrixView<const double> X, Metric metric, bool precomputed,
                     const double* core, double alpha, bool source_is_current, std::int64_t* src,
                     std::int64_t* dst, double* weight) {
  if (precomputed) {
    const double* D = X.data;
    const std::int64_t ld = X.row_stride;
    prim_cpu(ctx, X.rows, core, alpha, source_is_current,
             [&](std::int64_t i, std::int64_t j) { return D[i * ld + j]; }, src, dst, weight);
    return;
  }
  switch (dist::family_of(metric)) {
    case dist::Family::Dot: return prim_rows<dist::Family::Dot>(ctx, X, metric, core, alpha, source_is_current, src, dst, weight);
    case dist::Family::L1: return prim_rows<dist::Family::L1>(ctx, X, metric, core, alpha, source_is_current, src, dst, weight);
    case dist::Family::Linf: return prim_rows<dist::Family::Linf>(ctx, X, metric, core, alpha, source_is_current, src, dst, weight);
    case dist::Family::Lp: return prim_rows<dist::Family::Lp>(ctx, X, metric, core, alpha, source_is_current, src, dst, weight);
    case dist::Family::L2: return prim_rows<dist::Family::L2>(ctx, X, metric, core, alpha, source_is_current, src, dst, weight);
  }
}

}  // namespace tl::detail
