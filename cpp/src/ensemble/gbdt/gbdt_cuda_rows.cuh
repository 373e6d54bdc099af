// CUDA backend of the gradient-boosted trees: per-row kernels. Each tree's
// gradients and hessians and their fixed-point versions; the loss partials.
// Included by gbdt_cuda.cu alone: the trainer's kernels and the host code
// that launches them form one translation unit.
#pragma once
#include "ensemble/gbdt/gbdt_cuda_common.cuh"

namespace tl::gbdt_cuda {
namespace {

// Grid-stride over rows: g, h of each row (gbdt::row_gradients, the row's
// weight from gbdt::row_weight: sample weight times the tree's bootstrap
// weight, as on the CPU) and the largest |g|, |h|, reduced per block in shared
// memory then with atomicMax on the bit patterns (non-negative doubles order
// like their bits; max is exact).
__global__ void gradient_kernel(GbdtLoss loss, int D, double param, std::int64_t n, const double* __restrict__ approx,
                                const double* __restrict__ y, const double* __restrict__ w, gbdt::RowSampler rs,
                                double* __restrict__ g, double* __restrict__ h, ull* __restrict__ maxbits) {
  __shared__ ull sg[kBlock], sh[kBlock];
  ull mg = 0, mh = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    gbdt::row_gradients(loss, D, approx + i * D, y[i], gbdt::row_weight(rs, w, i), param, g + i * D, h + i * D);
    for (int k = 0; k < D; ++k) {
      const ull a = num::to_bits(gbdt::abs_bits(g[i * D + k])), b = num::to_bits(gbdt::abs_bits(h[i * D + k]));
      mg = a > mg ? a : mg;
      mh = b > mh ? b : mh;
    }
  }
  sg[threadIdx.x] = mg;
  sh[threadIdx.x] = mh;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      sg[threadIdx.x] = sg[threadIdx.x + s] > sg[threadIdx.x] ? sg[threadIdx.x + s] : sg[threadIdx.x];
      sh[threadIdx.x] = sh[threadIdx.x + s] > sh[threadIdx.x] ? sh[threadIdx.x + s] : sh[threadIdx.x];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicMax(maxbits, sg[0]);
    atomicMax(maxbits + 1, sh[0]);
  }
}

// Grid-stride over the n*D gradient entries (or, with a count channel, the
// n rows): fixed-point (g, h) of output k < D as one int2 (|q| <= 2^kQuantBits < 2^31,
// so int32 holds every value exactly; an 8-byte load gives the histogram
// kernels both); channel D, when Dh > D, counts the row: (1, 0) when its
// tree weight is > 0, else (0, 0).
static_assert(gbdt::kQuantBits < 31, "fixed-point gradients fit int32");
__global__ void quantize_kernel(std::int64_t n, int D, int Dh, const double* __restrict__ g,
                                const double* __restrict__ h, const ull* __restrict__ maxbits, gbdt::RowSampler rs,
                                const double* __restrict__ w, int2* __restrict__ q) {
  const double sg = gbdt::pow2(gbdt::quant_exponent(num::double_from_bits(maxbits[0])));
  const double sh = gbdt::pow2(gbdt::quant_exponent(num::double_from_bits(maxbits[1])));
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t start = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (Dh == D) {  // no count channel: the entries in order, without a division
    for (std::int64_t j = start; j < n * D; j += stride)
      q[j] = make_int2(static_cast<int>(gbdt::quantize(g[j], sg)), static_cast<int>(gbdt::quantize(h[j], sh)));
    return;
  }
  for (std::int64_t i = start; i < n; i += stride) {
    for (int k = 0; k < D; ++k)
      q[i * Dh + k] = make_int2(static_cast<int>(gbdt::quantize(g[i * D + k], sg)),
                                static_cast<int>(gbdt::quantize(h[i * D + k], sh)));
    q[i * Dh + D] = make_int2(gbdt::row_weight(rs, w, i) > 0.0 ? 1 : 0, 0);
  }
}

// One thread per canonical chunk of kLossChunk rows, walking its rows in
// order as the CPU does: partials[2c] = sum of w * loss, partials[2c+1] = sum of w.
__global__ void loss_partials_kernel(GbdtLoss loss, int D, double param, std::int64_t n, const double* __restrict__ approx,
                                     const double* __restrict__ y, const double* __restrict__ w,
                                     double* __restrict__ partials) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t nc = ceil_div(n, gbdt::kLossChunk);
  if (c >= nc) return;
  double s = 0.0, ws = 0.0;
  const std::int64_t r1 = min(n, (c + 1) * gbdt::kLossChunk);
  for (std::int64_t i = c * gbdt::kLossChunk; i < r1; ++i) {
    const double wi = w ? w[i] : 1.0;
    s = num::add(s, num::mul(wi, gbdt::row_loss(loss, D, approx + i * D, y[i], param)));
    ws = num::add(ws, wi);
  }
  partials[2 * c] = s;
  partials[2 * c + 1] = ws;
}

}  // namespace
}  // namespace tl::gbdt_cuda
