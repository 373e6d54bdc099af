// CUDA backend of the Gram product: the canonical split-K kernel, and cuBLAS
// DGEMM for fast mode (order: twinlearn/core/gram.hpp).
#include "core/cuda/blas.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "core/cuda/memory.cuh"
#include "core/gram/gram_common.hpp"

namespace tl::detail {
namespace {

constexpr int kTile = 128;   // output tile edge
constexpr int kStep = 8;     // rows staged per step
constexpr int kThreads = 256;

// Zc[i, col] for a column of X or of Y (row-major, contiguous).
template <class T>
__device__ __forceinline__ T load_zc(const T* X, std::int64_t d, const T* Y, std::int64_t t, const T* off,
                                     std::int64_t i, std::int64_t col, T s, bool weighted) {
  const T z = col < d ? X[i * d + col] : Y[i * t + (col - d)];
  return gram_detail::centred(z, off, col, s, weighted);
}

// Chunk partials of one batch, in double.
//
// Mapping: blockIdx.y is the chunk (first_chunk + blockIdx.y); blockIdx.x is
// an upper-triangle tile pair (ti <= tj) of the D x D output, enumerated row
// by row. The block computes the 128 x 128 tile at rows 128*ti, columns
// 128*tj over the chunk's rows. Thread t = 16*ty + tx owns the 8 x 8 elements
// at tile rows {4ty..4ty+3, 64+4ty..64+4ty+3} and columns {4tx..4tx+3,
// 64+4tx..64+4tx+3} and keeps their accumulators in registers. The rows are
// staged 8 at a time in shared memory (widened to double), double-buffered:
// thread t loads row
// t/32 of the step, columns 4*(t%32)..+3 of both tiles (a warp reads 128
// consecutive entries of one row of X). Every accumulator receives
// fma(Zc[i, j], Zc[i, k], acc) for the chunk's rows i in increasing order and
// nothing else (the last step stops at the chunk's end), which is the
// canonical chain. The tiles cover the first dt columns of Zc (all of them,
// or the columns of X when the cross kernel below takes the targets);
// out-of-range columns load zeros and are not stored.
template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    gram_chunk_kernel(const T* __restrict__ X, std::int64_t d, const T* __restrict__ Y, std::int64_t t,
                      const T* __restrict__ w, const T* __restrict__ off, std::int64_t n, std::int64_t chunk,
                      std::int64_t first_chunk, int ntiles, std::int64_t dt, double* __restrict__ P) {
  __shared__ alignas(16) double As[2][kStep][kTile];
  __shared__ alignas(16) double Bs[2][kStep][kTile];
  const std::int64_t D = d + t;
  int p = static_cast<int>(blockIdx.x), ti = 0, len = ntiles;
  while (p >= len) {
    p -= len;
    ++ti;
    --len;
  }
  const int tj = ti + p;
  const std::int64_t j0 = static_cast<std::int64_t>(ti) * kTile, k0 = static_cast<std::int64_t>(tj) * kTile;
  const std::int64_t r0 = (first_chunk + blockIdx.y) * chunk;
  const std::int64_t r1 = min(n, r0 + chunk);
  const bool weighted = w != nullptr;

  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int lr = tid >> 5, lc = (tid & 31) * 4;
  double ra[4], rb[4];

  auto load_step = [&](std::int64_t i0) {
    const std::int64_t i = i0 + lr;
    if (i < r1) {
      const T s = weighted ? num::sqrt(w[i]) : T(1);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const std::int64_t ca = j0 + lc + q, cb = k0 + lc + q;
        ra[q] = ca < dt ? static_cast<double>(load_zc(X, d, Y, t, off, i, ca, s, weighted)) : 0.0;
        rb[q] = cb < dt ? static_cast<double>(load_zc(X, d, Y, t, off, i, cb, s, weighted)) : 0.0;
      }
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) ra[q] = rb[q] = 0.0;
    }
  };
  auto store_step = [&](int buf) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      As[buf][lr][lc + q] = ra[q];
      Bs[buf][lr][lc + q] = rb[q];
    }
  };

  double acc[8][8];
#pragma unroll
  for (int a = 0; a < 8; ++a)
#pragma unroll
    for (int b = 0; b < 8; ++b) acc[a][b] = 0.0;

  auto step = [&](int buf, int kk) {
    double av[8], bv[8];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      av[q] = As[buf][kk][4 * ty + q];
      av[4 + q] = As[buf][kk][64 + 4 * ty + q];
      bv[q] = Bs[buf][kk][4 * tx + q];
      bv[4 + q] = Bs[buf][kk][64 + 4 * tx + q];
    }
#pragma unroll
    for (int a = 0; a < 8; ++a)
#pragma unroll
      for (int b = 0; b < 8; ++b) acc[a][b] = num::fma(av[a], bv[b], acc[a][b]);
  };

  const std::int64_t rows = r1 - r0;
  const std::int64_t nsteps = (rows + kStep - 1) / kStep;
  load_step(r0);
  store_step(0);
  __syncthreads();
  for (std::int64_t s = 0; s < nsteps; ++s) {
    const int buf = static_cast<int>(s & 1);
    const bool more = s + 1 < nsteps;
    if (more) load_step(r0 + (s + 1) * kStep);
    const std::int64_t left = rows - s * kStep;
    if (left >= kStep) {
#pragma unroll
      for (int kk = 0; kk < kStep; ++kk) step(buf, kk);
    } else {
      for (int kk = 0; kk < static_cast<int>(left); ++kk) step(buf, kk);
    }
    if (more) store_step(buf ^ 1);
    __syncthreads();
  }

  double* out = P + static_cast<std::int64_t>(blockIdx.y) * D * D;
#pragma unroll
  for (int a = 0; a < 8; ++a) {
    const std::int64_t j = j0 + (a < 4 ? 4 * ty + a : 64 + 4 * ty + (a - 4));
    if (j >= dt) continue;
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      const std::int64_t k = k0 + (b < 4 ? 4 * tx + b : 64 + 4 * tx + (b - 4));
      if (k < dt) out[j * D + k] = acc[a][b];
    }
  }
}

constexpr int kCrossRows = 256;     // rows staged per step by the cross kernel
constexpr int kCrossMaxTargets = 8;  // targets handled by the cross kernel

// Chunk partials of the target columns: entries (j, d + c) for j <= d + c,
// c < t (X'y and y'y), for t <= kCrossMaxTargets, so that the tile kernel
// need not spend a whole 128-wide tile on a few target columns.
//
// Mapping: blockIdx.x is the chunk (first_chunk + blockIdx.x). Thread tid
// owns the pairs p = tid, tid + 256, ... of the list (j, c), j = p % (d + t),
// c = p / (d + t) (pairs with j > d + c are skipped). The chunk's rows are
// walked 256 at a time: the block stages the target entries Zc[i, d + c] of
// those rows in shared memory, then each thread continues its chains over
// them in row order, reading Zc[i, j] from X (the threads of a warp read
// consecutive columns of one row). Every entry is one fma chain over the
// chunk's rows in increasing order: the canonical chain.
template <class T>
__global__ void __launch_bounds__(kThreads) gram_cross_kernel(const T* __restrict__ X, std::int64_t d,
                                                              const T* __restrict__ Y, std::int64_t t,
                                                              const T* __restrict__ w, const T* __restrict__ off,
                                                              std::int64_t n, std::int64_t chunk,
                                                              std::int64_t first_chunk, double* __restrict__ P) {
  __shared__ double ys[kCrossRows][kCrossMaxTargets];
  __shared__ T ss[kCrossRows];
  const std::int64_t D = d + t;
  const std::int64_t r0 = (first_chunk + blockIdx.x) * chunk;
  const std::int64_t r1 = min(n, r0 + chunk);
  const bool weighted = w != nullptr;
  constexpr int kPairs = 4;  // pairs per thread kept in registers (up to 1024 pairs per pass)
  double* out = P + static_cast<std::int64_t>(blockIdx.x) * D * D;
  const std::int64_t npairs = D * t;
  for (std::int64_t pbase = 0; pbase < npairs; pbase += static_cast<std::int64_t>(kThreads) * kPairs) {
    double acc[kPairs];
    std::int64_t jj[kPairs], cc[kPairs];
    bool live[kPairs];
#pragma unroll
    for (int u = 0; u < kPairs; ++u) {
      const std::int64_t p = pbase + static_cast<std::int64_t>(u) * kThreads + threadIdx.x;
      jj[u] = p % D;
      cc[u] = p / D;
      live[u] = p < npairs && jj[u] <= d + cc[u];
      acc[u] = 0.0;
    }
    for (std::int64_t i0 = r0; i0 < r1; i0 += kCrossRows) {
      const int rows = static_cast<int>(r1 - i0 < kCrossRows ? r1 - i0 : kCrossRows);
      __syncthreads();
      for (int e = threadIdx.x; e < rows; e += kThreads) {
        const std::int64_t i = i0 + e;
        const T s = weighted ? num::sqrt(w[i]) : T(1);
        ss[e] = s;
        for (std::int64_t c = 0; c < t; ++c)
          ys[e][c] = static_cast<double>(gram_detail::centred(Y[i * t + c], off, d + c, s, weighted));
      }
      __syncthreads();
#pragma unroll
      for (int u = 0; u < kPairs; ++u) {
        if (!live[u]) continue;
        const std::int64_t j = jj[u], c = cc[u];
        double a = acc[u];
        if (j < d) {
          for (int e = 0; e < rows; ++e) {
            const double x = static_cast<double>(gram_detail::centred(X[(i0 + e) * d + j], off, j, ss[e], weighted));
            a = num::fma(x, ys[e][c], a);
          }
        } else {
          for (int e = 0; e < rows; ++e) a = num::fma(ys[e][j - d], ys[e][c], a);
        }
        acc[u] = a;
      }
    }
#pragma unroll
    for (int u = 0; u < kPairs; ++u)
      if (live[u]) out[jj[u] * D + d + cc[u]] = acc[u];
  }
}

// The canonical tree over the nc chunk partials of a batch. One thread per
// element e = j*D + k of the D x D output (upper triangle only); the threads
// of a warp read consecutive elements of the same partial (coalesced).
__global__ void gram_tree_kernel(const double* __restrict__ P, std::int64_t D, std::int64_t nc,
                                 double* __restrict__ R) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t DD = D * D;
  if (e >= DD) return;
  if (e / D > e % D) return;
  gram_detail::TreeStack st;
  for (std::int64_t c = 0; c < nc; ++c) st.push(P[c * DD + e]);
  R[e] = st.result();
}

// Fast path: Zc rows widened to double into a dense buffer (rows x ldz,
// row-major = column-major ldz x rows for cuBLAS). Columns D..ldz-1 are
// written as zeros, so the products may run over them (whole multiples of 8
// columns: aligned operands and cuBLAS's better kernels). 64 threads per row,
// four rows per block of 256, rows by grid stride; each thread takes four
// consecutive columns at a time: one 128-bit load of X when all four are X's
// (vec: d % 4 == 0 and X 16-byte aligned), two 128-bit stores of doubles.
template <class T>
__global__ void centre_rows_kernel(const T* __restrict__ X, std::int64_t d, const T* __restrict__ Y, std::int64_t t,
                                   const T* __restrict__ w, const T* __restrict__ off, std::int64_t r0,
                                   std::int64_t rows, std::int64_t ldz, bool vec, double* __restrict__ Z) {
  const std::int64_t D = d + t, groups = ldz / 4;
  const bool weighted = w != nullptr;
  const int lane = threadIdx.x % 64;
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * 4 + threadIdx.x / 64; b < rows;
       b += static_cast<std::int64_t>(gridDim.x) * 4) {
    const std::int64_t i = r0 + b;
    const T s = weighted ? num::sqrt(w[i]) : T(1);
    double* zrow = Z + b * ldz;
    for (std::int64_t g = lane; g < groups; g += 64) {
      const std::int64_t c0 = 4 * g;
      double v[4];
      if constexpr (std::is_same_v<T, float>) {
        if (vec && c0 + 4 <= d) {
          const float4 x4 = *reinterpret_cast<const float4*>(X + i * d + c0);
          const float xs[4] = {x4.x, x4.y, x4.z, x4.w};
#pragma unroll
          for (int q = 0; q < 4; ++q) v[q] = static_cast<double>(gram_detail::centred(xs[q], off, c0 + q, s, weighted));
          reinterpret_cast<double2*>(zrow + c0)[0] = make_double2(v[0], v[1]);
          reinterpret_cast<double2*>(zrow + c0)[1] = make_double2(v[2], v[3]);
          continue;
        }
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const std::int64_t col = c0 + q;
        v[q] = col < D ? static_cast<double>(load_zc(X, d, Y, t, off, i, col, s, weighted)) : 0.0;
      }
      reinterpret_cast<double2*>(zrow + c0)[0] = make_double2(v[0], v[1]);
      reinterpret_cast<double2*>(zrow + c0)[1] = make_double2(v[2], v[3]);
    }
  }
}

// The column split of the fast product: the upper triangle of the ldz x ldz
// product (D x D and zero padding) is the blocks (0,0), (0,1) and (1,1) of a
// split at h, three DGEMMs that do about 3/4 of the full product's work
// (cuBLAS's DSYRK ran at about a tenth of DGEMM's rate on the H200). h is a
// multiple of 64 (blocks of whole kernel tiles: at h = 136 for 2M x 257 the
// three products took 6.6 ms on the H200 against 3.5 ms at h = 128 for
// 2M x 256); narrow products take one full DGEMM.
// TWINLEARN_GRAM_FAST_SPLIT overrides h (a multiple of 8; >= ldz: no split).
std::int64_t fast_split(std::int64_t ldz) {
  if (const char* env = std::getenv("TWINLEARN_GRAM_FAST_SPLIT")) {
    const std::int64_t h = std::strtoll(env, nullptr, 10) / 8 * 8;
    return h > 0 ? std::min(h, ldz) : ldz;
  }
  if (ldz < 128) return ldz;
  return ldz / 2 / 64 * 64;
}

template <class T>
void gram_fast(const Context& ctx, const T* X, std::int64_t d, const T* Y, std::int64_t t, const T* w, const T* off,
               std::int64_t n, std::vector<double>& batches) {
  const int dev = ctx.device().id;
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t D = d + t;
  // Rows of 64 bytes or a multiple: aligned operands for cuBLAS's kernels.
  const std::int64_t ldz = (D + 7) / 8 * 8;
  // Rows per batch: a widened copy of at most 1 GiB. (Widening the next
  // batch on a side stream while cuBLAS multiplied this one was no faster on
  // the H200: LinearRegression 2M x 256 took 13.5 ms against 12.7 ms, both
  // kernels slower side by side.)
  // TWINLEARN_GRAM_FAST_BATCH_ROWS overrides it (to test many batches).
  std::int64_t cap = (std::int64_t(1) << 27) / ldz;
  if (const char* env = std::getenv("TWINLEARN_GRAM_FAST_BATCH_ROWS")) cap = std::strtoll(env, nullptr, 10);
  const std::int64_t batch_rows = std::min<std::int64_t>(n, std::max<std::int64_t>(1, cap));
  DeviceBuffer<double> Z(static_cast<std::size_t>(batch_rows * ldz), dev);
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(X) % 16 == 0;
  DeviceBuffer<double> C(static_cast<std::size_t>(ldz * ldz), dev);
  CublasLease blas(dev, stream);
  const std::int64_t h = fast_split(ldz);
  struct Block {
    std::int64_t a0, na, b0, nb;
  };
  std::vector<Block> blocks;
  if (h >= ldz) {
    blocks.push_back({0, ldz, 0, ldz});
  } else {
    blocks.push_back({0, h, 0, h});
    blocks.push_back({0, h, h, ldz - h});
    blocks.push_back({h, ldz - h, h, ldz - h});
  }
  for (std::int64_t r0 = 0; r0 < n; r0 += batch_rows) {
    const std::int64_t rows = std::min(batch_rows, n - r0);
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>((rows + 3) / 4, 65536));
    centre_rows_kernel<T><<<grid, 256, 0, stream>>>(X, d, Y, t, w, off, r0, rows, ldz, vec, Z.data());
    TL_CUDA_CHECK_LAUNCH("centre_rows_kernel");
    const double one = 1.0, beta = r0 == 0 ? 0.0 : 1.0;
    // Column-major: Z is ldz x rows, C is ldz x ldz with G[j, k] at C[j + k*ldz].
    for (const Block& bl : blocks)
      TL_CUBLAS_CHECK(cublasDgemm(blas.get(), CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(bl.na),
                                  static_cast<int>(bl.nb), static_cast<int>(rows), &one, Z.data() + bl.a0,
                                  static_cast<int>(ldz), Z.data() + bl.b0, static_cast<int>(ldz), &beta,
                                  C.data() + bl.a0 + bl.b0 * ldz, static_cast<int>(ldz)));
  }
  std::vector<double> host(static_cast<std::size_t>(ldz * ldz));
  TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), C.data(), sizeof(double) * ldz * ldz, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Column-major upper triangle: G[j, k] (j <= k < D) is C[j + k*ldz].
  batches.assign(static_cast<std::size_t>(D * D), 0.0);
  for (std::int64_t j = 0; j < D; ++j)
    for (std::int64_t k = j; k < D; ++k) batches[j * D + k] = host[j + k * ldz];
}

}  // namespace

template <class T>
NumericMode gram_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                      const T* offset, std::vector<double>& batches) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t n = X.rows, d = X.cols, t = Y.cols, D = d + t, DD = D * D;
  auto xs = stage_to_device(ctx, X);
  auto ys = stage_to_device(ctx, MatrixView<const T>(Y.data, t > 0 ? Y.rows : 0, t, Y.row_stride, Y.col_stride,
                                                     Y.device));
  auto ws = stage_to_device(ctx, MatrixView<const T>(w.data, w.data ? w.size : 0, 1, w.device));
  const T* wp = w.data ? ws.view.data : nullptr;
  const T* yp = t > 0 ? ys.view.data : nullptr;
  DeviceBuffer<T> off_dev;
  const T* offp = nullptr;
  if (offset) {
    off_dev = DeviceBuffer<T>(static_cast<std::size_t>(D), dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(off_dev.data(), offset, sizeof(T) * D, cudaMemcpyHostToDevice, stream));
    offp = off_dev.data();
  }

  if (ctx.mode() == NumericMode::Fast) {
    gram_fast(ctx, xs.view.data, d, yp, t, wp, offp, n, batches);
    return NumericMode::Fast;
  }

  const std::int64_t nchunks = (n + kGramChunk - 1) / kGramChunk;
  const std::int64_t per_batch = gram_detail::batch_chunks(D, sizeof(double), std::int64_t(512) << 20);
  const std::int64_t nbatches = (nchunks + per_batch - 1) / per_batch;
  // A few target columns go to the cross kernel; many ride in the tiles.
  const bool cross = t > 0 && t <= kCrossMaxTargets;
  const std::int64_t dt = cross ? d : D;
  const int ntiles = static_cast<int>((dt + kTile - 1) / kTile);
  const std::int64_t npairs = static_cast<std::int64_t>(ntiles) * (ntiles + 1) / 2;
  DeviceBuffer<double> P(static_cast<std::size_t>(std::min(per_batch, nchunks) * DD), dev);
  DeviceBuffer<double> R(static_cast<std::size_t>(nbatches * DD), dev);
  for (std::int64_t b = 0; b < nbatches; ++b) {
    const std::int64_t c0 = b * per_batch, nc = std::min(per_batch, nchunks - c0);
    if (npairs > 0) {
      dim3 grid(static_cast<unsigned>(npairs), static_cast<unsigned>(nc));
      gram_chunk_kernel<T><<<grid, kThreads, 0, stream>>>(xs.view.data, d, yp, t, wp, offp, n, kGramChunk, c0, ntiles,
                                                          dt, P.data());
      TL_CUDA_CHECK_LAUNCH("gram_chunk_kernel");
    }
    if (cross) {
      gram_cross_kernel<T><<<static_cast<unsigned>(nc), kThreads, 0, stream>>>(xs.view.data, d, yp, t, wp, offp, n,
                                                                               kGramChunk, c0, P.data());
      TL_CUDA_CHECK_LAUNCH("gram_cross_kernel");
    }
    gram_tree_kernel<<<static_cast<unsigned>((DD + 255) / 256), 256, 0, stream>>>(P.data(), D, nc,
                                                                                    R.data() + b * DD);
    TL_CUDA_CHECK_LAUNCH("gram_tree_kernel");
  }
  batches.assign(static_cast<std::size_t>(nbatches * DD), 0.0);
  TL_CUDA_CHECK(
      cudaMemcpyAsync(batches.data(), R.data(), sizeof(double) * nbatches * DD, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return NumericMode::Identical;
}

template NumericMode gram_cuda<float>(const Context&, MatrixView<const float>, MatrixView<const float>,
                                      VectorView<const float>, const float*, std::vector<double>&);
template NumericMode gram_cuda<double>(const Context&, MatrixView<const double>, MatrixView<const double>,
                                       VectorView<const double>, const double*, std::vector<double>&);

}  // namespace tl::detail
