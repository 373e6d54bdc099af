#include <algorithm>
#include <limits>
#include <vector>

#include "ensemble/forest/forest_common.hpp"

namespace tl {

template <class T>
ForestTrees forest_fit(const Context& ctx, MatrixView<const T> X, const std::int32_t* y_class, const double* y_reg,
                       const double* weight, std::int64_t n_classes, const ForestParams& p) {
  TL_REQUIRE(n_classes >= 0, ValueError, "forest_fit: n_classes must be >= 0");
  return forest_fit(ctx, X, y_class, y_reg, weight, 1, n_classes > 0 ? &n_classes : nullptr, p);
}

template <class T>
ForestTrees forest_fit(const Context& ctx, MatrixView<const T> X, const std::int32_t* y_class, const double* y_reg,
                       const double* weight, std::int64_t n_outputs, const std::int64_t* n_classes,
                       const ForestParams& p) {
  TL_REQUIRE(X.rows >= 1 && X.cols >= 1, ValueError, "forest_fit: X must have at least one row and one column, got ",
             X.rows, " x ", X.cols);
  TL_REQUIRE(X.rows < std::numeric_limits<std::int32_t>::max() / 2, ValueError, "forest_fit: at most 2^30 rows, got ",
             X.rows);
  TL_REQUIRE(n_outputs >= 1, ValueError, "forest_fit: n_outputs must be >= 1, got ", n_outputs);
  const bool cls = p.criterion == ForestCriterion::Gini || p.criterion == ForestCriterion::Entropy;
  TL_REQUIRE(cls == (n_classes != nullptr), ValueError, "forest_fit: criterion and task (n_classes) disagree");
  std::int64_t max_classes = 0, class_sum = 0;
  if (cls)
    for (std::int64_t k = 0; k < n_outputs; ++k) {
      TL_REQUIRE(n_classes[k] >= 1, ValueError, "forest_fit: output ", k, " has ", n_classes[k], " classes");
      max_classes = std::max(max_classes, n_classes[k]);
      class_sum += n_classes[k];
    }
  TL_REQUIRE(cls ? y_class != nullptr : y_reg != nullptr, ValueError, "forest_fit: no targets");
  TL_REQUIRE(p.n_trees >= 0 && p.first_tree >= 0 && p.first_tree + p.n_trees < (std::int64_t(1) << 30), ValueError,
             "forest_fit: tree indices must lie in [0, 2^30)");
  TL_REQUIRE(p.max_leaf_nodes == -1 || p.max_leaf_nodes >= 2, ValueError,
             "forest_fit: max_leaf_nodes must be -1 (unlimited) or >= 2, got ", p.max_leaf_nodes);
  TL_REQUIRE(p.min_samples_split >= 2, ValueError, "forest_fit: min_samples_split must be >= 2");
  TL_REQUIRE(p.min_samples_leaf >= 1, ValueError, "forest_fit: min_samples_leaf must be >= 1");
  TL_REQUIRE(p.max_features >= 1 && p.max_features <= X.cols, ValueError, "forest_fit: max_features must lie in [1, ",
             X.cols, "], got ", p.max_features);
  TL_REQUIRE(!p.bootstrap || p.n_samples_bootstrap >= 1, ValueError, "forest_fit: n_samples_bootstrap must be >= 1");
  check_placement(ctx, X, "X");
  const std::int64_t ny = X.rows * n_outputs;
  if (cls)
    for (std::int64_t i = 0; i < ny; ++i)
      TL_REQUIRE(y_class[i] >= 0 && y_class[i] < n_classes[i % n_outputs], ValueError, "forest_fit: label ", y_class[i],
                 " of row ", i / n_outputs, ", output ", i % n_outputs, " is outside [0, ", n_classes[i % n_outputs],
                 ")");
  if (p.criterion == ForestCriterion::Poisson) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < ny; ++i) {
      TL_REQUIRE(y_reg[i] >= 0.0, ValueError, "forest_fit: poisson needs y >= 0, got ", y_reg[i], " in row ",
                 i / n_outputs);
      sum += y_reg[i];
    }
    TL_REQUIRE(sum > 0.0, ValueError, "forest_fit: poisson needs a positive sum of y");
  }
  if (weight)
    for (std::int64_t i = 0; i < X.rows; ++i)
      TL_REQUIRE(weight[i] >= 0.0, ValueError, "forest_fit: negative weight in row ", i);
  forest_detail::TreeInput<T> in;
  in.X = X.data;
  in.rs = X.row_stride;
  in.cs = X.col_stride;
  in.rows = X.rows;
  in.cols = X.cols;
  in.y_class = cls ? y_class : nullptr;
  in.y_reg = cls ? nullptr : y_reg;
  in.weight = weight;
  in.n_classes = max_classes;
  in.n_outputs = n_outputs;
  in.out_classes = cls ? n_classes : nullptr;
  in.class_sum = class_sum;
  // Running sums of the weights for the weighted bootstrap, in row order
  // (one sequence for both backends).
  std::vector<double> cum;
  if (p.bootstrap && weight) {
    cum.resize(static_cast<std::size_t>(X.rows));
    double acc = 0.0;
    for (std::int64_t i = 0; i < X.rows; ++i) cum[i] = acc = tl::num::add(acc, weight[i]);
    TL_REQUIRE(acc > 0.0, ValueError, "forest_fit: the weights sum to zero");
    in.cum_weight = cum.data();
  }
  return ctx.dispatch([&] { return forest_detail::fit_cpu(ctx, in, p); },
                      [&] { return forest_detail::fit_cuda(ctx, X, in, p); });
}

template <class T>
void forest_apply(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                  const std::int64_t* children_left, const std::int64_t* children_right, const std::int64_t* feature,
                  const double* threshold, std::int64_t* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0 && n_trees >= 0, ValueError, "forest_apply: negative shape");
  check_placement(ctx, X, "X");
  // Every node's feature must be one of X's columns (leaves: -2) and every
  // child a node of its own tree, else a walk could leave the arrays.
  for (std::int64_t t = 0; t < n_trees; ++t) {
    const std::int64_t n = offsets[t + 1] - offsets[t];
    TL_REQUIRE(n >= 1, ValueError, "forest_apply: tree ", t, " has no nodes");
    for (std::int64_t k = offsets[t]; k < offsets[t + 1]; ++k) {
      const bool leaf = children_left[k] < 0;
      TL_REQUIRE(
          leaf ? children_right[k] < 0
               : (children_left[k] > k - offsets[t] && children_left[k] < n && children_right[k] > k - offsets[t] &&
                  children_right[k] < n && feature[k] >= 0 && feature[k] < X.cols),
          ValueError, "forest_apply: tree ", t, " is malformed at node ", k - offsets[t]);
    }
  }
  if (X.rows == 0 || n_trees == 0) return;
  ctx.dispatch(
      [&] {
        forest_detail::apply_cpu(ctx, X, n_trees, offsets, children_left, children_right, feature, threshold, out);
      },
      [&] {
        forest_detail::apply_cuda(ctx, X, n_trees, offsets, children_left, children_right, feature, threshold, out);
      });
}

namespace forest_detail {
void append_tree(ForestTrees& f, const TreeOut& o, std::int64_t n, std::int64_t n_values) {
  if (f.offsets.empty()) f.offsets.push_back(0);
  f.offsets.push_back(f.offsets.back() + n);
  f.children_left.insert(f.children_left.end(), o.left, o.left + n);
  f.children_right.insert(f.children_right.end(), o.right, o.right + n);
  f.feature.insert(f.feature.end(), o.feature, o.feature + n);
  f.n_node_samples.insert(f.n_node_samples.end(), o.n_node, o.n_node + n);
  f.threshold.insert(f.threshold.end(), o.threshold, o.threshold + n);
  f.impurity.insert(f.impurity.end(), o.impurity, o.impurity + n);
  f.weighted_n_node_samples.insert(f.weighted_n_node_samples.end(), o.wn, o.wn + n);
  f.value.insert(f.value.end(), o.value, o.value + n * n_values);
}
}  // namespace forest_detail

#define TL_FOREST_INST(T)                                                                                     \
  template ForestTrees forest_fit<T>(const Context&, MatrixView<const T>, const std::int32_t*, const double*, \
                                     const double*, std::int64_t, const ForestParams&);                       \
  template ForestTrees forest_fit<T>(const Context&, MatrixView<const T>, const std::int32_t*, const double*, \
                                     const double*, std::int64_t, const std::int64_t*, const ForestParams&);  \
  template void forest_apply<T>(const Context&, MatrixView<const T>, std::int64_t, const std::int64_t*,       \
                                const std::int64_t*, const std::int64_t*, const std::int64_t*, const double*, \
                                std::int64_t*);
TL_FOREST_INST(float)
TL_FOREST_INST(double)
#undef TL_FOREST_INST

}  // namespace tl
