// Random forests and extremely randomized trees: fitting a set of decision
// trees (CPU threads or the GPU, the same trees bit for bit) and routing rows
// to their leaves.
//
// Every random draw comes from the counter-based generator (core/rng.hpp)
// keyed by (seed, tree, node): stream (purpose << 62) | (t << 32) | k, with
// t the tree's global index (< 2^30) and k the node (purpose 0: the node's
// feature order, 1: extra trees' thresholds, 2: tree t's bootstrap, k = 0).
// A tree is built by
// one sequential pass (depth first, left child first, or best first with
// max_leaf_nodes; nodes numbered in the order they are created), so it is a pure function of the data, the
// parameters, the seed and its global index t: neither the thread count, nor
// the device, nor the order trees are built in changes a bit.
#pragma once
#include <cstdint>
#include <vector>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

// Regression criteria: SquaredError, Poisson (half Poisson deviance; y >= 0
// with a positive sum), AbsoluteError (mean absolute deviation from the
// weighted median; leaf values are weighted medians).
enum class ForestCriterion : int { Gini = 0, Entropy = 1, SquaredError = 2, Poisson = 3, AbsoluteError = 4 };
enum class ForestSplitter : int { Best = 0, Random = 1 };

struct ForestParams {
  ForestCriterion criterion = ForestCriterion::Gini;
  ForestSplitter splitter = ForestSplitter::Best;  // Random: extra trees
  std::int64_t n_trees = 100;
  std::int64_t first_tree = 0;  // global index of the first tree (warm start)
  std::int64_t max_depth = -1;  // -1: unlimited
  // -1: depth-first growth; >= 2: best-first growth (the frontier node of
  // largest weighted impurity improvement is split next, the node created
  // first on ties) until this many leaves.
  std::int64_t max_leaf_nodes = -1;
  std::int64_t min_samples_split = 2;
  std::int64_t min_samples_leaf = 1;
  double min_weight_fraction_leaf = 0.0;
  double min_impurity_decrease = 0.0;
  std::int64_t max_features = 0;  // features tried per node, 1..n_features
  bool bootstrap = true;
  std::int64_t n_samples_bootstrap = 0;  // draws with replacement per tree (bootstrap only)
  bool balanced_subsample = false;       // class weights from each tree's bootstrap
  std::uint64_t seed = 0;
  bool keep_in_bag = false;  // return each tree's bootstrap counts
};

// The fitted trees, all nodes of all trees concatenated: tree t owns nodes
// offsets[t] .. offsets[t + 1] - 1, numbered from 0 within the tree
// (children_left / children_right are tree-local, -1 at a leaf; feature is
// -2 and threshold -2.0 at a leaf, as scikit-learn's tree_).
// value: n_values doubles per node: the weighted class counts
// (classification, n_values = n_classes) or the weighted mean of y
// (regression, n_values = 1; the weighted median with AbsoluteError).
struct ForestTrees {
  std::int64_t n_values = 1;
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> children_left, children_right, feature, n_node_samples;
  std::vector<double> threshold, impurity, weighted_n_node_samples, value;
  std::vector<std::int32_t> in_bag;  // n_trees * rows bootstrap counts when keep_in_bag
};

// Fits p.n_trees trees on X (rows x cols, host or the context's device).
// Classification: y_class holds rows labels in [0, n_classes) (host) and
// y_reg is null; regression: n_classes == 0 and y_reg holds rows targets
// (host). weight: rows non-negative row weights (sample_weight times class
// weights), host, or null for ones. With bootstrap (scikit-learn >= 1.9) the
// weights are the probabilities of the draws and each tree is fitted on its
// draw counts; without, the trees are fitted on the weights.
template <class T>
ForestTrees forest_fit(const Context& ctx, MatrixView<const T> X, const std::int32_t* y_class, const double* y_reg,
                       const double* weight, std::int64_t n_classes, const ForestParams& p);

// Multi-output y: y_class / y_reg hold rows x n_outputs values (row-major);
// n_classes: each output's class count (classification) or null
// (regression). Impurities, proxies and improvements are scikit-learn's
// multi-output ones (impurity averaged over the outputs; squared error's
// proxy sums the outputs' S^2 / w). value then holds, per node, n_outputs x
// max(n_classes) class weights (an output's row zero past its own count) or
// n_outputs means (medians with AbsoluteError). n_outputs = 1 with
// n_classes = &C is the single-output forest_fit above, bit for bit.
template <class T>
ForestTrees forest_fit(const Context& ctx, MatrixView<const T> X, const std::int32_t* y_class, const double* y_reg,
                       const double* weight, std::int64_t n_outputs, const std::int64_t* n_classes,
                       const ForestParams& p);

// The leaf of every row in every tree: out[i * n_trees + t] (tree-local node
// index). Rows go left where double(x) <= threshold. The tree arrays as
// forest_fit gives them (host memory); X: host or the context's device; out:
// rows * n_trees, host memory.
template <class T>
void forest_apply(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                  const std::int64_t* children_left, const std::int64_t* children_right, const std::int64_t* feature,
                  const double* threshold, std::int64_t* out);

}  // namespace tl
