#include <algorithm>
#include <utility>
#include <vector>

#include "ensemble/iforest/iforest_common.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/random.hpp"
#include "twinlearn/core/rng.hpp"

namespace tl::iforest_detail {

namespace {
using forest_detail::stream_of;

// k distinct values of 0..n-1 by Floyd's algorithm: step j draws
// t = integer(j, m + 1), m = n - k + j, and takes m instead when t was
// taken already. out: the values in the order they are taken.
void floyd_sample(std::uint64_t seed, std::uint64_t stream, std::int64_t n, std::int64_t k, std::int64_t* out) {
  std::vector<unsigned char> taken(static_cast<std::size_t>(n), 0);
  for (std::int64_t j = 0; j < k; ++j) {
    const std::int64_t m = n - k + j;
    std::int64_t t = static_cast<std::int64_t>(rng::integer(seed, stream, static_cast<std::uint64_t>(j),
                                                            static_cast<std::uint64_t>(m + 1)));
    if (taken[static_cast<std::size_t>(t)]) t = m;
    taken[static_cast<std::size_t>(t)] = 1;
    out[j] = t;
  }
}

// Tree t's rows (the header's rule), in draw order.
void draw_rows(std::int64_t n, const double* weight, const double* cdf, const IForestParams& p, std::int64_t t,
               std::int64_t* out) {
  const std::uint64_t s = stream_of(kTreeRows, t, 0);
  const std::int64_t k = p.max_samples;
  if (!weight) {
    if (p.bootstrap) {
      for (std::int64_t j = 0; j < k; ++j)
        out[j] = static_cast<std::int64_t>(
            rng::integer(p.seed, s, static_cast<std::uint64_t>(j), static_cast<std::uint64_t>(n)));
    } else {
      floyd_sample(p.seed, s, n, k, out);
    }
    return;
  }
  if (p.bootstrap) {  // first row whose cdf exceeds u * total (else the first reaching the total)
    const double total = cdf[n - 1];
    for (std::int64_t j = 0; j < k; ++j) {
      const double target = tl::num::mul(rng::uniform<double>(p.seed, s, static_cast<std::uint64_t>(j)), total);
      const double* it = std::upper_bound(cdf, cdf + n, target);
      if (it == cdf + n) it = std::lower_bound(cdf, cdf + n, total);
      out[j] = it - cdf;
    }
    return;
  }
  std::vector<std::pair<double, std::int64_t>> keys;
  keys.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    if (weight[i] > 0.0) keys.emplace_back(rng::weighted_key(p.seed, s, static_cast<std::uint64_t>(i), weight[i]), i);
  std::nth_element(keys.begin(), keys.begin() + (k - 1), keys.end());
  std::sort(keys.begin(), keys.begin() + k);
  for (std::int64_t j = 0; j < k; ++j) out[j] = keys[static_cast<std::size_t>(j)].second;
}

struct HostTree {
  std::vector<std::int64_t> left, right, feature, n_node, depth, samples, features;
  std::vector<double> threshold, wn, path;
};

struct Rec {
  std::int64_t start, end, depth, parent;
  bool is_left;
};

// Grows tree t on X's rows `rows` (distinct, increasing; count[r] draws
// each) restricted to the columns `cols` (the header's rule).
template <class T>
void grow(MatrixView<const T> X, const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& count,
          const std::vector<std::int64_t>& cols, std::int64_t max_depth, std::uint64_t seed, std::int64_t t,
          HostTree& h) {
  using namespace tl::num;
  const std::int64_t m = static_cast<std::int64_t>(rows.size()), f = static_cast<std::int64_t>(cols.size());
  std::vector<T> xl(static_cast<std::size_t>(m * f));  // the tree's rows x columns, row-major
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t c = 0; c < f; ++c) xl[static_cast<std::size_t>(i * f + c)] = X(rows[i], cols[c]);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(m)), tmp(static_cast<std::size_t>(m)),
      order(static_cast<std::size_t>(f));
  for (std::int64_t i = 0; i < m; ++i) idx[i] = i;
  std::vector<Rec> stack{{0, m, 0, -1, false}};
  const T feature_threshold = static_cast<T>(kFeatureThreshold);
  while (!stack.empty()) {
    const Rec r = stack.back();
    stack.pop_back();
    const std::int64_t k = static_cast<std::int64_t>(h.left.size());
    if (r.parent >= 0) (r.is_left ? h.left : h.right)[r.parent] = k;
    const std::int64_t n = r.end - r.start;
    double wn = 0.0;
    for (std::int64_t a = r.start; a < r.end; ++a) wn = add(wn, static_cast<double>(count[idx[a]]));
    h.left.push_back(-1), h.right.push_back(-1), h.feature.push_back(-2), h.threshold.push_back(-2.0);
    h.n_node.push_back(n), h.depth.push_back(r.depth), h.wn.push_back(wn);
    h.path.push_back(node_path_length(r.depth, n));
    if (r.depth >= max_depth || n < 2) continue;
    // Features in a random order (Fisher-Yates, draws keyed by the node)
    // until one is not constant on the node.
    for (std::int64_t c = 0; c < f; ++c) order[c] = c;
    const std::uint64_t fs = stream_of(kNodeFeatures, t, k);
    std::int64_t chosen = -1;
    T lo = T(0), hi = T(0);
    for (std::int64_t j = 0; j < f && chosen < 0; ++j) {
      const std::int64_t pick = j + static_cast<std::int64_t>(rng::integer(seed, fs, static_cast<std::uint64_t>(j),
                                                                           static_cast<std::uint64_t>(f - j)));
      std::swap(order[j], order[pick]);
      const std::int64_t c = order[j];
      lo = hi = xl[static_cast<std::size_t>(idx[r.start] * f + c)];
      for (std::int64_t a = r.start + 1; a < r.end; ++a) {
        const T v = xl[static_cast<std::size_t>(idx[a] * f + c)];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      if (!(hi <= add(lo, feature_threshold))) chosen = c;
    }
    if (chosen < 0) continue;  // every feature constant: a leaf
    const double dlo = static_cast<double>(lo), dhi = static_cast<double>(hi);
    const double u = rng::uniform<double>(seed, stream_of(kNodeThreshold, t, k), 0);
    double thr = add(dlo, mul(u, sub(dhi, dlo)));
    if (thr == dhi) thr = dlo;
    // Stable partition: rows with x <= thr first.
    std::int64_t nl = 0, nr = 0;
    for (std::int64_t a = r.start; a < r.end; ++a) {
      const std::int64_t i = idx[a];
      if (static_cast<double>(xl[static_cast<std::size_t>(i * f + chosen)]) <= thr)
        idx[r.start + nl++] = i;
      else
        tmp[nr++] = i;
    }
    std::copy(tmp.begin(), tmp.begin() + nr, idx.begin() + r.start + nl);
    h.feature[k] = chosen;
    h.threshold[k] = thr;
    stack.push_back({r.start + nl, r.end, r.depth + 1, k, false});
    stack.push_back({r.start, r.start + nl, r.depth + 1, k, true});  // popped first: left child first
  }
}

std::int64_t depth_limit(std::int64_t max_samples) {  // ceil(log2(max(max_samples, 2))), exactly
  std::int64_t d = 0;
  while ((std::int64_t(1) << d) < std::max<std::int64_t>(max_samples, 2)) ++d;
  return d;
}
}  // namespace

template <class T>
IForestTrees fit_cpu(const Context& ctx, MatrixView<const T> X, const double* weight, const IForestParams& p) {
  const std::int64_t n = X.rows, d = X.cols, k = p.max_samples, f = p.max_features;
  std::vector<double> cdf;
  if (weight && p.bootstrap) {
    cdf.resize(static_cast<std::size_t>(n));
    weighted_cdf(weight, n, cdf.data());
  }
  const std::int64_t max_depth = depth_limit(k);
  std::vector<HostTree> trees(static_cast<std::size_t>(p.n_trees));
  // Trees in parallel: each is a pure function of its global index.
  parallel_for(ctx, p.n_trees, [&](std::int64_t i) {
    const std::int64_t t = p.first_tree + i;
    HostTree& h = trees[static_cast<std::size_t>(i)];
    h.samples.resize(static_cast<std::size_t>(k));
    draw_rows(n, weight, cdf.empty() ? nullptr : cdf.data(), p, t, h.samples.data());
    h.features.resize(static_cast<std::size_t>(f));
    if (f == d) {
      for (std::int64_t c = 0; c < d; ++c) h.features[c] = c;
    } else {
      floyd_sample(p.seed, stream_of(kTreeFeatures, t, 0), d, f, h.features.data());
      std::sort(h.features.begin(), h.features.end());
    }
    std::vector<std::int64_t> sorted(h.samples), rows, count;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t a = 0; a < sorted.size(); ++a) {
      if (a == 0 || sorted[a] != sorted[a - 1]) {
        rows.push_back(sorted[a]);
        count.push_back(0);
      }
      ++count.back();
    }
    grow(X, rows, count, h.features, max_depth, p.seed, t, h);
  });
  IForestTrees out;
  out.offsets.push_back(0);
  for (auto& h : trees) {
    out.offsets.push_back(out.offsets.back() + static_cast<std::int64_t>(h.left.size()));
    auto append = [](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin(), src.end()); };
    append(out.children_left, h.left), append(out.children_right, h.right), append(out.feature, h.feature);
    append(out.n_node_samples, h.n_node), append(out.depth, h.depth), append(out.threshold, h.threshold);
    append(out.weighted_n_node_samples, h.wn), append(out.path, h.path), append(out.samples, h.samples);
    append(out.features, h.features);
    h = HostTree{};
  }
  return out;
}

template <class T>
void score_cpu(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
               const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
               const double* threshold, const double* path, double den, double* out) {
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    const T* x = X.data + i * X.row_stride;
    double total = 0.0;  // in tree order
    for (std::int64_t t = 0; t < n_trees; ++t) {
      const std::int64_t o = offsets[t];
      total = tl::num::add(total,
                           path[o + forest_detail::tree_leaf(x, X.col_stride, left + o, right + o, feature + o,
                                                             threshold + o)]);
    }
    out[i] = score_from_total(total, den);
  });
}

#define TL_IFOREST_CPU_INST(T)                                                                                \
  template IForestTrees fit_cpu<T>(const Context&, MatrixView<const T>, const double*, const IForestParams&); \
  template void score_cpu<T>(const Context&, MatrixView<const T>, std::int64_t, const std::int64_t*,          \
                             const std::int64_t*, const std::int64_t*, const std::int64_t*, const double*,    \
                             const double*, double, double*);
TL_IFOREST_CPU_INST(float)
TL_IFOREST_CPU_INST(double)
#undef TL_IFOREST_CPU_INST

}  // namespace tl::iforest_detail
