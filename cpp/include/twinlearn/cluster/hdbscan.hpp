// HDBSCAN on the CPU and CUDA backends: scikit-learn's labels and
// probabilities (sklearn/cluster/_hdbscan, docs/NUMERICS.md "HDBSCAN").
//
// The pipeline, scikit-learn's:
//  1. core distances: core[i] = the distance from row i to its k-th nearest
//     row (k = min_samples, i itself included, ties by lowest index);
//  2. the minimum spanning tree of the mutual-reachability graph
//     mrd(i, j) = max(core[i], core[j], d(i, j) / alpha), by Prim's
//     algorithm from row 0 with the distances computed on the fly (memory
//     O(n)): at every step each row j outside the tree lowers its best
//     reachability to mrd(current, j) when that is strictly smaller
//     (recording `current` as its source), and the row that joins next is the
//     one of smallest (reachability, index): ties go to the lowest index,
//     exactly scikit-learn's first strict minimum;
//  3. the edges sorted by weight (stable), the single-linkage tree by
//     union-find, the condensed tree (min_cluster_size), the stabilities,
//     'eom' or 'leaf' selection (with cluster_selection_epsilon,
//     max_cluster_size, allow_single_cluster), labels and probabilities:
//     host code written after sklearn/cluster/_hdbscan/_tree.pyx, step by
//     step, so that the same tree gives the same numbers.
// Steps 1 and 2 run on the context's device. Every floating-point value of
// step 2 is one TL_HD function (cluster/hdbscan/hdbscan_common.hpp) and the
// argmin is a fixed (value, index) order, so the CPU and any GPU give the
// same tree, bit for bit, in every numeric mode; step 3 is host code.
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/neighbors/distance.hpp"

namespace tl {

struct HdbscanParams {
  std::int64_t min_cluster_size = 5;          // >= 2
  double cluster_selection_epsilon = 0.0;     // >= 0
  std::int64_t max_cluster_size = 0;          // 0: no limit ('eom' only)
  bool leaf = false;                          // cluster_selection_method: 'leaf' (true) or 'eom'
  bool allow_single_cluster = false;
};

// core[i] = distance from row i of X (n x d, host or the context's device) to
// its k-th nearest row, itself included (1 <= k <= n). Metric as
// twinlearn/neighbors/distance.hpp ((sq)euclidean by differences).
void hdbscan_core_distances(const Context& ctx, MatrixView<const double> X, Metric metric, std::int64_t k,
                            double* core);

// The same from a square distance matrix D (n x n, host): the k-th smallest
// entry of each row (the diagonal included), each entry divided by alpha
// first (scikit-learn's brute path scales the matrix before taking them).
void hdbscan_core_distances_precomputed(const Context& ctx, MatrixView<const double> D, std::int64_t k,
                                        double alpha, double* core);

// Prim's minimum spanning tree of the mutual-reachability graph (step 2).
// X: n x d rows (host), or with `precomputed` the n x n distance matrix
// (host). core: n entries (host). Outputs (host, n - 1 entries each, in the
// order Prim adds the rows): src, dst, weight. With source_is_current the
// source of each edge is the row added just before (scikit-learn's dense
// brute path records that one) instead of the row that reached dst.
void hdbscan_mst(const Context& ctx, MatrixView<const double> X, Metric metric, bool precomputed, const double* core,
                 double alpha, bool source_is_current, std::int64_t* src, std::int64_t* dst, double* weight);

// Step 3 on the host: labels (-1 noise) and probabilities of the n points
// from the n - 1 spanning-tree edges.
void hdbscan_labels(std::int64_t n, const std::int64_t* src, const std::int64_t* dst, const double* weight,
                    const HdbscanParams& params, std::int64_t* labels, double* probabilities);

}  // namespace tl
