// Isolation forest (Liu, Ting, Zhou 2008; scikit-learn's IsolationForest):
// fitting the isolation trees and scoring rows by their mean path length.
//
// Trees are built on the host, one sequential pass per tree (a tree holds at
// most max_samples rows, 256 by default), in parallel over the CPU threads
// whatever the context's device; scoring runs on the context's device.
//
// Every random draw comes from the counter-based generator (core/rng.hpp)
// keyed by (seed, tree, node): stream (purpose << 62) | (t << 32) | k, with
// t the tree's global index (< 2^30) and k the node (purpose 0: the node's
// feature order, 1: the node's threshold, 2: tree t's rows, 3: tree t's
// features, k = 0). A tree is a pure function of the data, the parameters,
// the seed and t: neither the thread count, nor the device, nor the order
// trees are built in changes a bit.
//
// Tree t:
//  - rows: max_samples draws from 0..rows-1. Without weights: without
//    replacement by Floyd's algorithm on rng::integer draws, or with
//    replacement (bootstrap) rng::integer(seed, stream, j, rows). With
//    weights (probabilities of the draws, as scikit-learn >= 1.9):
//    without replacement the max_samples smallest (key, index) pairs of
//    rng::weighted_key (Efraimidis-Spirakis); with replacement draw j is
//    the first row whose canonical cdf (weighted_cdf, random.hpp) exceeds
//    u_j * total. The tree is grown on the distinct drawn rows.
//  - features: max_features of the columns (all, in order, when
//    max_features == cols), drawn by Floyd's algorithm, sorted increasingly;
//    the tree's feature k is column features[k].
//  - growth: depth first, left child first, nodes numbered in creation
//    order. A node is a leaf at depth max_depth, with fewer than two rows,
//    or when every feature is constant on it (max - min <= 1e-7 in the
//    column's type, scikit-learn's FEATURE_THRESHOLD). Otherwise features
//    are tried in a random order (a Fisher-Yates draw per node) until a
//    non-constant one; the threshold is lo + u (hi - lo) in double (lo, hi
//    the node's extremes, u uniform in [0, 1)), replaced by lo when it
//    rounds to hi; rows with double(x) <= threshold go left.
//  - path[k] = depth(k) + c(n_node_samples[k]), c the average path length
//    of an unsuccessful BST search (iforest_average_path_length).
//
// score(x) = -2^(-E / (n_trees c(max_samples))), E the sum over the trees,
// in tree order, of path[leaf of x]; -0.5 when the denominator is 0.
#pragma once
#include <cstdint>
#include <vector>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

struct IForestParams {
  std::int64_t n_trees = 100;
  std::int64_t first_tree = 0;    // global index of the first tree (warm start)
  std::int64_t max_samples = 256; // rows drawn per tree, 1..rows (or any with bootstrap)
  std::int64_t max_features = 0;  // columns per tree, 1..cols
  bool bootstrap = false;         // draw the rows with replacement
  std::uint64_t seed = 0;
};

// The fitted trees, all nodes of all trees concatenated: tree t owns nodes
// offsets[t] .. offsets[t + 1] - 1, numbered from 0 within the tree
// (children tree-local, -1 at a leaf; feature: the tree's own column index
// (into its features), -2 at a leaf; threshold -2.0 at a leaf).
// samples: n_trees x max_samples drawn rows, in draw order; features:
// n_trees x max_features columns, increasing.
struct IForestTrees {
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> children_left, children_right, feature, n_node_samples, depth;
  std::vector<double> threshold, weighted_n_node_samples, path;
  std::vector<std::int64_t> samples, features;
};

// c(n): 0 for n <= 1, 1 for n = 2, else 2 (log(n - 1) + gamma) - 2 (n - 1) / n,
// with the project's log (identical on both backends).
double iforest_average_path_length(std::int64_t n);

// Fits p.n_trees trees on X (host memory, rows x cols). weight: rows
// non-negative probabilities of the draws (host), or null.
template <class T>
IForestTrees iforest_fit(const Context& ctx, MatrixView<const T> X, const double* weight, const IForestParams& p);

// score_samples of every row of X (host or the context's device): out[i]
// (host, rows doubles). The trees as concatenated arrays with feature
// holding X's column (leaves -2) and path the per-node path lengths;
// max_samples the forest's max_samples_.
template <class T>
void iforest_score(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                   const std::int64_t* children_left, const std::int64_t* children_right, const std::int64_t* feature,
                   const double* threshold, const double* path, std::int64_t max_samples, double* out);

}  // namespace tl
