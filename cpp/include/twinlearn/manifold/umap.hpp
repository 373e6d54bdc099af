// UMAP's layout optimisation (McInnes, Healy, Melville 2018; umap-learn's
// optimize_layout_euclidean) as a synchronous, reproducible scheme.
//
// The graph is a CSR over the moving ("head") vertices: edge e of row i
// joins head vertex i to tail vertex indices[e] with epochs_per_sample[e]
// (umap-learn's make_epochs_per_sample; a value <= 0 is never sampled).
// Every epoch n = 0 .. n_epochs - 1 runs three steps:
//  1. schedule, per edge (umap-learn's rule, float64 state): the edge is
//     sampled when next[e] <= n (then next[e] += eps[e]), and draws
//     n_neg = floor((n - next_neg[e]) / (eps[e] / negative_sample_rate))
//     negative samples (then next_neg[e] += n_neg eps[e] / rate);
//  2. displacement, per head vertex i, from the positions at the start of
//     the epoch: delta_i = sum, in this order, over the sampled edges e of
//     row i in CSR order of alpha * (attract(e) followed by its n_neg
//     repulsions from tail vertices rng::integer(seed, stream(n, k), e,
//     n_tail), k = 0 .. n_neg - 1), then (move_other only) over the sampled
//     edges whose tail is i, in the order of the reverse CSR, of
//     -alpha * attract(e) -- the other end's share of the same edge;
//  3. y_i += delta_i for every head vertex.
// alpha = initial_alpha (1 - n / n_epochs) in double, rounded to float.
// attract and repel are umap-learn's gradients, each coordinate clipped to
// [-4, 4], in float32 with the project's pow (uniform arithmetic, no fused
// multiply-add): the result is a pure function of the inputs and the seed,
// the same bits for any thread count and on both backends.
#pragma once
#include <cstdint>

#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl {

struct UmapLayoutParams {
  double a = 1.576943460405378;  // the curve 1 / (1 + a d^(2b))
  double b = 0.8950608781227859;
  double gamma = 1.0;  // repulsion_strength
  double initial_alpha = 1.0;
  double negative_sample_rate = 5.0;
  std::int64_t n_epochs = 200;
  std::uint64_t seed = 0;
  bool move_other = true;  // fit: tail is head and both ends move
};

// Stream of the k-th negative sample of an epoch (purpose 3 in the top bits).
TL_HD std::uint64_t umap_negative_stream(std::int64_t epoch, std::int64_t k) {
  return (std::uint64_t(3) << 62) | (static_cast<std::uint64_t>(epoch) << 24) | static_cast<std::uint64_t>(k);
}

// Optimises head (host, n_head x dim float32, row-major) in place. tail
// (host, n_tail x dim) is read only; with move_other it must be null (the
// tail is head, n_tail == n_head) and rindptr (n_head + 1) / redges (the
// edge ids grouped by tail vertex, increasing within a group) give the
// reverse CSR. indptr: n_head + 1, indices, eps: indptr[n_head] entries.
void umap_layout(const Context& ctx, float* head, std::int64_t n_head, const float* tail, std::int64_t n_tail,
                 std::int64_t dim, const std::int64_t* indptr, const std::int64_t* indices, const double* eps,
                 const std::int64_t* rindptr, const std::int64_t* redges, const UmapLayoutParams& p);

}  // namespace tl
