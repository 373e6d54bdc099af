#include <vector>

#include "ensemble/forest/forest_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::forest_detail {

namespace {
// One tree's nodes, trimmed to its size.
struct HostTree {
  std::vector<std::int64_t> left, right, feature, n_node;
  std::vector<double> threshold, impurity, wn, value;
  std::vector<std::int32_t> count;
  std::int64_t n = 0;

  // Room for `nodes` nodes of `values` values each; `shrink` also frees
  // the capacity past them (after the build, which needed the worst case).
  void resize(std::size_t nodes, std::size_t values, bool shrink) {
    auto fit = [&](auto& v, std::size_t size) {
      v.resize(size);
      if (shrink) v.shrink_to_fit();
    };
    fit(left, nodes), fit(right, nodes), fit(feature, nodes), fit(n_node, nodes);
    fit(threshold, nodes), fit(impurity, nodes), fit(wn, nodes), fit(value, nodes * values);
  }

  TreeOut view() {
    return TreeOut{left.data(),   right.data(),     feature.data(),
                   n_node.data(), threshold.data(), impurity.data(),
                   wn.data(),     value.data(),     static_cast<std::int64_t>(left.size())};
  }
};
}  // namespace

template <class T>
ForestTrees fit_cpu(const Context& ctx, const TreeInput<T>& in, const ForestParams& p) {
  const std::int64_t rows = in.rows, cols = in.cols, V = values_per_node(in);
  const std::size_t ur = static_cast<std::size_t>(rows);
  std::vector<HostTree> trees(static_cast<std::size_t>(p.n_trees));
  // Trees in parallel: each is a pure function of its global index.
  parallel_for(ctx, p.n_trees, [&](std::int64_t t) {
    std::vector<std::int32_t> count(ur), idx(ur), idx_tmp(ur), sidx(ur), sidx_tmp(ur), feats(cols);
    std::vector<double> w(ur), stats(static_cast<std::size_t>(stats_size(in.class_sum, in.n_outputs)));
    std::vector<T> keys(ur), keys_tmp(ur);
    std::vector<StackRec> stack(ur + 1);
    const bool mae = p.criterion == ForestCriterion::AbsoluteError;
    std::vector<std::int32_t> rank(mae ? ur * static_cast<std::size_t>(in.n_outputs) : 0);
    std::vector<double> mae_buf(mae ? static_cast<std::size_t>(mae_doubles(rows, in.n_outputs)) : 0);
    TreeWork<T> wk{count.data(),
                   w.data(),
                   idx.data(),
                   idx_tmp.data(),
                   sidx.data(),
                   sidx_tmp.data(),
                   keys.data(),
                   keys_tmp.data(),
                   feats.data(),
                   stats.data(),
                   stack.data(),
                   mae ? rank.data() : nullptr,
                   mae ? mae_buf.data() : nullptr};
    const std::size_t cap = static_cast<std::size_t>(node_capacity(rows));
    HostTree& h = trees[static_cast<std::size_t>(t)];
    h.resize(cap, static_cast<std::size_t>(V), false);
    h.n = build_tree(in, p, p.first_tree + t, wk, h.view());
    h.resize(static_cast<std::size_t>(h.n), static_cast<std::size_t>(V), true);
    if (p.keep_in_bag) h.count = std::move(count);
  });
  ForestTrees f;
  f.n_values = V;
  f.offsets.push_back(0);
  if (p.keep_in_bag) f.in_bag.reserve(static_cast<std::size_t>(p.n_trees) * ur);
  for (auto& h : trees) {
    append_tree(f, h.view(), h.n, V);
    if (p.keep_in_bag) f.in_bag.insert(f.in_bag.end(), h.count.begin(), h.count.end());
    h = HostTree{};
  }
  return f;
}

template <class T>
void apply_cpu(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
               const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
               const double* threshold, std::int64_t* out) {
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    const T* x = X.data + i * X.row_stride;
    for (std::int64_t t = 0; t < n_trees; ++t) {
      const std::int64_t o = offsets[t];
      out[i * n_trees + t] = tree_leaf(x, X.col_stride, left + o, right + o, feature + o, threshold + o);
    }
  });
}

#define TL_FOREST_CPU_INST(T)                                                                              \
  template ForestTrees fit_cpu<T>(const Context&, const TreeInput<T>&, const ForestParams&);               \
  template void apply_cpu<T>(const Context&, MatrixView<const T>, std::int64_t, const std::int64_t*,       \
                             const std::int64_t*, const std::int64_t*, const std::int64_t*, const double*, \
                             std::int64_t*);
TL_FOREST_CPU_INST(float)
TL_FOREST_CPU_INST(double)
#undef TL_FOREST_CPU_INST

}  // namespace tl::forest_detail
