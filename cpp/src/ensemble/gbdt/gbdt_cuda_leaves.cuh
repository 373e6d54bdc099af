// CUDA backend of the gradient-boosted trees: leaf kernels. The rows'
// leaves after a level's split, the final leaves' totals and values, and
// the new tree added to the training and eval rows' approximations.
// Included by gbdt_cuda.cu alone: the trainer's kernels and the host code
// that launches them form one translation unit.
#pragma once
#include "ensemble/gbdt/gbdt_cuda_common.cuh"

namespace tl::gbdt_cuda {
namespace {

// Grid-stride over rows: the row's leaf gains bit d (gbdt::bin_right of its bin and the split code).
// With want_counts, rows per new leaf are counted in shared memory
// (L2 <= kSharedCounts leaves) or straight into global memory.
constexpr int kSharedCounts = 4096;
// The split is sfeat[0], sbin[0] for every row (SymmetricTree) or
// sfeat[p], sbin[p] for the rows of leaf p (Depthwise; feature -1: left).
__global__ void update_leaf_kernel(const std::uint8_t* __restrict__ bins, std::int64_t n,
                                   const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                   bool depthwise, int d, std::int32_t* __restrict__ leaf, bool want_counts, int L2,
                                   ull* __restrict__ counts) {
  __shared__ unsigned int sc[kSharedCounts];
  const bool shared_counts = want_counts && L2 <= kSharedCounts;
  if (shared_counts) {
    for (int i = threadIdx.x; i < L2; i += blockDim.x) sc[i] = 0u;
    __syncthreads();
  }
  const std::int64_t f0 = *sfeat;
  const int b0 = *sbin;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int32_t lf = leaf[i];
    const std::int64_t f = depthwise ? sfeat[lf] : f0;
    const int b = depthwise ? sbin[lf] : b0;
    if (f >= 0) lf += static_cast<std::int32_t>(gbdt::bin_right(bins[f * n + i], b)) << d;
    leaf[i] = lf;
    if (shared_counts)
      atomicAdd(sc + lf, 1u);
    else if (want_counts)
      atomicAdd(counts + lf, 1ULL);
  }
  if (shared_counts) {
    __syncthreads();
    for (int i = threadIdx.x; i < L2; i += blockDim.x)
      if (sc[i]) atomicAdd(counts + i, static_cast<ull>(sc[i]));
  }
}

// The fixed-point (G, H) of final leaf j, output k, from the last level's
// histogram of its parent split at (f, b). The split of parent p is
// sfeat[0], sbin[0] (SymmetricTree) or sfeat[p], sbin[p] (per node; feature
// -1: every row left, totals from feature 0).
__device__ __forceinline__ void final_leaf_totals(const std::int64_t* __restrict__ hist, int F, int Bp, int Dh,
                                                  int depth, const std::int32_t* __restrict__ sfeat,
                                                  const std::int32_t* __restrict__ sbin, bool depthwise,
                                                  const int* __restrict__ nbor, std::int64_t j, std::int64_t k,
                                                  std::int64_t& G, std::int64_t& H) {
  const std::int64_t L = std::int64_t(1) << (depth - 1);
  const std::int64_t p = j % L;
  const bool right = j >= L;
  const std::int64_t f0 = sfeat[depthwise ? p : 0];
  const std::int64_t f = f0 < 0 ? 0 : f0;
  const int b = f0 < 0 ? Bp : sbin[depthwise ? p : 0];
  const int nb = f0 < 0 ? Bp - 1 : nbor[f];
  std::int64_t GL = 0, HL = 0, Gt = 0, Ht = 0;
  for (int bin = 0; bin <= nb; ++bin) {
    const std::int64_t gi = 2 * (((p * F + f) * Bp + bin) * Dh + k);
    const std::int64_t g = hist[gi], h = hist[gi + 1];
    Gt += g;
    Ht += h;
    if (!gbdt::bin_right(bin, b)) {
      GL += g;
      HL += h;
    }
  }
  G = right ? Gt - GL : GL;
  H = right ? Ht - HL : HL;
}

// Thread per (final leaf j, output k): the leaf's (G, H), then its value.
__global__ void leaf_values_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh, int depth,
                                   const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                   bool depthwise, const int* __restrict__ nbor, const ull* __restrict__ maxbits,
                                   double lambda, double lr, double* __restrict__ values) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= (std::int64_t(1) << depth) * D) return;
  const std::int64_t j = t / D, k = t % D;
  std::int64_t G, H;
  final_leaf_totals(hist, F, Bp, Dh, depth, sfeat, sbin, depthwise, nbor, j, k, G, H);
  values[j * D + k] = gbdt::leaf_value(gbdt::dequantize(G, inv_scale_of(maxbits[0])),
                                       gbdt::dequantize(H, inv_scale_of(maxbits[1])), lambda, lr);
}

// The same (G, H) as integers (tot[2 * (j * D + k)], + 1), for Lossguide's
// sums on the host.
__global__ void leaf_totals_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh, int depth,
                                   const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                   const int* __restrict__ nbor, std::int64_t* __restrict__ tot) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= (std::int64_t(1) << depth) * D) return;
  const std::int64_t j = t / D, k = t % D;
  final_leaf_totals(hist, F, Bp, Dh, depth, sfeat, sbin, true, nbor, j, k, tot[2 * t], tot[2 * t + 1]);
}

// Grid-stride over rows: each row's leaf through Lossguide's leaf map.
__global__ void remap_leaf_kernel(std::int64_t n, const std::int32_t* __restrict__ map, std::int32_t* __restrict__ leaf) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    leaf[i] = map[leaf[i]];
}

// Leaf tables of at most this many entries count in shared memory (16 KB).
constexpr std::int64_t kCountSmemLeaves = 4096;

// The tree's leaf_count (L leaves, cnt zeroed): grid-stride over the rows,
// each row of positive weight in the tree (gbdt::row_weight, as the CPU's
// count_rows) adds 1 to its leaf, in a per-block shared table when L <=
// kCountSmemLeaves (dynamic shared memory of L uints) then one global
// atomicAdd per nonzero entry, else straight into cnt. Integer atomics: the
// totals are exact in any order.
__global__ void leaf_count_kernel(std::int64_t n, std::int64_t L, const std::int32_t* __restrict__ leaf,
                                  gbdt::RowSampler rs, const double* __restrict__ w, ull* __restrict__ cnt) {
  extern __shared__ unsigned int sc[];
  const bool shared = L <= kCountSmemLeaves;
  if (shared) {
    for (std::int64_t j = threadIdx.x; j < L; j += blockDim.x) sc[j] = 0;
    __syncthreads();
  }
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (!(gbdt::row_weight(rs, w, i) > 0.0)) continue;
    if (shared) {
      atomicAdd(sc + leaf[i], 1u);
    } else {
      atomicAdd(cnt + leaf[i], ull(1));
    }
  }
  if (!shared) return;
  __syncthreads();
  for (std::int64_t j = threadIdx.x; j < L; j += blockDim.x)
    if (sc[j]) atomicAdd(cnt + j, static_cast<ull>(sc[j]));
}

// A tree the split constraints stopped at a level of L leaves: thread per
// (leaf j, output k) sums feature 0's bins of leaf j (every row of the leaf is
// in one of them; integers: exact), then the leaf value, as the CPU's
// total_values.
__global__ void total_values_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh, std::int64_t L,
                                    const ull* __restrict__ maxbits, double lambda, double lr,
                                    double* __restrict__ values) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L * D) return;
  const std::int64_t j = t / D, k = t % D;
  std::int64_t G = 0, H = 0;
  for (int bin = 0; bin < Bp; ++bin) {
    const std::int64_t gi = 2 * (((j * F + 0) * Bp + bin) * Dh + k);
    G += hist[gi];
    H += hist[gi + 1];
  }
  values[j * D + k] = gbdt::leaf_value(gbdt::dequantize(G, inv_scale_of(maxbits[0])),
                                       gbdt::dequantize(H, inv_scale_of(maxbits[1])), lambda, lr);
}

// Depth-0 trees (no feature can split): grid-stride sums of the fixed-point
// gradients per output into tot[2k], tot[2k+1] (int64 atomics: exact).
__global__ void totals_kernel(std::int64_t n, int D, int Dh, const int2* __restrict__ q, ull* __restrict__ tot) {
  for (int k = 0; k < D; ++k) {
    std::int64_t sg = 0, sh = 0;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
      sg += q[i * Dh + k].x;
      sh += q[i * Dh + k].y;
    }
    if (sg) atomicAdd(tot + 2 * k, static_cast<ull>(sg));
    if (sh) atomicAdd(tot + 2 * k + 1, static_cast<ull>(sh));
  }
}

// Thread per output k: the single leaf's value from the totals.
__global__ void root_values_kernel(int D, const ull* __restrict__ tot, const ull* __restrict__ maxbits, double lambda,
                                   double lr, double* __restrict__ values) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= D) return;
  const std::int64_t G = static_cast<std::int64_t>(tot[2 * k]), H = static_cast<std::int64_t>(tot[2 * k + 1]);
  values[k] = gbdt::leaf_value(gbdt::dequantize(G, inv_scale_of(maxbits[0])),
                               gbdt::dequantize(H, inv_scale_of(maxbits[1])), lambda, lr);
}

// Grid-stride over rows: approximations += the value of the row's leaf.
__global__ void apply_kernel(std::int64_t n, int D, const std::int32_t* __restrict__ leaf,
                             const double* __restrict__ values, double* __restrict__ approx) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    for (int k = 0; k < D; ++k) approx[i * D + k] = num::add(approx[i * D + k], values[leaf[i] * D + k]);
}

// Grid-stride over eval rows: the row's leaf from its bins and the tree's
// splits, then approximations += the leaf's value.
__global__ void apply_eval_kernel(std::int64_t m, int D, int depth, bool depthwise, const std::uint8_t* __restrict__ ebins,
                                  const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                  const double* __restrict__ values, double* __restrict__ eapprox) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t lf = 0;
    for (int d = 0; d < depth; ++d) {
      const std::int64_t s = gbdt::split_slot(depthwise, d, lf);
      if (sfeat[s] < 0) continue;
      lf |= static_cast<std::int64_t>(gbdt::bin_right(ebins[static_cast<std::int64_t>(sfeat[s]) * m + i], sbin[s])) << d;
    }
    for (int k = 0; k < D; ++k) eapprox[i * D + k] = num::add(eapprox[i * D + k], values[lf * D + k]);
  }
}

}  // namespace
}  // namespace tl::gbdt_cuda
