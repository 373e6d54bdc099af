// CUDA backend of the gradient-boosted trees: split-search kernels. Every
// candidate's gain from a level's histograms, and the best candidate of the
// level (SymmetricTree) or of each node (Depthwise, Lossguide).
// Included by gbdt_cuda.cu alone: the trainer's kernels and the host code
// that launches them form one translation unit.
#pragma once
#include "ensemble/gbdt/gbdt_constraints.hpp"
#include "ensemble/gbdt/gbdt_cuda_common.cuh"

namespace tl::gbdt_cuda {
namespace {

// Block (f = blockIdx.x, leaf = blockIdx.y), thread b = candidate border b of
// feature f (blockDim >= Bp). For each output k in order: the leaf's bins are
// loaded into shared memory and prefix-summed (integers: exact), then thread
// b adds the leaf's gain for "bins <= b go left" (gbdt::prefix_gain) to
// its running sum, as the CPU does. Writes tleaf[(leaf * F + f) * Bp + b] for b < nb[f].
// nan_bin (nan_mode Learned, else nullptr): where nan_bin[f], thread b >= 1
// also sums the gain with bin 0's NaN rows sent right; tleaf gets the better
// of the two (gbdt::nan_right_wins) and tright 1 where the right one won.
// Dh > D (min_data_in_leaf > 1): channel D counts rows, and a candidate
// leaving a child fewer than min_data rows scores -infinity (gbdt::counts_allow).
// bounds, mono (monotonic constraints, else nullptr): the leaves' value bounds
// (2 per leaf) and the features' constraints; the gains are then
// gbdt::prefix_gain_bounded's.
__global__ void leaf_score_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh,
                                  const int* __restrict__ nbor, const ull* __restrict__ maxbits, double lambda,
                                  double min_child_weight, int min_data, const std::uint8_t* __restrict__ nan_bin,
                                  const double* __restrict__ bounds, const int* __restrict__ mono,
                                  double* __restrict__ tleaf, std::uint8_t* __restrict__ tright) {
  __shared__ std::int64_t sg[kBlock], sh[kBlock];
  const std::int64_t f = blockIdx.x, leaf = blockIdx.y;
  const int b = threadIdx.x;
  const int nb = nbor[f];
  if (nb == 0) return;  // uniform across the block
  const double isg = inv_scale_of(maxbits[0]), ish = inv_scale_of(maxbits[1]);
  const bool learn = nan_bin != nullptr && nan_bin[f] && b > 0;
  const bool bnd = bounds != nullptr;
  const double lo = bnd ? bounds[2 * leaf] : 0.0, hi = bnd ? bounds[2 * leaf + 1] : 0.0;
  const int cst = bnd ? mono[f] : 0;
  double t = 0.0, tr = 0.0;
  bool allow = true, allow_r = true;  // min_data_in_leaf
  for (int k = Dh - 1; k >= D; --k) {  // the count channel, when there is one
    const std::int64_t gi = 2 * (((leaf * F + f) * Bp + b) * Dh + k);
    sg[b] = b <= nb ? hist[gi] : 0;
    __syncthreads();
    for (int off = 1; off < kBlock; off <<= 1) {
      const std::int64_t a = b >= off ? sg[b - off] : 0;
      __syncthreads();
      sg[b] += a;
      __syncthreads();
    }
    if (b < nb) {
      allow = gbdt::counts_allow(sg[b], sg[nb], min_data);
      allow_r = gbdt::counts_allow(sg[b] - sg[0], sg[nb], min_data);
    }
    __syncthreads();
  }
  for (int k = 0; k < D; ++k) {
    const std::int64_t gi = 2 * (((leaf * F + f) * Bp + b) * Dh + k);
    sg[b] = b <= nb ? hist[gi] : 0;
    sh[b] = b <= nb ? hist[gi + 1] : 0;
    __syncthreads();
    for (int off = 1; off < kBlock; off <<= 1) {
      const std::int64_t ag = b >= off ? sg[b - off] : 0, ah = b >= off ? sh[b - off] : 0;
      __syncthreads();
      sg[b] += ag;
      sh[b] += ah;
      __syncthreads();
    }
    if (b < nb) {
      const std::int64_t Gt = sg[nb], Ht = sh[nb], GL = sg[b], HL = sh[b];
      const double G = gbdt::dequantize(Gt, isg), H = gbdt::dequantize(Ht, ish);
      t = num::add(t, bnd ? gbdt::prefix_gain_bounded(GL, HL, Gt, Ht, G, H, isg, ish, lambda, min_child_weight, lo,
                                                      hi, cst)
                          : gbdt::prefix_gain(GL, HL, Gt, Ht, G, H, isg, ish, lambda, min_child_weight));
      if (learn)  // sg[0], sh[0]: bin 0, the NaN rows
        tr = num::add(tr, bnd ? gbdt::prefix_gain_bounded(GL - sg[0], HL - sh[0], Gt, Ht, G, H, isg, ish, lambda,
                                                          min_child_weight, lo, hi, cst)
                              : gbdt::prefix_gain(GL - sg[0], HL - sh[0], Gt, Ht, G, H, isg, ish, lambda,
                                                  min_child_weight));
    }
    __syncthreads();
  }
  if (b < nb) {
    const double ninf = -num::double_from_bits(0x7ff0000000000000ULL);
    if (!allow) t = ninf;
    if (!allow_r) tr = ninf;
    const bool right = learn && gbdt::nan_right_wins(t, tr);
    tleaf[(leaf * F + f) * Bp + b] = right ? tr : t;
    if (tright) tright[(leaf * F + f) * Bp + b] = right;
  }
}

struct Cand {
  double score;
  std::int64_t idx;  // -1: none
};

__device__ __forceinline__ bool cand_better(const Cand& a, const Cand& b) {
  if (a.idx < 0) return false;
  if (b.idx < 0) return true;
  return gbdt::better_candidate(a.score, a.idx, b.score, b.idx);
}

__device__ void block_best(Cand c, Cand* shared) {
  shared[threadIdx.x] = c;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && cand_better(shared[threadIdx.x + s], shared[threadIdx.x]))
      shared[threadIdx.x] = shared[threadIdx.x + s];
    __syncthreads();
  }
}

// Grid-stride over candidates idx = f * Bp + b (b < nb[f]): the candidate's
// score is the sum over leaves, in leaf order, of tleaf; each block writes
// its best candidate (a total order: any reduction gives the same winner).
__global__ void candidate_kernel(const double* __restrict__ tleaf, std::int64_t L, int F, int Bp,
                                 const int* __restrict__ nbor, Cand* __restrict__ block_out) {
  __shared__ Cand sc[kBlock];
  Cand best{0.0, -1};
  const std::int64_t total = static_cast<std::int64_t>(F) * Bp;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t f = idx / Bp, b = idx % Bp;
    if (b >= nbor[f]) continue;
    double s = 0.0;
    for (std::int64_t leaf = 0; leaf < L; ++leaf) s = num::add(s, tleaf[(leaf * F + f) * Bp + b]);
    const Cand c{s, idx};
    if (cand_better(c, best)) best = c;
  }
  block_best(best, sc);
  if (threadIdx.x == 0) block_out[blockIdx.x] = sc[0];
}

// One block: the best of the per-block candidates, written as the split.
__global__ void choose_split_kernel(const Cand* __restrict__ block_best_in, int nblocks, int Bp,
                                    std::int32_t* __restrict__ sfeat, std::int32_t* __restrict__ sbin,
                                    double* __restrict__ sgain) {
  __shared__ Cand sc[kBlock];
  Cand best{0.0, -1};
  for (int i = threadIdx.x; i < nblocks; i += blockDim.x)
    if (cand_better(block_best_in[i], best)) best = block_best_in[i];
  block_best(best, sc);
  if (threadIdx.x == 0) {
    const std::int64_t idx = sc[0].idx < 0 ? 0 : sc[0].idx;
    *sfeat = static_cast<std::int32_t>(idx / Bp);
    *sbin = static_cast<std::int32_t>(idx % Bp);
    *sgain = sc[0].score;
  }
}

// Depthwise: block per leaf of the level; the leaf's own best candidate
// over idx = f * Bp + b (b < nb[f]) by its own gain tleaf, kept when
// gbdt::node_splits, else (-1, -1, 0), written to node slot `leaf`; sbin
// gets the split code (gbdt::kNanRight where tright says so; tright may be nullptr).
// allowed (interaction constraints, else nullptr): allowed[leaf * F + f] = 0
// where feature f may not split the leaf.
__global__ void node_best_kernel(const double* __restrict__ tleaf, const std::uint8_t* __restrict__ tright, int F,
                                 int Bp, const int* __restrict__ nbor, const std::uint8_t* __restrict__ allowed,
                                 double min_split_gain,
                                 std::int32_t* __restrict__ sfeat, std::int32_t* __restrict__ sbin,
                                 double* __restrict__ sgain) {
  __shared__ Cand sc[kBlock];
  const std::int64_t leaf = blockIdx.x;
  Cand best{0.0, -1};
  const std::int64_t total = static_cast<std::int64_t>(F) * Bp;
  for (std::int64_t idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const std::int64_t f = idx / Bp, b = idx % Bp;
    if (b >= nbor[f] || (allowed && !allowed[leaf * F + f])) continue;
    const Cand c{tleaf[leaf * total + idx], idx};
    if (cand_better(c, best)) best = c;
  }
  block_best(best, sc);
  if (threadIdx.x == 0) {
    const bool split = sc[0].idx >= 0 && gbdt::node_splits(sc[0].score, min_split_gain);
    const bool right = split && tright && tright[leaf * total + sc[0].idx];
    sfeat[leaf] = split ? static_cast<std::int32_t>(sc[0].idx / Bp) : -1;
    sbin[leaf] = split ? static_cast<std::int32_t>(sc[0].idx % Bp) | (right ? gbdt::kNanRight : 0) : -1;
    sgain[leaf] = split ? sc[0].score : 0.0;
  }
}

}  // namespace
}  // namespace tl::gbdt_cuda
