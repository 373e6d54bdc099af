// CUDA backend of HDBSCAN's spanning tree (twinlearn/cluster/hdbscan.hpp):
// Prim's algorithm with the distances computed on the fly, one step as two
// kernels: every thread updates its rows outside the tree (the TL_HD steps of
// hdbscan_common.hpp, the CPU backend's bits) and each block reduces its
// candidates to the smallest (reachability, index); one block then merges
// the blocks' candidates by the same order, records the edge and adds the
// row to the tree. The (value, index) minimum is unique, so neither the grid
// nor the reduction's shape changes the result: the tree is the CPU's.
#include <algorithm>
#include <limits>
#include <vector>

#include "cluster/hdbscan/hdbscan_common.hpp"
#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"

namespace tl::detail {
namespace {

constexpr int kBlock = 256;

// Block reduction of (value, index) candidates by hdbscan_prim_better
// (index < 0: none); thread 0 gets the result.
__device__ void block_best(double& v, std::int64_t& i) {
  __shared__ double sv[kBlock];
  __shared__ std::int64_t si[kBlock];
  sv[threadIdx.x] = v;
  si[threadIdx.x] = i;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const std::int64_t oi = si[threadIdx.x + s];
      if (oi >= 0 && hdbscan_prim_better(sv[threadIdx.x + s], oi, sv[threadIdx.x], si[threadIdx.x])) {
        sv[threadIdx.x] = sv[threadIdx.x + s];
        si[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  v = sv[0];
  i = si[0];
}

struct PrimState {
  const double* x;       // n x d rows (ld), or the n x n matrix
  const double* norms;   // cosine: squared row norms
  const double* core;
  std::int64_t n, d, ld;
  double alpha, p;
  MetricKind kind;
  std::int64_t* cur;     // the row added last (one entry)
  std::uint8_t* in_tree;
  double* best;
  std::int64_t* source;
  double* blk_v;
  std::int64_t* blk_i;
};

template <dist::Family F, bool Pre>
__global__ void prim_step_kernel(PrimState st) {
  const std::int64_t cur = *st.cur;
  const double ccur = st.core[cur];
  const double* xc = st.x + cur * st.ld;
  double bv = 0.0;
  std::int64_t bi = -1;
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < st.n;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    if (st.in_tree[j]) continue;
    double dij;
    if (Pre) {
      dij = xc[j];
    } else {
      dij = hdbscan_pair_distance<F>(xc, st.x + j * st.ld, st.d, st.kind, st.p,
                                     st.norms ? st.norms[cur] : 0.0, st.norms ? st.norms[j] : 0.0);
    }
    const double m = hdbscan_mrd(ccur, st.core[j], dij, st.alpha);
    double b = st.best[j];
    std::int64_t s = st.source[j];
    hdbscan_prim_update(m, cur, &b, &s);
    st.best[j] = b;
    st.source[j] = s;
    if (hdbscan_prim_better(b, j, bv, bi)) {
      bv = b;
      bi = j;
    }
  }
  block_best(bv, bi);
  if (threadIdx.x == 0) {
    st.blk_v[blockIdx.x] = bv;
    st.blk_i[blockIdx.x] = bi;
  }
}

// One block: merges the blocks' candidates, writes edge `step`, adds the row.
__global__ void prim_pick_kernel(PrimState st, int nblocks, std::int64_t step, bool source_is_current,
                                 std::int64_t* src, std::int64_t* dst, double* w) {
  double bv = 0.0;
  std::int64_t bi = -1;
  for (int b = threadIdx.x; b < nblocks; b += blockDim.x) {
    const std::int64_t i = st.blk_i[b];
    if (i >= 0 && hdbscan_prim_better(st.blk_v[b], i, bv, bi)) {
      bv = st.blk_v[b];
      bi = i;
    }
  }
  block_best(bv, bi);
  if (threadIdx.x == 0) {
    const std::int64_t cur = *st.cur;
    src[step] = source_is_current ? cur : st.source[bi];
    dst[step] = bi;
    w[step] = bv;
    st.in_tree[bi] = 1;
    *st.cur = bi;
  }
}

template <dist::Family F, bool Pre>
void run_prim(PrimState st, int nblocks, bool source_is_current, std::int64_t* d_src, std::int64_t* d_dst,
              double* d_w, cudaStream_t s) {
  for (std::int64_t step = 0; step + 1 < st.n; ++step) {
    prim_step_kernel<F, Pre><<<nblocks, kBlock, 0, s>>>(st);
    TL_CUDA_CHECK_LAUNCH("prim_step_kernel");
    prim_pick_kernel<<<1, kBlock, 0, s>>>(st, nblocks, step, source_is_current, d_src, d_dst, d_w);
    TL_CUDA_CHECK_LAUNCH("prim_pick_kernel");
  }
}

}  // namespace

void hdbscan_mst_cuda(const Context& ctx, MatrixView<const double> X, Metric metric, bool precomputed,
                      const double* core, double alpha, bool source_is_current, std::int64_t* src,
                      std::int64_t* dst, double* weight) {
  const std::int64_t n = X.rows;
  if (n < 2) return;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t s = tl_stream(ctx);
  const std::size_t nn = static_cast<std::size_t>(n);
  // The rows (or matrix) packed C-contiguous on the device.
  const std::int64_t cols = X.cols;
  std::vector<double> packed;
  const double* host_x = X.data;
  if (X.row_stride != cols || (X.col_stride != 1 && cols > 1)) {
    packed.resize(nn * static_cast<std::size_t>(cols));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < cols; ++j) packed[static_cast<std::size_t>(i * cols + j)] = X(i, j);
    host_x = packed.data();
  }
  DeviceBuffer<double> d_x, d_norms, d_core, d_best, d_w, d_blk_v;
  DeviceBuffer<std::int64_t> d_cur, d_source, d_src, d_dst, d_blk_i;
  DeviceBuffer<std::uint8_t> d_in;
  d_x = upload_async(host_x, nn * static_cast<std::size_t>(cols), dev, s);
  const dist::Family fam = dist::family_of(metric);
  std::vector<double> norms;
  if (!precomputed && fam == dist::Family::Dot) {
    norms.resize(nn);
    hdbscan_row_sqnorms(X, norms.data());
    d_norms = upload_async(norms.data(), nn, dev, s);
  }
  d_core = upload_async(core, nn, dev, s);
  std::vector<double> best(nn, std::numeric_limits<double>::infinity());
  std::vector<std::int64_t> source(nn, 1);
  std::vector<std::uint8_t> in_tree(nn, 0);
  in_tree[0] = 1;
  const std::int64_t zero = 0;
  d_best = upload_async(best.data(), nn, dev, s);
  d_source = upload_async(source.data(), nn, dev, s);
  d_in = upload_async(in_tree.data(), nn, dev, s);
  d_cur = upload_async(&zero, 1, dev, s);
  const int nblocks = static_cast<int>(std::min<std::int64_t>(blocks_for(n, kBlock), 4 * sm_count(dev)));
  d_blk_v = DeviceBuffer<double>(static_cast<std::size_t>(nblocks), dev);
  d_blk_i = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(nblocks), dev);
  d_src = DeviceBuffer<std::int64_t>(nn - 1, dev);
  d_dst = DeviceBuffer<std::int64_t>(nn - 1, dev);
  d_w = DeviceBuffer<double>(nn - 1, dev);
  PrimState st{d_x.data(), norms.empty() ? nullptr : d_norms.data(), d_core.data(), n, cols, cols, alpha,
               metric.p, metric.kind, d_cur.data(), d_in.data(), d_best.data(), d_source.data(), d_blk_v.data(),
               d_blk_i.data()};
  if (precomputed) {
    run_prim<dist::Family::L2, true>(st, nblocks, source_is_current, d_src.data(), d_dst.data(), d_w.data(), s);
  } else {
    switch (fam) {
      case dist::Family::Dot:
        run_prim<dist::Family::Dot, false>(st, nblocks, source_is_current, d_src.data(), d_dst.data(), d_w.data(), s);
        break;
      case dist::Family::L1:
        run_prim<dist::Family::L1, false>(st, nblocks, source_is_current, d_src.data(), d_dst.data(), d_w.data(), s);
        break;
      case dist::Family::Linf:
        run_prim<dist::Family::Linf, false>(st, nblocks, source_is_current, d_src.data(), d_dst.data(), d_w.data(), s);
        break;
      case dist::Family::Lp:
        run_prim<dist::Family::Lp, false>(st, nblocks, source_is_current, d_src.data(), d_dst.data(), d_w.data(), s);
        break;
      case dist::Family::L2:
        run_prim<dist::Family::L2, false>(st, nblocks, source_is_current, d_src.data(), d_dst.data(), d_w.data(), s);
        break;
    }
  }
  download_async(src, d_src.data(), nn - 1, s);
  download_async(dst, d_dst.data(), nn - 1, s);
  download_async(weight, d_w.data(), nn - 1, s);
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace tl::detail
