// CUDA backend of logistic regression. The optimizer runs on the device: a
// step is the fused evaluation kernel, the tree kernel and the single-block
// controller kernel, all reading the optimizer state in device memory and
// doing nothing once it says done. The host enqueues steps in groups and
// reads the done flag once per group, never per iteration.
#include <algorithm>
#include <vector>

#include "core/cuda/block_tree.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "linear_model/logistic/logistic_impl.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {
namespace {

using namespace logistic_detail;

constexpr int kRows = static_cast<int>(kLogisticChunk);  // rows per block, one thread each
constexpr int kSlab = 32;                                // features staged per step
constexpr int kMaxClassesCuda = 128;
constexpr int kStepsPerSync = 8;
constexpr int kControllerThreads = 256;

// Loss and gradient partials of one chunk of rows.
//
// Mapping: block c handles rows 128c..128c+127, thread r row 128c + r.
// Scores: the features are walked in slabs of 32; the block stages the
// 128 x 32 slab of X in shared memory (a warp reads 32 consecutive features
// of one row, coalesced) and each thread continues the fma chains of its
// row's K scores (kept in shared memory between slabs) over the slab in
// increasing feature order. Thread r then computes its row's loss and
// residuals; thread 0 chains the chunk's weighted losses in row order.
// Gradient: thread t computes entries p = t, t + 128, ... (p = k*cols + j),
// each one fma chain over the chunk's rows in order, reading X again (from
// cache). part[p * nchunks + c] receives entry p, part[P * nchunks + c] the loss.
template <class T>
__global__ void __launch_bounds__(kRows) logistic_eval_kernel(const T* __restrict__ X, const std::int32_t* __restrict__ y,
                                                              const T* __restrict__ w, Geometry geo,
                                                              const double* __restrict__ W, const State* st,
                                                              double* __restrict__ part) {
  if (st->done) return;
  extern __shared__ double zs[];  // kRows * K scores, then kRows weighted losses
  __shared__ T xs[kRows][kSlab + 1];
  const std::int64_t d = geo.d, K = geo.rows, cols = geo.cols, P = geo.P;
  double* ls = zs + kRows * K;
  const int r = threadIdx.x;
  const std::int64_t c = blockIdx.x;
  const std::int64_t r0 = c * kRows;
  const int nr = static_cast<int>(geo.n - r0 < kRows ? geo.n - r0 : kRows);

  for (std::int64_t k = 0; k < K; ++k) zs[r * K + k] = 0.0;
  for (std::int64_t j0 = 0; j0 < d; j0 += kSlab) {
    const int width = static_cast<int>(d - j0 < kSlab ? d - j0 : kSlab);
    for (int e = r; e < kRows * kSlab; e += kRows) {
      const int rr = e / kSlab, jj = e % kSlab;
      xs[rr][jj] = (rr < nr && jj < width) ? X[(r0 + rr) * d + j0 + jj] : T(0);
    }
    __syncthreads();
    if (r < nr) {
      for (std::int64_t k = 0; k < K; ++k) {
        const double* wk = W + k * cols + j0;
        double acc = zs[r * K + k];
        for (int jj = 0; jj < width; ++jj) acc = num::fma(static_cast<double>(xs[r][jj]), wk[jj], acc);
        zs[r * K + k] = acc;
      }
    }
    __syncthreads();
  }
  if (r < nr) {
    if (geo.fi)
      for (std::int64_t k = 0; k < K; ++k) zs[r * K + k] = num::add(zs[r * K + k], W[k * cols + d]);
    const double s = w ? static_cast<double>(w[r0 + r]) : 1.0;
    const double li = row_loss(zs + r * K, K, y[r0 + r], s);
    ls[r] = li;
  }
  __syncthreads();
  if (r == 0) {
    double loss = 0.0;
    for (int i = 0; i < nr; ++i) loss = num::fma(w ? static_cast<double>(w[r0 + i]) : 1.0, ls[i], loss);
    part[P * geo.nchunks + c] = loss;
  }
  for (std::int64_t p = r; p < P; p += kRows) {
    const std::int64_t k = p / cols, j = p % cols;
    double acc = 0.0;
    if (j < d) {
      for (int i = 0; i < nr; ++i) acc = num::fma(zs[i * K + k], static_cast<double>(X[(r0 + i) * d + j]), acc);
    } else {
      for (int i = 0; i < nr; ++i) acc = num::fma(zs[i * K + k], 1.0, acc);
    }
    part[p * geo.nchunks + c] = acc;
  }
}

// The canonical tree over the chunk partials, one block per entry (the P
// gradient entries and the loss): level by level, the block's threads
// compute one level's sums in parallel, ping-ponging between a and b
// (block_tree).
__global__ void logistic_tree_kernel(double* __restrict__ a, double* __restrict__ b, std::int64_t nchunks,
                                     const State* st, double* __restrict__ sums) {
  if (st->done) return;
  const std::int64_t e = blockIdx.x;
  const double* r =
      block_tree(a + e * nchunks, b + e * nchunks, nchunks, [](double x, double y) { return num::add(x, y); });
  if (threadIdx.x == 0) sums[e] = r[0];
}

// Block-wide vector operations for the controller: every thread calls every
// operation; element-wise work is strided over the threads and ends with a
// barrier; reductions compute the canonical chunk partials in parallel, the
// tree on thread 0, and broadcast the result.
struct GpuOps {
  std::int64_t P;
  double* scratch;  // global, ceil(P / kDotChunk)
  double* bc;       // shared, one value

  template <class F, class M>
  __device__ double chunked(F term, M merge) {
    const std::int64_t nc = (P + kDotChunk - 1) / kDotChunk;
    for (std::int64_t c = threadIdx.x; c < nc; c += blockDim.x) {
      double acc = 0.0;
      const std::int64_t end = (c + 1) * kDotChunk < P ? (c + 1) * kDotChunk : P;
      for (std::int64_t p = c * kDotChunk; p < end; ++p) acc = term(p, acc);
      scratch[c] = acc;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      tree_reduce_inplace(scratch, nc, 1, merge);
      *bc = nc > 0 ? scratch[0] : 0.0;
    }
    __syncthreads();
    const double r = *bc;
    __syncthreads();
    return r;
  }
  struct Add {
    __device__ double operator()(double a, double b) const { return num::add(a, b); }
  };
  struct Max {
    __device__ double operator()(double a, double b) const { return (a != a || b <= a) ? a : b; }
  };
  __device__ double dot(const double* a, const double* b) {
    return chunked([&](std::int64_t p, double acc) { return num::fma(a[p], b[p], acc); }, Add());
  }
  __device__ double dot_diff(const double* a, const double* b, const double* c) {
    return chunked([&](std::int64_t p, double acc) { return num::fma(a[p], num::sub(b[p], c[p]), acc); }, Add());
  }
  __device__ double penalty_l2(const double* x, const Geometry& g) {
    return chunked([&](std::int64_t p, double acc) { return g.penalised(p) ? num::fma(x[p], x[p], acc) : acc; },
                   Add());
  }
  __device__ double penalty_l1(const double* x, const Geometry& g) {
    return chunked([&](std::int64_t p, double acc) { return g.penalised(p) ? num::add(acc, absd(x[p])) : acc; },
                   Add());
  }
  __device__ double maxabs(const double* a) {
    return chunked(
        [&](std::int64_t p, double acc) {
          const double v = absd(a[p]);
          return (acc != acc || v <= acc) ? acc : v;
        },
        Max());
  }
  template <class F>
  __device__ void each(F f) {
    for (std::int64_t p = threadIdx.x; p < P; p += blockDim.x) f(p);
    __syncthreads();
  }
  __device__ void smooth_gradient(double* gt, const double* sums, const double* xt, double inv_s, double l2,
                                  const Geometry& g) {
    each([&](std::int64_t p) { gt[p] = smooth_gradient_entry(sums[p], xt[p], inv_s, l2, g.penalised(p)); });
  }
  __device__ void pseudo_gradient(double* pg, const double* g, const double* x, double l1, const Geometry& gm) {
    each([&](std::int64_t p) { pg[p] = pseudo_gradient_entry(g[p], x[p], l1, gm.penalised(p)); });
  }
  __device__ void owl_trial(double* xt, const double* x, double alpha, const double* d, const double* pg,
                            const Geometry& gm) {
    each([&](std::int64_t p) { xt[p] = owl_trial_entry(x[p], alpha, d[p], pg[p], gm.penalised(p)); });
  }
  __device__ void owl_project_direction(double* d, const double* pg) {
    each([&](std::int64_t p) { d[p] = project_direction_entry(d[p], pg[p]); });
  }
  __device__ void xpay(double* out, const double* x, double a, const double* y) {
    each([&](std::int64_t p) { out[p] = xpay_entry(x[p], a, y[p]); });
  }
  __device__ void axpy(double* y, double a, const double* x) {
    each([&](std::int64_t p) { y[p] = xpay_entry(y[p], a, x[p]); });
  }
  __device__ void scale(double* x, double a) {
    each([&](std::int64_t p) { x[p] = num::mul(x[p], a); });
  }
  __device__ void diff(double* out, const double* a, const double* b) {
    each([&](std::int64_t p) { out[p] = num::sub(a[p], b[p]); });
  }
  __device__ void copy(double* out, const double* a) {
    each([&](std::int64_t p) { out[p] = a[p]; });
  }
  __device__ void neg_copy(double* out, const double* a) {
    each([&](std::int64_t p) { out[p] = -a[p]; });
  }
};

// One controller step on one block: every thread runs the same scalar logic
// on its own copy of the state (the values agree), thread 0 writes it back.
__global__ void __launch_bounds__(kControllerThreads)
    logistic_controller_kernel(State* gst, Vectors v, Geometry geo, Params prm) {
  __shared__ double bc;
  State st = *gst;
  if (st.done) return;
  GpuOps ops{geo.P, v.scratch, &bc};
  controller_step(ops, st, v, geo, prm);
  __syncthreads();
  if (threadIdx.x == 0) *gst = st;
}

// Probabilities, one thread per row.
template <class T>
__global__ void logistic_proba_kernel(const T* __restrict__ s, std::int64_t n, std::int64_t scols, std::int64_t ncls,
                                      bool take_log, T* __restrict__ out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  proba_row(s + i * scols, ncls, scols == 1, take_log, out + i * ncls);
}

}  // namespace

template <class T>
LogisticResult logistic_lbfgs_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const std::int32_t> y,
                                   VectorView<const T> w, const Geometry& geo, const Params& prm, double* W) {
  TL_REQUIRE(geo.rows <= kMaxClassesCuda, ValueError, "the CUDA backend fits at most ", kMaxClassesCuda,
             " classes; got ", geo.rows);
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  auto ys = stage_to_device(ctx, MatrixView<const std::int32_t>(y.data, y.size, 1, y.device));
  auto ws = stage_to_device(ctx, MatrixView<const T>(w.data, w.data ? w.size : 0, 1, w.device));
  const T* wp = w.data ? ws.view.data : nullptr;
  const std::int64_t P = geo.P, m = prm.memory, nc = geo.nchunks;
  const std::int64_t nscratch = (P + kDotChunk - 1) / kDotChunk;
  DeviceBuffer<double> store(static_cast<std::size_t>(8 * P + 1 + 2 * m * P + 2 * m + nscratch), dev);
  Vectors v;
  double* q = store.data();
  v.x = q; q += P;
  v.g = q; q += P;
  v.pg = q; q += P;
  v.d = q; q += P;
  v.xt = q; q += P;
  v.sums = q; q += P + 1;
  v.gt = q; q += P;
  v.S = q; q += m * P;
  v.Y = q; q += m * P;
  v.rho = q; q += m;
  v.a = q; q += m;
  v.scratch = q;
  DeviceBuffer<double> pa(static_cast<std::size_t>((P + 1) * nc), dev), pb(static_cast<std::size_t>((P + 1) * nc), dev);
  DeviceBuffer<State> gst(1, dev);
  State init;
  TL_CUDA_CHECK(cudaMemcpyAsync(gst.data(), &init, sizeof(State), cudaMemcpyHostToDevice, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(v.xt, W, sizeof(double) * P, cudaMemcpyHostToDevice, stream));
  TL_CUDA_CHECK(cudaMemsetAsync(store.data(), 0, sizeof(double) * P, stream));

  const std::size_t smem = sizeof(double) * static_cast<std::size_t>(kRows * geo.rows + kRows);
  TL_CUDA_CHECK(cudaFuncSetAttribute(logistic_eval_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem)));
  // Enough steps for every iteration's longest line search, and a restart each.
  const long long max_steps = (prm.max_iter + 2) * (2LL * prm.max_ls + 2) + 2;
  long long steps = 0;
  State host_state;
  for (;;) {
    for (int s = 0; s < kStepsPerSync; ++s) {
      logistic_eval_kernel<T><<<static_cast<unsigned>(nc), kRows, smem, stream>>>(xs.view.data, ys.view.data, wp, geo,
                                                                                 v.xt, gst.data(), pa.data());
      TL_CUDA_CHECK_LAUNCH("logistic_eval_kernel");
      logistic_tree_kernel<<<static_cast<unsigned>(P + 1), 256, 0, stream>>>(pa.data(), pb.data(), nc, gst.data(),
                                                                             v.sums);
      TL_CUDA_CHECK_LAUNCH("logistic_tree_kernel");
      logistic_controller_kernel<<<1, kControllerThreads, 0, stream>>>(gst.data(), v, geo, prm);
      TL_CUDA_CHECK_LAUNCH("logistic_controller_kernel");
    }
    steps += kStepsPerSync;
    TL_CUDA_CHECK(cudaMemcpyAsync(&host_state, gst.data(), sizeof(State), cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (host_state.done) break;
    TL_REQUIRE(steps < max_steps, ValueError, "logistic regression: the optimizer did not terminate");
  }
  TL_CUDA_CHECK(cudaMemcpyAsync(W, v.x, sizeof(double) * P, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  LogisticResult r;
  r.n_iter = host_state.iter;
  r.n_evals = host_state.nevals;
  r.status = static_cast<LogisticStatus>(host_state.status);
  r.objective = host_state.fk;
  return r;
}

template <class T>
void logistic_proba_cuda(const Context& ctx, MatrixView<const T> scores, bool log, MatrixView<T> out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  TL_REQUIRE(out.is_c_contiguous(), ValueError, "the CUDA backend needs a C-contiguous output");
  auto ss = stage_to_device(ctx, scores);
  const std::int64_t n = scores.rows, ncls = out.cols;
  DeviceBuffer<T> obuf;
  T* optr = out.data;
  if (!out.device.is_cuda()) {
    obuf = DeviceBuffer<T>(static_cast<std::size_t>(n * ncls), dev);
    optr = obuf.data();
  }
  logistic_proba_kernel<T><<<blocks_for(n, 256), 256, 0, stream>>>(ss.view.data, n, scores.cols,
                                                                                       ncls, log, optr);
  TL_CUDA_CHECK_LAUNCH("logistic_proba_kernel");
  if (!out.device.is_cuda())
    TL_CUDA_CHECK(cudaMemcpyAsync(out.data, optr, sizeof(T) * n * ncls, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define TL_INSTANTIATE(T)                                                                                      \
  template LogisticResult logistic_lbfgs_cuda<T>(const Context&, MatrixView<const T>,                         \
                                                 VectorView<const std::int32_t>, VectorView<const T>,         \
                                                 const Geometry&, const Params&, double*);                    \
  template void logistic_proba_cuda<T>(const Context&, MatrixView<const T>, bool, MatrixView<T>);
TL_INSTANTIATE(float)
TL_INSTANTIATE(double)
#undef TL_INSTANTIATE

}  // namespace tl::detail
