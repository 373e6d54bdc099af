// CUDA backend of the gradient-boosted trees: histogram kernels. Which leaves
// of a level are built, the rows of the built leaves, their integer
// histograms, and the siblings by subtraction.
// Included by gbdt_cuda.cu alone: the trainer's kernels and the host code
// that launches them form one translation unit.
#pragma once
#include "ensemble/gbdt/gbdt_cuda_common.cuh"

namespace tl::gbdt_cuda {
namespace {

// One block; thread p handles sibling pair (p, p + half) of level d: the
// child with fewer rows gets slot p (its histogram is built), the other is
// derived by subtraction. Level 0: the root takes slot 0.
__global__ void slots_kernel(int d, const ull* __restrict__ counts, std::int32_t* __restrict__ slot_of_leaf,
                             std::int32_t* __restrict__ leaf_of_slot) {
  if (d == 0) {
    if (threadIdx.x == 0) {
      slot_of_leaf[0] = 0;
      leaf_of_slot[0] = 0;
    }
    return;
  }
  const std::int32_t half = std::int32_t(1) << (d - 1);
  for (std::int32_t p = threadIdx.x; p < half; p += blockDim.x) {
    const std::int32_t c = counts[p] <= counts[p + half] ? p : p + half;
    const std::int32_t o = c == p ? p + half : p;
    slot_of_leaf[c] = p;
    slot_of_leaf[o] = -1;
    leaf_of_slot[p] = c;
  }
}

// Rows whose leaf is built at this level (slot_of_leaf >= 0), appended to
// rows[] with one atomic per warp; *count ends as their number. The order
// of the list varies from run to run, which changes no histogram: they are
// integer sums.
__global__ void built_rows_kernel(std::int64_t n, const std::int32_t* __restrict__ leaf,
                                  const std::int32_t* __restrict__ slot_of_leaf, std::int32_t* __restrict__ rows,
                                  unsigned int* __restrict__ count) {
  const int lane = threadIdx.x & 31;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < n;
       base += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = base + threadIdx.x;
    const bool take = r < n && slot_of_leaf[leaf[r]] >= 0;
    const unsigned mask = __ballot_sync(0xFFFFFFFFu, take);
    unsigned at = 0;
    if (lane == 0 && mask) at = atomicAdd(count, static_cast<unsigned>(__popc(mask)));
    at = __shfl_sync(0xFFFFFFFFu, at, 0);
    if (take) rows[at + __popc(mask & ((1u << lane) - 1u))] = static_cast<std::int32_t>(r);
  }
}

// Adds q to the 64-bit integer kept in the shared words *lo, *hi with 32-bit
// atomics (gbdt::high_word_increment: exact in any interleaving).
__device__ __forceinline__ void shared_add_i64(unsigned int* lo, unsigned int* hi, int q) {
  const unsigned int up = gbdt::high_word_increment(atomicAdd(lo, static_cast<unsigned int>(q)), q);
  if (up) atomicAdd(hi, up);
}

// Histograms of the built leaves, shared-memory variant.
// Grid: x = feature group (Fg features from f0 = x * Fg; x fastest, so the
// blocks sharing a row range run together and reuse its gradients from L2),
// y = a share of the rows: all rows [0, n) at level 0, else the m = *count
// rows listed in rows[] (built_rows_kernel). For each row and each feature
// of the group, a thread adds the row's fixed-point (g, h) to the block's
// shared histogram, 64-bit integers kept as four planes of 32-bit words (g
// low, g high, h low, h high; entry [slot][feature][bin][output]; planar so
// that lanes at different bins hit different banks). The block then adds its
// non-zero entries into the int64 histogram with global atomics. Integers
// throughout: the result is exact and independent of the order.
__global__ void hist_smem_kernel(const std::uint8_t* __restrict__ bins, std::int64_t n, int F, int Bp, int D, int Fg,
                                 int n_slots, const int2* __restrict__ q, const std::int32_t* __restrict__ rows,
                                 const unsigned int* __restrict__ count, const std::int32_t* __restrict__ leaf,
                                 const std::int32_t* __restrict__ slot_of_leaf,
                                 const std::int32_t* __restrict__ leaf_of_slot, ull* __restrict__ hist) {
  extern __shared__ unsigned int sm[];
  const int f0 = blockIdx.x * Fg;
  const int fc = min(Fg, F - f0);
  const std::int64_t entries = static_cast<std::int64_t>(n_slots) * fc * Bp * D;
  unsigned int* glo = sm;
  unsigned int* ghi = sm + entries;
  unsigned int* hlo = sm + 2 * entries;
  unsigned int* hhi = sm + 3 * entries;
  for (std::int64_t e = threadIdx.x; e < entries * 4; e += blockDim.x) sm[e] = 0u;
  __syncthreads();
  const std::int64_t m = rows ? static_cast<std::int64_t>(*count) : n;
  const std::int64_t share = ceil_div(m, gridDim.y);
  const std::int64_t j0 = blockIdx.y * share;
  const std::int64_t j1 = min(m, j0 + share);
  for (std::int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
    const std::int64_t r = rows ? rows[j] : j;
    const int s = slot_of_leaf[leaf[r]];
    if (s < 0) continue;
    for (int fi = 0; fi < fc; ++fi) {
      const int b = bins[static_cast<std::int64_t>(f0 + fi) * n + r];
      const std::int64_t e0 = ((static_cast<std::int64_t>(s) * fc + fi) * Bp + b) * D;
      for (int k = 0; k < D; ++k) {
        const int2 v = q[r * D + k];
        if (v.x) shared_add_i64(glo + e0 + k, ghi + e0 + k, v.x);
        if (v.y) shared_add_i64(hlo + e0 + k, hhi + e0 + k, v.y);
      }
    }
  }
  __syncthreads();
  for (std::int64_t e = threadIdx.x; e < entries; e += blockDim.x) {
    const ull G = (static_cast<ull>(ghi[e]) << 32) | glo[e];
    const ull H = (static_cast<ull>(hhi[e]) << 32) | hlo[e];
    if ((G | H) == 0) continue;
    const std::int64_t k = e % D;
    const std::int64_t b = (e / D) % Bp;
    const std::int64_t fi = (e / D / Bp) % fc;
    const std::int64_t s = e / D / Bp / fc;
    const std::int64_t lf = leaf_of_slot[s];
    const std::int64_t gi = 2 * (((lf * F + f0 + fi) * Bp + b) * D + k);
    if (G) atomicAdd(hist + gi, G);
    if (H) atomicAdd(hist + gi + 1, H);
  }
}

// Histograms of the built leaves, global-memory variant for levels whose
// shared tile would not fit: grid-stride over rows, one int64 atomic per
// (row, feature, output, g|h) straight into the histogram (exact).
__global__ void hist_global_kernel(const std::uint8_t* __restrict__ bins, std::int64_t n, int F, int Bp, int D,
                                   const int2* __restrict__ q, const std::int32_t* __restrict__ leaf,
                                   const std::int32_t* __restrict__ slot_of_leaf, ull* __restrict__ hist) {
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t lf = leaf[r];
    if (slot_of_leaf[lf] < 0) continue;
    for (int f = 0; f < F; ++f) {
      const std::int64_t b = bins[static_cast<std::int64_t>(f) * n + r];
      for (int k = 0; k < D; ++k) {
        const std::int64_t gi = 2 * (((lf * F + f) * Bp + b) * D + k);
        const int2 v = q[r * D + k];
        atomicAdd(hist + gi, static_cast<ull>(static_cast<std::int64_t>(v.x)));
        atomicAdd(hist + gi + 1, static_cast<ull>(static_cast<std::int64_t>(v.y)));
      }
    }
  }
}

// Grid-stride over the entries of the half-level: pair p of level d's
// leaves (p and p + half); the leaf not built = parent p (previous level)
// minus the built one. Integer subtraction: exact.
__global__ void subtract_kernel(std::int64_t half, std::int64_t per_leaf, const std::int32_t* __restrict__ leaf_of_slot,
                                const std::int64_t* __restrict__ prev, std::int64_t* __restrict__ cur) {
  const std::int64_t total = half * per_leaf;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = e / per_leaf, j = e % per_leaf;
    const std::int64_t c = leaf_of_slot[p];
    const std::int64_t o = c == p ? p + half : p;
    cur[o * per_leaf + j] = prev[p * per_leaf + j] - cur[c * per_leaf + j];
  }
}

}  // namespace
}  // namespace tl::gbdt_cuda
