// Agglomerative (hierarchical) clustering on the CPU and CUDA backends:
// scikit-learn's trees (sklearn.cluster.AgglomerativeClustering without a
// connectivity matrix) with the same merge order, node numbering and cut
// (docs/NUMERICS.md "Agglomerative clustering").
//
// - single linkage: Prim's minimum spanning tree with the distances
//   computed on the fly (memory O(n) beyond X), scikit-learn's and SciPy's
//   scan (the next vertex is the lowest index of the smallest distance to
//   the tree), its edges stably sorted by weight and labelled by union-find.
//   Metrics scikit-learn serves itself (euclidean, manhattan) keep the
//   roots in edge order (_hierarchical_fast.single_linkage_label); cosine
//   and precomputed go through SciPy's mst_single_linkage, whose label()
//   puts the smaller root first.
// - complete, average, ward: SciPy's nearest-neighbour chain
//   (scipy/cluster/_hierarchy.pyx nn_chain) with its Lance-Williams updates
//   on the condensed float64 distance matrix, n (n - 1) / 2 values: at most
//   kAggloMaxCondensedSamples samples.
// Distances are the project's exact distance chains (twinlearn/neighbors/
// distance.hpp; euclidean by differences), computed on the context's
// backend; the merges are exact comparisons and integer bookkeeping on the
// host, so the tree is the same bits on the CPU and on a GPU.
#pragma once
#include <cstdint>
#include <string>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/neighbors/distance.hpp"

namespace tl {

enum class Linkage : int { Ward = 0, Complete = 1, Average = 2, Single = 3 };

// "ward", "complete", "average", "single"; ValueError otherwise.
Linkage parse_linkage(const std::string& name);

// The largest sample count of the condensed-matrix linkages (complete,
// average, ward): 40000 samples hold 6.4 GB of float64 distances.
inline constexpr std::int64_t kAggloMaxCondensedSamples = 40000;

// The tree of the rows of X (n >= 2 rows, float64, host or the context's
// device) under metric (Euclidean, Manhattan or Cosine; Euclidean by
// differences whatever metric.direct says). Outputs on the host:
// children (n - 1) x 2 (row k: the nodes merged into node n + k),
// distances n - 1 (the merge heights, non-decreasing).
void agglomerative_tree(const Context& ctx, MatrixView<const double> X, Metric metric, Linkage linkage,
                        std::int64_t* children, double* distances);

// The tree of a precomputed distance matrix D (n x n, host; only the entries
// above the diagonal are read, as SciPy's condensed form takes them; they
// must be finite). The merges run on the host for either backend.
void agglomerative_tree_precomputed(const Context& ctx, MatrixView<const double> D, Linkage linkage,
                                    std::int64_t* children, double* distances);

// Structured trees: scikit-learn's ward_tree and linkage_tree with a
// connectivity graph (sklearn/cluster/_agglomerative.py), step for step.
// The graph is CSR on the host (offsets n + 1, indices ascending within a
// row), symmetric and connected (the caller completes it as scikit-learn's
// _fix_connectivity does). X (host) is the n x d data (float64), or with
// `precomputed` the n x n distance matrix, read at X[i, j] for the edge i, j.
// Merges run until node n_nodes - 1 (n_nodes = 2n - 1 for the full tree,
// 2n - n_clusters for a partial one). Outputs on the host: children
// (n_nodes - n) x 2, distances n_nodes - n, parent n_nodes (each node's
// parent, itself for the roots).
//
// - ward: the heap of (inertia, i, j) tuples, inertia by scikit-learn's
//   compute_ward_dist, (m_i m_j) / (m_i + m_j) * sum_f (s_if / m_i - s_jf / m_j)^2
//   with the feature sum in increasing f; distances sqrt(2 inertia).
// - complete, average: the heap of edges ordered by weight alone, the
//   cluster-to-cluster distances merged as _hierarchical_fast's max_merge
//   and average_merge (an entry of one cluster only is kept as it is).
//   Edge weights: the project's pair distances (euclidean by differences),
//   or X[i, j] precomputed; with float32_weights rounded to float32 (the
//   precision scikit-learn's paired distances of float32 data have).
// Python's heapq algorithm is reproduced (twinlearn's sifts are heapq's),
// so the pops, and therefore children_, are scikit-learn's wherever the
// weights are the same bits. Single linkage takes the graph's minimum
// spanning tree instead (agglomerative_label_edges).
void agglomerative_tree_structured(MatrixView<const double> X, bool precomputed, Metric metric, Linkage linkage,
                                   const std::int64_t* offsets, const std::int64_t* indices, std::int64_t n_nodes,
                                   bool float32_weights, std::int64_t* children, double* distances,
                                   std::int64_t* parent);

// w[e] = the distance of rows[e] and cols[e] (e < m): the pair distances of
// agglomerative_tree_structured. X on the host.
void agglomerative_edge_distances(MatrixView<const double> X, bool precomputed, Metric metric, const std::int64_t* rows,
                                  const std::int64_t* cols, std::int64_t m, bool float32_weights, double* w);

// scikit-learn's _single_linkage_label of the m = n - 1 spanning-tree edges
// (a[k], b[k], w[k]): stably sorted by weight, then labelled by union-find
// (children: the roots of a and b in that order).
void agglomerative_label_edges(std::int64_t n, const std::int64_t* a, const std::int64_t* b, const double* w,
                               std::int64_t* children, double* distances);

// scikit-learn's _hc_cut: labels (n_leaves entries) of the n_clusters
// clusters of the tree, numbered by the position of each cluster's node in
// the heap that _hc_cut's heapq operations leave behind.
void agglomerative_cut(std::int64_t n_clusters, std::int64_t n_leaves, const std::int64_t* children,
                       std::int64_t* labels);

}  // namespace tl
