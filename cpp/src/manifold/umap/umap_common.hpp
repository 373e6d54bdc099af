// UMAP layout: the per-edge schedule and the per-vertex displacement shared
// by the CPU and CUDA backends (umap.hpp states the scheme).
#pragma once
#include <cstdint>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/rng.hpp"
#include "twinlearn/manifold/umap.hpp"

namespace tl::umap_detail {

// Everything a vertex update reads, as raw pointers (host or device).
struct LayoutArgs {
  const float* head;  // positions at the start of the epoch
  const float* tail;  // head itself when move_other
  std::int64_t n_head, n_tail, dim;
  const std::int64_t* indptr;
  const std::int64_t* indices;
  const std::int64_t* rindptr;  // null unless move_other
  const std::int64_t* redges;
  const std::int64_t* edge_head;  // head vertex of each edge (move_other)
  const std::int64_t* count;      // per edge: -1 not sampled, else its negative samples
  float a, b, gamma, alpha;
  std::uint64_t seed;
  std::int64_t epoch;
};

TL_HD float clip4(float v) { return v > 4.0f ? 4.0f : (v < -4.0f ? -4.0f : v); }

TL_HD float sq_dist(const float* x, const float* y, std::int64_t dim) {
  float s = 0.0f;
  for (std::int64_t d = 0; d < dim; ++d) {
    const float t = tl::num::sub(x[d], y[d]);
    s = tl::num::add(s, tl::num::mul(t, t));
  }
  return s;
}

// umap-learn's attractive coefficient -2ab d^(2(b-1)) / (1 + a d^(2b)), 0 at d = 0.
TL_HD float attract_coeff(float d2, float a, float b) {
  using namespace tl::num;
  if (!(d2 > 0.0f)) return 0.0f;
  const float pb = tl::num::pow(d2, b);  // d^(2(b-1)) as d^(2b) / d^2: one pow
  return div(mul(mul(mul(-2.0f, a), b), div(pb, d2)), add(mul(a, pb), 1.0f));
}

// umap-learn's repulsive coefficient 2 gamma b / ((0.001 + d^2)(1 + a d^(2b))).
TL_HD float repel_coeff(float d2, float a, float b, float gamma) {
  using namespace tl::num;
  const float pb = tl::num::pow(d2, b);
  return div(mul(mul(2.0f, gamma), b), mul(add(0.001f, d2), add(mul(a, pb), 1.0f)));
}

// Step 1 for edge e: count[e] and the schedule's state.
TL_HD void schedule_edge(std::int64_t e, std::int64_t epoch, double rate, const double* eps, double* next,
                         double* next_neg, std::int64_t* count) {
  using namespace tl::num;
  const double n = static_cast<double>(epoch);
  if (!(eps[e] > 0.0) || !(next[e] <= n)) {
    count[e] = -1;
    return;
  }
  next[e] = add(next[e], eps[e]);
  const double epn = div(eps[e], rate);
  double k = div(sub(n, next_neg[e]), epn);
  const std::int64_t nn = k > 0.0 ? static_cast<std::int64_t>(k) : 0;
  next_neg[e] = add(next_neg[e], mul(static_cast<double>(nn), epn));
  count[e] = nn;
}

// Step 2 for head vertex i: out (dim floats) = delta_i.
TL_HD void vertex_delta(const LayoutArgs& g, std::int64_t i, float* out) {
  using namespace tl::num;
  const std::int64_t dim = g.dim;
  const float* yi = g.head + i * dim;
  for (std::int64_t d = 0; d < dim; ++d) out[d] = 0.0f;
  for (std::int64_t e = g.indptr[i]; e < g.indptr[i + 1]; ++e) {
    const std::int64_t nneg = g.count[e];
    if (nneg < 0) continue;
    const float* yj = g.tail + g.indices[e] * dim;
    const float c = attract_coeff(sq_dist(yi, yj, dim), g.a, g.b);
    for (std::int64_t d = 0; d < dim; ++d) out[d] = add(out[d], mul(clip4(mul(c, sub(yi[d], yj[d]))), g.alpha));
    for (std::int64_t k = 0; k < nneg; ++k) {
      const std::int64_t t = static_cast<std::int64_t>(tl::rng::integer(g.seed, umap_negative_stream(g.epoch, k),
                                                                        static_cast<std::uint64_t>(e),
                                                                        static_cast<std::uint64_t>(g.n_tail)));
      const float* yk = g.tail + t * dim;
      const float d2 = sq_dist(yi, yk, dim);
      if (!(d2 > 0.0f)) continue;  // the vertex itself or a coincident one: no push
      const float r = repel_coeff(d2, g.a, g.b, g.gamma);
      if (!(r > 0.0f)) continue;
      for (std::int64_t d = 0; d < dim; ++d) out[d] = add(out[d], mul(clip4(mul(r, sub(yi[d], yk[d]))), g.alpha));
    }
  }
  if (!g.rindptr) return;
  for (std::int64_t q = g.rindptr[i]; q < g.rindptr[i + 1]; ++q) {
    const std::int64_t e = g.redges[q];
    if (g.count[e] < 0) continue;
    const float* yh = g.head + g.edge_head[e] * dim;  // the edge's head; yi is its tail
    const float c = attract_coeff(sq_dist(yh, yi, dim), g.a, g.b);
    for (std::int64_t d = 0; d < dim; ++d) out[d] = sub(out[d], mul(clip4(mul(c, sub(yh[d], yi[d]))), g.alpha));
  }
}

TL_HD float epoch_alpha(double initial, std::int64_t epoch, std::int64_t n_epochs) {
  using namespace tl::num;
  return static_cast<float>(mul(initial, sub(1.0, div(static_cast<double>(epoch), static_cast<double>(n_epochs)))));
}

void layout_cpu(const Context& ctx, float* head, const float* tail, LayoutArgs g, const double* eps,
                const UmapLayoutParams& p);
void layout_cuda(const Context& ctx, float* head, const float* tail, LayoutArgs g, const double* eps,
                 const UmapLayoutParams& p);

}  // namespace tl::umap_detail
