// DBSCAN on the CPU and CUDA backends: scikit-learn's labels, computed in an
// order-independent way (docs/NUMERICS.md "DBSCAN").
//
// scikit-learn's rule (sklearn/cluster/_dbscan_inner.pyx): with N(i) the
// points within eps of point i (itself included when its self-distance is
// <= eps),
//  - i is a core point when the weighted count sum_{j in N(i)} w[j] (the
//    count |N(i)| without weights) is >= min_samples;
//  - clusters are grown from the lowest-index unlabelled core point, over
//    core points, so with a symmetric neighbourhood relation a cluster is a
//    connected component of the graph of core points, and cluster ids follow
//    the components' lowest core indices (id = rank of that index);
//  - a non-core point i joins the first cluster that reaches it: the lowest
//    id among the clusters of the core points j with i in N(j); none: -1.
// Both backends compute exactly that and nothing order dependent: core
// counts are integers, or a float64 sum of the weights of N(i) in increasing
// index order (one sequential chain, dbscan_common.hpp, the same on host and
// device); components by union-find (host) or min-label hooking with atomics
// on integers (device), whose result is unique (every point's root is its
// component's lowest index); border labels by an integer minimum. So every
// numeric mode delivers `identical`.
// A neighbourhood relation that is not symmetric on the pairs with a core
// point (a precomputed matrix or graph that is not symmetric) is served by
// scikit-learn's own sequential expansion on the host, which then defines
// the result.
#pragma once
#include <cstdint>
#include <vector>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/neighbors/distance.hpp"

namespace tl {

struct DbscanParams {
  double eps = 0.5;              // > 0
  std::int64_t min_samples = 5;  // >= 1
};

// The eps-neighbourhood graph of the rows of X (n x d, host or the context's
// device) under `metric` (twinlearn/neighbors/distance.hpp): row i lists the
// j with distance(X[i], X[j]) <= eps, ascending, as CSR on the host (offsets:
// n + 1 entries; ind: offsets[n] entries). Distances are computed block by
// block (at most about 16 Mi values at a time); memory is O(n + pairs).
template <class T>
void eps_neighborhoods(const Context& ctx, MatrixView<const T> X, Metric metric, double eps,
                       std::vector<std::int64_t>& offsets, std::vector<std::int64_t>& ind);

// DBSCAN labels from a neighbourhood graph (host CSR: offsets n + 1, ind
// offsets[n] entries, each row strictly ascending and in [0, n)). weight: n
// float64 entries (host) or nullptr for unit weights. Outputs (host, n
// entries): labels (cluster id or -1), is_core (0 or 1). Runs on the
// context's device (the graph is copied there).
void dbscan_from_graph(const Context& ctx, std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                       const double* weight, const DbscanParams& params, std::int64_t* labels, std::uint8_t* is_core);

// DBSCAN of the rows of X: eps_neighborhoods then dbscan_from_graph. Returns
// the number of neighbour pairs (offsets[n]).
template <class T>
std::int64_t dbscan_fit(const Context& ctx, MatrixView<const T> X, Metric metric, const double* weight,
                        const DbscanParams& params, std::int64_t* labels, std::uint8_t* is_core);

}  // namespace tl
