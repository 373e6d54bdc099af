// HDBSCAN steps shared by the CPU and CUDA backends
// (twinlearn/cluster/hdbscan.hpp): every floating-point value of Prim's
// spanning tree is computed here, once, so both give the same bits.
#pragma once
#include <cstdint>

#include "core/distance/distance_common.hpp"
#include "twinlearn/cluster/hdbscan.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/ties.hpp"

namespace tl::detail {

// The distance of rows a and b (d features) for metric family F: the chain of
// dist::accumulate, then the metric's output value (euclidean: sqrt of the
// direct squared chain; cosine from the dot chain and the rows' squared
// norms na, nb, which are dist::sqnorm).
template <dist::Family F>
TL_HD double hdbscan_pair_distance(const double* a, const double* b, std::int64_t d, MetricKind kind, double p,
                                   double na, double nb) {
  const double acc = dist::accumulate<double, F>(a, b, d, p);
  if (F == dist::Family::Dot) return dist::cosine_from_dot(na, nb, acc);
  return dist::output_value(kind, acc, p);
}

// The mutual reachability of a pair: max(core_i, core_j, d_ij / alpha), the
// distance divided by alpha only when alpha != 1 (x / 1 is x anyway).
TL_HD double hdbscan_mrd(double ci, double cj, double dij, double alpha) {
  const double s = alpha == 1.0 ? dij : num::div(dij, alpha);
  const double m = ci < cj ? cj : ci;
  return m < s ? s : m;
}

// Prim's update of row j from the current row: a strictly smaller
// reachability replaces the best one and records its source.
TL_HD void hdbscan_prim_update(double mrd, std::int64_t cur, double* best, std::int64_t* source) {
  if (mrd < *best) {
    *best = mrd;
    *source = cur;
  }
}

// Whether candidate (a, ia) beats (b, ib) for the next row: smaller
// reachability, then lower index (ties::argmin_better: NaN last); ib < 0 is
// "no candidate yet".
TL_HD bool hdbscan_prim_better(double a, std::int64_t ia, double b, std::int64_t ib) {
  return ib < 0 || ties::argmin_better(a, ia, b, ib);
}

void hdbscan_mst_cpu(const Context& ctx, MatrixView<const double> X, Metric metric, bool precomputed,
                     const double* core, double alpha, bool source_is_current, std::int64_t* src,
                     std::int64_t* dst, double* weight);
void hdbscan_mst_cuda(const Context& ctx, MatrixView<const double> X, Metric metric, bool precomputed,
                      const double* core, double alpha, bool source_is_current, std::int64_t* src,
                      std::int64_t* dst, double* weight);

// Row squared norms (dist::sqnorm) for the cosine metric, on the host.
void hdbscan_row_sqnorms(MatrixView<const double> X, double* out);

}  // namespace tl::detail
