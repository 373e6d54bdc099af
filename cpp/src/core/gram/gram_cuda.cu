// CUDA backend of the Gram product: the canonical split-K kernel on the
// double-precision tensor cores, and cuBLAS DGEMM for fast mode (order:
// twinlearn/core/gram.hpp). On the H200, 2M x 256 float32: the canonical
// kernel 7.0 ms with centring (6.3 ms without), against 16.2 ms for the same
// chains as scalar fma; fast mode's widening plus DGEMM took 6.7 ms, so fast
// mode keeps cuBLAS.
#include "core/cuda/blas.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "core/cuda/dmma.cuh"
#include "core/cuda/memory.cuh"
#include "core/gram/gram_common.hpp"
#include "core/reduce/stage.cuh"

namespace tl::detail {
namespace {

using gram_detail::kMomentsMaxCols;
using gram_detail::kMomentsMaxTargets;
using gram_detail::moments_size;

constexpr int kTile = 128;     // output tile edge
constexpr int kStage = 16;     // rows staged per step (two k-groups of the tile product)
constexpr int kLd = kTile + 4; // shared row stride in doubles: fragment loads free of bank conflicts
constexpr int kThreads = 256;
constexpr std::size_t kMmaSmem = sizeof(double) * 2 * 2 * kStage * kLd;  // [buffer][A|B][row][col]

// Zc[i, col] for a column of X or of Y (row-major, contiguous).
template <class T>
__device__ __forceinline__ T load_zc(const T* X, std::int64_t d, const T* Y, std::int64_t t, const T* off,
                                     std::int64_t i, std::int64_t col, T s, bool weighted) {
  const T z = col < d ? X[i * d + col] : Y[i * t + (col - d)];
  return gram_detail::centred(z, off, col, s, weighted);
}

// The entries c0 .. c0+3 of row i of X as one 128-bit load, when T is float,
// `vec` (d % 4 == 0 and X 16-byte aligned) and all four are X's; false when
// the caller must load them one by one.
template <class T>
__device__ __forceinline__ bool load_x4(const T* X, std::int64_t d, bool vec, std::int64_t i, std::int64_t c0,
                                        T (&v)[4]) {
  if constexpr (std::is_same_v<T, float>) {
    if (vec && c0 + 4 <= d) {
      const float4 x4 = *reinterpret_cast<const float4*>(X + i * d + c0);
      v[0] = x4.x;
      v[1] = x4.y;
      v[2] = x4.z;
      v[3] = x4.w;
      return true;
    }
  }
  return false;
}

// Chunk partials of one batch, in double, on the double-precision tensor
// cores (core/cuda/dmma.cuh: each tile product is the chain of fma in row
// order).
//
// Mapping: blockIdx.y is the chunk (first_chunk + blockIdx.y); blockIdx.x is
// an upper-triangle tile pair (ti <= tj) of the D x D output, enumerated row
// by row. The block computes the 128 x 128 tile at rows 128*ti, columns
// 128*tj over the chunk's rows: warp w the 64 x 32 quarter at rows
// 64*(w / 4), columns 32*(w % 4), as 4 x 4 tile products of 16 x 8 whose
// accumulators stay in registers. The chunk's rows are staged 16 at a time
// in shared memory (centred in T, widened to double), double-buffered
// through registers (the next step's raw entries are loaded before this
// step's products and centred after them): thread t loads rows t/32 and
// t/32 + 8 of the step, columns 4*(t%32)..+3 of both tiles (a warp reads 128
// consecutive entries of one row of X; 128-bit loads where the four columns
// are X's and X is aligned). Each step is two products of depth 8 (rows 0-7, 8-15), so every
// accumulator receives fma(Zc[i, j], Zc[i, k], acc) for the chunk's rows i
// in increasing order and nothing else: the canonical chain. A last step of
// fewer than 16 rows takes its whole groups of 8 on the tensor cores and the
// rest as scalar fma in row order (padding with zero rows would turn a -0
// accumulator into +0). The tiles cover the first dt columns of Zc (all of
// them, or the columns of X when the cross kernel below takes the targets);
// out-of-range columns load zeros and are not stored.
template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    gram_mma_kernel(const T* __restrict__ X, std::int64_t d, const T* __restrict__ Y, std::int64_t t,
                    const T* __restrict__ w, const T* __restrict__ off, std::int64_t n, std::int64_t chunk,
                    std::int64_t first_chunk, int ntiles, std::int64_t dt, bool vec, double* __restrict__ P) {
  extern __shared__ __align__(16) double smem[];
  auto As = [&](int buf, int r) { return smem + ((buf * 2 + 0) * kStage + r) * kLd; };
  auto Bs = [&](int buf, int r) { return smem + ((buf * 2 + 1) * kStage + r) * kLd; };
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

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, q = lane % 4;
  const int wm = 64 * (warp / 4), wn = 32 * (warp % 4);
  const int lr = tid >> 5, lc = (tid & 31) * 4;
  T ra[2][4], rb[2][4];
  // The offsets of the block's columns (both tiles), in shared memory.
  __shared__ T offs[2][kTile];
  const bool has_off = off != nullptr;
  if (has_off) {
    for (int e = tid; e < 2 * kTile; e += kThreads) {
      const std::int64_t col = (e < kTile ? j0 : k0 - kTile) + e;
      offs[e / kTile][e % kTile] = col < D ? off[col] : T(0);
    }
  }

  // The loads of a step only fill registers (raw entries, the rows' weights);
  // centring, weighting and widening wait for store_step, after the step's
  // products, so that the loads' latency overlaps them.
  bool live[2];
  T wr[2];
  auto load_cols = [&](std::int64_t i, std::int64_t c0, T (&v)[4]) {
    if (load_x4(X, d, vec, i, c0, v)) return;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t col = c0 + e;
      v[e] = col < dt ? (col < d ? X[i * d + col] : Y[i * t + (col - d)]) : T(0);
    }
  };
  auto load_step = [&](std::int64_t i0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::int64_t i = i0 + lr + 8 * h;
      live[h] = i < r1;
      if (live[h]) {
        wr[h] = weighted ? w[i] : T(1);
        load_cols(i, j0 + lc, ra[h]);
        load_cols(i, k0 + lc, rb[h]);
      }
    }
  };
  // Zc entries of a staged row (zeros past the chunk and past dt), widened.
  auto widen = [&](const T (&v)[4], const T* o, std::int64_t c0, T s, bool row_live, double (&z)[4]) {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      z[e] = row_live && c0 + e < dt ? static_cast<double>(gram_detail::centred_by(v[e], has_off, o[e], s, weighted))
                                     : 0.0;
  };
  auto store_step = [&](int buf) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const T s = weighted && live[h] ? num::sqrt(wr[h]) : T(1);
      double za[4], zb[4];
      widen(ra[h], offs[0] + lc, j0 + lc, s, live[h], za);
      widen(rb[h], offs[1] + lc, k0 + lc, s, live[h], zb);
      double* a = As(buf, lr + 8 * h) + lc;
      double* b = Bs(buf, lr + 8 * h) + lc;
      reinterpret_cast<double2*>(a)[0] = make_double2(za[0], za[1]);
      reinterpret_cast<double2*>(a)[1] = make_double2(za[2], za[3]);
      reinterpret_cast<double2*>(b)[0] = make_double2(zb[0], zb[1]);
      reinterpret_cast<double2*>(b)[1] = make_double2(zb[2], zb[3]);
    }
  };

  double acc[4][4][4];
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[a][b][e] = 0.0;

  // One product of depth 8 over staged rows k8..k8+7 of buffer buf.
  auto group = [&](int buf, int k8) {
    double bf[4][2];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      bf[nt][0] = Bs(buf, k8 + q)[wn + 8 * nt + g];
      bf[nt][1] = Bs(buf, k8 + q + 4)[wn + 8 * nt + g];
    }
#pragma unroll
    for (int mt = 0; mt < 4; ++mt) {
      const int m = wm + 16 * mt + g;
      const double af[4] = {As(buf, k8 + q)[m], As(buf, k8 + q)[m + 8], As(buf, k8 + q + 4)[m],
                            As(buf, k8 + q + 4)[m + 8]};
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) dmma_16x8x8(acc[mt][nt], af, bf[nt]);
    }
  };
  // Staged row kk of buffer buf as scalar fma (the tail of the chunk).
  auto single_row = [&](int buf, int kk) {
#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int m = wm + 16 * mt + g + 8 * (e / 2), c = wn + 8 * nt + 2 * q + (e % 2);
          acc[mt][nt][e] = num::fma(As(buf, kk)[m], Bs(buf, kk)[c], acc[mt][nt][e]);
        }
  };

  const std::int64_t rows = r1 - r0;
  const std::int64_t nsteps = (rows + kStage - 1) / kStage;
  __syncthreads();  // offs
  load_step(r0);
  store_step(0);
  __syncthreads();
  for (std::int64_t s = 0; s < nsteps; ++s) {
    const int buf = static_cast<int>(s & 1);
    const bool more = s + 1 < nsteps;
    if (more) load_step(r0 + (s + 1) * kStage);
    const std::int64_t left = rows - s * kStage;
    if (left >= kStage) {
      group(buf, 0);
      group(buf, 8);
    } else {
      const int full = static_cast<int>(left) / 8 * 8;
      if (full > 0) group(buf, 0);
      for (int kk = full; kk < static_cast<int>(left); ++kk) single_row(buf, kk);
    }
    if (more) store_step(buf ^ 1);
    __syncthreads();
  }

  double* out = P + static_cast<std::int64_t>(blockIdx.y) * D * D;
#pragma unroll
  for (int mt = 0; mt < 4; ++mt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t j = j0 + wm + 16 * mt + g + 8 * (e / 2);
      if (j >= dt) continue;
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const std::int64_t k = k0 + wn + 8 * nt + 2 * q + (e % 2);
        if (k < dt) out[j * D + k] = acc[mt][nt][e];
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
      T xs[4];
      if (load_x4(X, d, vec, i, c0, xs)) {
#pragma unroll
        for (int q = 0; q < 4; ++q) v[q] = static_cast<double>(gram_detail::centred(xs[q], off, c0 + q, s, weighted));
        reinterpret_cast<double2*>(zrow + c0)[0] = make_double2(v[0], v[1]);
        reinterpret_cast<double2*>(zrow + c0)[1] = make_double2(v[2], v[3]);
        continue;
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

// Columns of the widened copy for D columns: rows of 64 bytes or a multiple
// (aligned operands for cuBLAS's kernels).
inline std::int64_t widened_cols(std::int64_t D) { return (D + 7) / 8 * 8; }

// The targets on the device (a view of no rows when there are none, whose
// data may be null).
template <class T>
StagedMatrix<T> stage_targets(const Context& ctx, MatrixView<const T> Y) {
  return stage_to_device(ctx, MatrixView<const T>(Y.data, Y.cols > 0 ? Y.rows : 0, Y.cols, Y.row_stride,
                                                  Y.col_stride, Y.device));
}

// The upper triangle of C += Zᵀ Z (C: ldz x ldz, column-major; Z: rows x
// ldz row-major, i.e. column-major ldz x rows) as the DGEMM blocks of the
// column split; beta 0 on the first batch.
struct FastProduct {
  struct Block {
    std::int64_t a0, na, b0, nb;
  };
  std::int64_t ldz;
  std::vector<Block> blocks;

  explicit FastProduct(std::int64_t ldz_) : ldz(ldz_) {
    const std::int64_t h = fast_split(ldz);
    if (h >= ldz) {
      blocks.push_back({0, ldz, 0, ldz});
    } else {
      blocks.push_back({0, h, 0, h});
      blocks.push_back({0, h, h, ldz - h});
      blocks.push_back({h, ldz - h, h, ldz - h});
    }
  }
  void add(cublasHandle_t blas, const double* Z, std::int64_t rows, bool first, double* C) const {
    const double one = 1.0, beta = first ? 0.0 : 1.0;
    for (const Block& bl : blocks)
      TL_CUBLAS_CHECK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(bl.na), static_cast<int>(bl.nb),
                                  static_cast<int>(rows), &one, Z + bl.a0, static_cast<int>(ldz), Z + bl.b0,
                                  static_cast<int>(ldz), &beta, C + bl.a0 + bl.b0 * ldz, static_cast<int>(ldz)));
  }
};

// Rows per batch of the fast product: a widened copy of at most 1 GiB.
// (Widening the next batch on a side stream while cuBLAS multiplied this one
// was no faster on the H200: LinearRegression 2M x 256 took 13.5 ms against
// 12.7 ms, both kernels slower side by side.)
// TWINLEARN_GRAM_FAST_BATCH_ROWS overrides it (to test many batches).
std::int64_t fast_batch_rows(std::int64_t n, std::int64_t ldz) {
  std::int64_t cap = (std::int64_t(1) << 27) / ldz;
  if (const char* env = std::getenv("TWINLEARN_GRAM_FAST_BATCH_ROWS")) cap = std::strtoll(env, nullptr, 10);
  return std::min<std::int64_t>(n, std::max<std::int64_t>(1, cap));
}

template <class T>
void gram_fast(const Context& ctx, const T* X, std::int64_t d, const T* Y, std::int64_t t, const T* w, const T* off,
               std::int64_t n, std::vector<double>& batches) {
  const int dev = ctx.device().id;
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t D = d + t;
  const std::int64_t ldz = widened_cols(D);
  const std::int64_t batch_rows = fast_batch_rows(n, ldz);
  DeviceBuffer<double> Z(static_cast<std::size_t>(batch_rows * ldz), dev);
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(X) % 16 == 0;
  DeviceBuffer<double> C(static_cast<std::size_t>(ldz * ldz), dev);
  CublasLease blas(dev, stream);
  const FastProduct product(ldz);
  for (std::int64_t r0 = 0; r0 < n; r0 += batch_rows) {
    const std::int64_t rows = std::min(batch_rows, n - r0);
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>((rows + 3) / 4, 65536));
    centre_rows_kernel<T><<<grid, 256, 0, stream>>>(X, d, Y, t, w, off, r0, rows, ldz, vec, Z.data());
    TL_CUDA_CHECK_LAUNCH("centre_rows_kernel");
    product.add(blas.get(), Z.data(), rows, r0 == 0, C.data());
  }
  std::vector<double> host(static_cast<std::size_t>(ldz * ldz));
  TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), C.data(), sizeof(double) * ldz * ldz, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Column-major upper triangle: G[j, k] (j <= k < D) is C[j + k*ldz].
  batches.assign(static_cast<std::size_t>(D * D), 0.0);
  for (std::int64_t j = 0; j < D; ++j)
    for (std::int64_t k = j; k < D; ++k) batches[j * D + k] = host[j + k * ldz];
}

// -- gram_moments, fast mode ----------------------------------------------------

constexpr int kMomentsSlots = 4;   // rows side by side in a block (64 threads each)
constexpr int kMomentsLanes = 64;

// One pass over a batch of rows: Z = X - x0 widened to double (rows x ldz,
// the padding columns zero; x0 the first row), as centre_rows_kernel, and
// the block's moment sums of its rows (moments_size doubles, added to
// P[block] when `add`). The 64 threads of a slot take one row, thread
// `lane` the column groups lane + 64 g (g < G: X of at most 256 G columns),
// its sums in registers; TT >= t targets (unused ones read as zero). The
// slots' sums are added in shared memory at the end. With rows by grid stride and a fixed grid, the order
// of the sums is fixed by the shape (the same bits run to run).
template <class T, int G, int TT>
__global__ void __launch_bounds__(256)
    widen_moments_kernel(const T* __restrict__ X, std::int64_t d, const T* __restrict__ Y, std::int64_t t,
                         std::int64_t r0, std::int64_t rows, std::int64_t ldz, bool vec, double* __restrict__ Z,
                         double* __restrict__ P, bool add) {
  extern __shared__ double red[];
  const int slot = threadIdx.x / kMomentsLanes, lane = threadIdx.x % kMomentsLanes;
  const std::int64_t groups = ldz / 4;
  double x0[G][4], y0[TT], sx[G][4], cx[G][4][TT], sy[TT], syy[TT][TT];
#pragma unroll
  for (int c = 0; c < TT; ++c) {
    y0[c] = c < t ? static_cast<double>(Y[c]) : 0.0;
    sy[c] = 0.0;
#pragma unroll
    for (int e = 0; e < TT; ++e) syy[c][e] = 0.0;
  }
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const std::int64_t col = 4 * (lane + kMomentsLanes * g) + q;
      x0[g][q] = col < d ? static_cast<double>(X[col]) : 0.0;
      sx[g][q] = 0.0;
#pragma unroll
      for (int c = 0; c < TT; ++c) cx[g][q][c] = 0.0;
    }
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * kMomentsSlots + slot; b < rows;
       b += static_cast<std::int64_t>(gridDim.x) * kMomentsSlots) {
    const std::int64_t i = r0 + b;
    double u[TT];
#pragma unroll
    for (int c = 0; c < TT; ++c) u[c] = c < t ? static_cast<double>(Y[i * t + c]) - y0[c] : 0.0;
    double* zrow = Z + b * ldz;
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const std::int64_t grp = lane + kMomentsLanes * g;
      if (grp >= groups) break;
      const std::int64_t c0 = 4 * grp;
      T xs[4];
      if (!load_x4(X, d, vec, i, c0, xs)) {
#pragma unroll
        for (int q = 0; q < 4; ++q) xs[q] = c0 + q < d ? X[i * d + c0 + q] : T(0);
      }
      double z[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        z[q] = c0 + q < d ? static_cast<double>(xs[q]) - x0[g][q] : 0.0;
        sx[g][q] += z[q];
#pragma unroll
        for (int c = 0; c < TT; ++c) cx[g][q][c] = fma(z[q], u[c], cx[g][q][c]);
      }
      reinterpret_cast<double2*>(zrow + c0)[0] = make_double2(z[0], z[1]);
      reinterpret_cast<double2*>(zrow + c0)[1] = make_double2(z[2], z[3]);
    }
    if (lane == 0) {
#pragma unroll
      for (int c = 0; c < TT; ++c) {
        sy[c] += u[c];
#pragma unroll
        for (int e = 0; e < TT; ++e) syy[c][e] = fma(u[c], u[e], syy[c][e]);
      }
    }
  }
  // Slots 3, 2, 1, 0 in turn add their sums into shared memory, which then
  // holds the block's sums.
  const std::int64_t na = moments_size(ldz, t);
  for (int e = threadIdx.x; e < na; e += blockDim.x) red[e] = 0.0;
  __syncthreads();
  for (int s = kMomentsSlots - 1; s >= 0; --s) {
    if (slot == s) {
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const std::int64_t grp = lane + kMomentsLanes * g;
        if (grp >= groups) break;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          double* r = red + (4 * grp + q) * (1 + t);
          r[0] += sx[g][q];
          for (int c = 0; c < t && c < TT; ++c) r[1 + c] += cx[g][q][c];
        }
      }
      if (lane == 0) {
        double* r = red + ldz * (1 + t);
        for (int c = 0; c < t && c < TT; ++c) {
          r[c] += sy[c];
          for (int e = 0; e < t && e < TT; ++e) r[t + c * t + e] += syy[c][e];
        }
      }
    }
    __syncthreads();
  }
  double* out = P + static_cast<std::int64_t>(blockIdx.x) * na;
  for (int e = threadIdx.x; e < na; e += blockDim.x) out[e] = add ? out[e] + red[e] : red[e];
}

// R[e] = sum over the blocks' partials P[b * na + e], b in order.
__global__ void moments_total_kernel(const double* __restrict__ P, std::int64_t na, int nblocks,
                                     double* __restrict__ R) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= na) return;
  double s = 0.0;
  for (int b = 0; b < nblocks; ++b) s += P[static_cast<std::int64_t>(b) * na + e];
  R[e] = s;
}

template <class T, int G, int TT>
void launch_widen_moments(unsigned grid, cudaStream_t stream, std::size_t smem, const T* X, std::int64_t d,
                          const T* Y, std::int64_t t, std::int64_t r0, std::int64_t rows,
                          std::int64_t ldz, bool vec, double* Z, double* P, bool add) {
  auto* kernel = widen_moments_kernel<T, G, TT>;
  TL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<grid, 256, smem, stream>>>(X, d, Y, t, r0, rows, ldz, vec, Z, P, add);
  TL_CUDA_CHECK_LAUNCH("widen_moments_kernel");
}

}  // namespace

template <class T>
bool gram_moments_fast_cuda(const Context& ctx, MatrixView<const T> Xv, MatrixView<const T> Yv, bool center,
                            double* out, ColStat* stats) {
  const std::int64_t n = Xv.rows, d = Xv.cols, t = Yv.cols, D = d + t;
  const std::int64_t ldz = widened_cols(d);
  if (n < 1 || d < 1 || t > kMomentsMaxTargets || ldz > kMomentsMaxCols) return false;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, Xv);
  auto ys = stage_targets(ctx, Yv);
  const T* X = xs.view.data;
  const T* Y = t > 0 ? ys.view.data : nullptr;
  const std::int64_t batch_rows = fast_batch_rows(n, ldz);
  const unsigned grid =
      static_cast<unsigned>(std::min<std::int64_t>((batch_rows + kMomentsSlots - 1) / kMomentsSlots, 4 * sm_count()));
  const std::int64_t na = moments_size(ldz, t);
  const std::size_t smem = sizeof(double) * static_cast<std::size_t>(na);
  DeviceBuffer<double> Z(static_cast<std::size_t>(batch_rows * ldz), dev);
  DeviceBuffer<double> C(static_cast<std::size_t>(ldz * ldz), dev);
  DeviceBuffer<double> P(static_cast<std::size_t>(grid) * na, dev);
  DeviceBuffer<double> R(static_cast<std::size_t>(na), dev);
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(X) % 16 == 0;
  CublasLease blas(dev, stream);
  const FastProduct product(ldz);
  for (std::int64_t r0 = 0; r0 < n; r0 += batch_rows) {
    const std::int64_t rows = std::min(batch_rows, n - r0);
    const bool add = r0 > 0;
    if (ldz <= 256 && t <= 1)
      launch_widen_moments<T, 1, 1>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec, Z.data(), P.data(), add);
    else if (ldz <= 256)
      launch_widen_moments<T, 1, kMomentsMaxTargets>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec,
                                                     Z.data(), P.data(), add);
    else if (t <= 1)
      launch_widen_moments<T, 2, 1>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec, Z.data(), P.data(), add);
    else
      launch_widen_moments<T, 2, kMomentsMaxTargets>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec,
                                                     Z.data(), P.data(), add);
    product.add(blas.get(), Z.data(), rows, r0 == 0, C.data());
  }
  moments_total_kernel<<<static_cast<unsigned>((na + 255) / 256), 256, 0, stream>>>(P.data(), na,
                                                                                     static_cast<int>(grid), R.data());
  TL_CUDA_CHECK_LAUNCH("moments_total_kernel");
  std::vector<double> host(static_cast<std::size_t>(ldz * ldz)), m(static_cast<std::size_t>(na));
  std::vector<T> first(static_cast<std::size_t>(D));
  TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), C.data(), sizeof(double) * ldz * ldz, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(m.data(), R.data(), sizeof(double) * na, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(first.data(), X, sizeof(T) * d, cudaMemcpyDeviceToHost, stream));
  if (t > 0)
    TL_CUDA_CHECK(cudaMemcpyAsync(first.data() + d, Y, sizeof(T) * t, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> x0(static_cast<std::size_t>(D));
  for (std::int64_t c = 0; c < D; ++c) x0[c] = static_cast<double>(first[c]);
  return gram_detail::centre_moments(n, d, t, ldz, host.data(), m.data(), x0.data(), center, out, stats);
}

template bool gram_moments_fast_cuda<float>(const Context&, MatrixView<const float>, MatrixView<const float>, bool,
                                            double*, ColStat*);
template bool gram_moments_fast_cuda<double>(const Context&, MatrixView<const double>, MatrixView<const double>,
                                             bool, double*, ColStat*);

template <class T>
NumericMode gram_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                      const T* offset, std::vector<double>& batches) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t n = X.rows, d = X.cols, t = Y.cols, D = d + t, DD = D * D;
  auto xs = stage_to_device(ctx, X);
  auto ys = stage_targets(ctx, Y);
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
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(xs.view.data) % 16 == 0;
  TL_CUDA_CHECK(cudaFuncSetAttribute(gram_mma_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(kMmaSmem)));
  DeviceBuffer<double> P(static_cast<std::size_t>(std::min(per_batch, nchunks) * DD), dev);
  DeviceBuffer<double> R(static_cast<std::size_t>(nbatches * DD), dev);
  for (std::int64_t b = 0; b < nbatches; ++b) {
    const std::int64_t c0 = b * per_batch, nc = std::min(per_batch, nchunks - c0);
    if (npairs > 0) {
      dim3 grid(static_cast<unsigned>(npairs), static_cast<unsigned>(nc));
      gram_mma_kernel<T><<<grid, kThreads, kMmaSmem, stream>>>(xs.view.data, d, yp, t, wp, offp, n, kGramChunk, c0,
                                                               ntiles, dt, vec, P.data());
      TL_CUDA_CHECK_LAUNCH("gram_mma_kernel");
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
