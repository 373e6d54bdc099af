// CPU backend of pairwise distances and brute-force nearest neighbours (the
// building blocks: core/distance/distance_cpu.hpp).
#include "neighbors/distance/distance_impl.hpp"

#include <algorithm>
#include <vector>

#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

namespace {
template <class T>
void pairwise_packed(const Context& ctx, MatrixView<const T> X, const PackedPanels<T>& P, Metric metric,
                     MatrixView<T> out) {
  const bool norms = dist::needs_norms(metric);
  const BlockKernel<T> kernel = block_kernel<T>(dist::family_of(metric));
  const T p = static_cast<T>(metric.p);
  const std::int64_t d = X.cols, nblocks = (X.rows + kRowBlock - 1) / kRowBlock;
  parallel_for(ctx, nblocks, [&](std::int64_t b) {
    const std::int64_t r0 = b * kRowBlock, nr = std::min(kRowBlock, X.rows - r0);
    std::vector<T> acc(static_cast<std::size_t>(kRowBlock * kPanel));
    T xn[kRowBlock];
    if (norms) sqnorms_rows(X.data + r0 * X.row_stride, X.row_stride, nr, d, xn);
    for (std::int64_t q = 0; q < P.npanels; ++q) {
      kernel(X.data + r0 * X.row_stride, X.row_stride, nr, P.panel(q), P.width, d, p, acc.data());
      const std::int64_t nc = P.rows_in(q), c0 = q * P.width;
      for (std::int64_t r = 0; r < nr; ++r)
        for (std::int64_t j = 0; j < nc; ++j) {
          const T a = acc[r * P.width + j];
          const T rv = norms ? dist::rank_value(metric.kind, a, xn[r], P.norms[c0 + j]) : a;
          out(r0 + r, c0 + j) = num::canonical(dist::output_value(metric.kind, rv, p));
        }
    }
  });
}
}  // namespace

template <class T>
void pairwise_distances_cpu(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, Metric metric,
                            MatrixView<T> out) {
  check_host_rows(X, "X");
  TL_REQUIRE(out.on_host(), ValueError, "out: the CPU backend needs host arrays");
  pairwise_packed(ctx, X, pack_panels(ctx, Y, dist::needs_norms(metric)), metric, out);
}

template <class T>
void distance_blocks_cpu(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                         DistanceBlockSink<T> sink, void* state) {
  check_host_rows(queries, "X");
  const PackedPanels<T> P = pack_panels(ctx, index, dist::needs_norms(metric));
  const std::int64_t m = queries.rows, n = index.rows;
  const std::int64_t rb = std::min(std::max<std::int64_t>(1, m), std::max<std::int64_t>(kRowBlock, (std::int64_t(16) << 20) / std::max<std::int64_t>(n, 1)));
  std::vector<T> buf(static_cast<std::size_t>(rb * n));
  for (std::int64_t r0 = 0; r0 < m; r0 += rb) {
    const std::int64_t rows = std::min(rb, m - r0);
    MatrixView<const T> Xb(queries.data + r0 * queries.row_stride, rows, queries.cols, queries.row_stride, 1,
                           queries.device);
    pairwise_packed(ctx, Xb, P, metric, MatrixView<T>(buf.data(), rows, n));
    sink(state, r0, rows, buf.data());
  }
}

template <class T>
void knn_search_cpu(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                    std::int64_t k, T* dist_out, std::int64_t* ind_out) {
  check_host_rows(queries, "X");
  const bool norms = dist::needs_norms(metric);
  const BlockKernel<T> kernel = block_kernel<T>(dist::family_of(metric));
  const T p = static_cast<T>(metric.p);
  const PackedPanels<T> P = pack_panels(ctx, index, norms);
  const std::int64_t d = queries.cols, m = queries.rows, nblocks = (m + kRowBlock - 1) / kRowBlock;
  using K = RankKey<T>;
  struct Cand {
    T v;
    std::int64_t i;
  };
  // Heap order: the farthest candidate on top.
  auto nearer = [](const Cand& a, const Cand& b) { return dist::nearer(a.v, a.i, b.v, b.i); };
  parallel_for(ctx, nblocks, [&](std::int64_t b) {
    const std::int64_t r0 = b * kRowBlock, nr = std::min(kRowBlock, m - r0);
    std::vector<T> acc(static_cast<std::size_t>(kRowBlock * kPanel));
    std::vector<std::vector<Cand>> heaps(static_cast<std::size_t>(nr));
    std::vector<T> v(static_cast<std::size_t>(P.width));
    std::vector<K> key(static_cast<std::size_t>(P.width));
    for (auto& h : heaps) h.assign(static_cast<std::size_t>(k), Cand{dist::empty_value<T>(), dist::kNoIndex});
    T xn[kRowBlock];
    if (norms) sqnorms_rows(queries.data + r0 * queries.row_stride, queries.row_stride, nr, d, xn);
    for (std::int64_t q = 0; q < P.npanels; ++q) {
      kernel(queries.data + r0 * queries.row_stride, queries.row_stride, nr, P.panel(q), P.width, d, p, acc.data());
      const std::int64_t nc = P.rows_in(q), c0 = q * P.width;
      for (std::int64_t r = 0; r < nr; ++r) {
        auto& h = heaps[r];
        // The row's ranking values (>= +0, -0 or NaN for every metric
        // here) and their keys, with the smallest (loops that vectorize).
        const T* a = acc.data() + r * P.width;
        K kmin;
        if (norms && (metric.kind == MetricKind::Euclidean || metric.kind == MetricKind::SqEuclidean)) {
          kmin = sq_distances_and_keys(xn[r], P.norms.data() + c0, a, nc, v.data(), key.data());
        } else {
          for (std::int64_t j = 0; j < nc; ++j) v[j] = norms ? dist::rank_value(metric.kind, a[j], xn[r], P.norms[c0 + j]) : a[j];
          kmin = rank_keys(v.data(), nc, key.data());
        }
        // Against a real candidate on top (an earlier index, so ties keep
        // it), a candidate is nearer exactly when its key is smaller; the
        // rows' panels with no smaller key are skipped whole. While an empty
        // slot is on top, every candidate takes the full comparison.
        K top = rank_key(h.front().v);
        if (h.front().i != dist::kNoIndex && kmin >= top) continue;
        for (std::int64_t j = 0; j < nc; ++j) {
          if (key[j] >= top && h.front().i != dist::kNoIndex) continue;
          const Cand c{v[j], c0 + j};
          if (nearer(c, h.front())) {
            std::pop_heap(h.begin(), h.end(), nearer);
            h.back() = c;
            std::push_heap(h.begin(), h.end(), nearer);
            top = rank_key(h.front().v);
          }
        }
      }
    }
    for (std::int64_t r = 0; r < nr; ++r) {
      auto& h = heaps[r];
      std::sort_heap(h.begin(), h.end(), nearer);
      for (std::int64_t t = 0; t < k; ++t) {
        dist_out[(r0 + r) * k + t] = num::canonical(dist::output_value(metric.kind, h[t].v, p));
        ind_out[(r0 + r) * k + t] = h[t].i;
      }
    }
  });
}

#define TL_INST(T)                                                                                               \
  template void pairwise_distances_cpu<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric,        \
                                          MatrixView<T>);                                                        \
  template void knn_search_cpu<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric, std::int64_t,  \
                                  T*, std::int64_t*);                                                      \
  template void distance_blocks_cpu<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric,           \
                                       DistanceBlockSink<T>, void*);
TL_INST(float)
TL_INST(double)
#undef TL_INST

}  // namespace tl::detail
