// DBSCAN steps shared by the CPU and CUDA backends (twinlearn/cluster/dbscan.hpp).
#pragma once
#include <cstdint>

#include "twinlearn/cluster/dbscan.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::detail {

// Whether point i is a core point: |N(i)| >= min_samples without weights;
// with weights, their float64 sum over N(i) in increasing index order (one
// sequential chain from +0.0, the same bits on host and device) compared
// with min_samples.
TL_HD bool dbscan_is_core(const std::int64_t* offsets, const std::int64_t* ind, const double* weight,
                          std::int64_t i, std::int64_t min_samples) {
  const std::int64_t b = offsets[i], e = offsets[i + 1];
  if (weight == nullptr) return e - b >= min_samples;
  double s = 0.0;
  for (std::int64_t k = b; k < e; ++k) s = num::add(s, weight[ind[k]]);
  return s >= static_cast<double>(min_samples);
}

// Whether j's (ascending) row holds i: a binary search.
TL_HD bool dbscan_row_has(const std::int64_t* offsets, const std::int64_t* ind, std::int64_t j, std::int64_t i) {
  std::int64_t lo = offsets[j], hi = offsets[j + 1];
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (ind[mid] < i) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < offsets[j + 1] && ind[lo] == i;
}

// Whether the pair i -> j (j in N(i)) breaks the symmetry the component
// labelling needs: a core point at either end and i not in N(j).
TL_HD bool dbscan_edge_breaks_symmetry(const std::int64_t* offsets, const std::int64_t* ind,
                                       const std::uint8_t* is_core, std::int64_t i, std::int64_t j) {
  return j != i && (is_core[i] || is_core[j]) && !dbscan_row_has(offsets, ind, j, i);
}

// scikit-learn's sequential expansion (_dbscan_inner.pyx) on the host: the
// reference, and the path for a core graph that is not symmetric.
void dbscan_expand_host(std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                        const std::uint8_t* is_core, std::int64_t* labels);

// Cluster ids from the component roots (root[i]: the lowest index of core
// point i's component; anything for non-core points): the id of a component
// is the rank of its root among the roots. cid[i]: core i's cluster id, or
// -1 for non-core points.
void dbscan_cluster_ids(std::int64_t n, const std::int64_t* root, const std::uint8_t* is_core, std::int64_t* cid);

void dbscan_from_graph_cpu(const Context& ctx, std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                           const double* weight, const DbscanParams& params, std::int64_t* labels,
                           std::uint8_t* is_core);
void dbscan_from_graph_cuda(const Context& ctx, std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                            const double* weight, const DbscanParams& params, std::int64_t* labels,
                            std::uint8_t* is_core);

}  // namespace tl::detail
