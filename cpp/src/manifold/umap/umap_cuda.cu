// UMAP layout on the GPU: the CPU backend's three steps per epoch as three
// kernels (one thread per edge, per head vertex, per vertex), with the
// shared schedule and displacement functions of umap_common.hpp, so the
// embedding is the CPU's bits.
#include <vector>

#include "core/cuda/kit.cuh"
#include "manifold/umap/umap_common.hpp"

namespace tl::umap_detail {
using namespace tl::cuda_kit;

namespace {

__global__ void schedule_kernel(std::int64_t n_edges, std::int64_t epoch, double rate, const double* __restrict__ eps,
                                double* next, double* next_neg, std::int64_t* count) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < n_edges) schedule_edge(e, epoch, rate, eps, next, next_neg, count);
}

__global__ void init_neg_kernel(std::int64_t n_edges, double rate, const double* __restrict__ eps, double* next_neg) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < n_edges) next_neg[e] = tl::num::div(eps[e], rate);
}

__global__ void delta_kernel(LayoutArgs g, float* delta) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < g.n_head) vertex_delta(g, i, delta + i * g.dim);
}

__global__ void move_kernel(std::int64_t n, float* head, const float* __restrict__ delta) {
  const std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q < n) head[q] = tl::num::add(head[q], delta[q]);
}

}  // namespace

void layout_cuda(const Context& ctx, float* head, const float* tail, LayoutArgs g, const double* eps,
                 const UmapLayoutParams& p) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t n_edges = g.indptr[g.n_head], dim = g.dim;
  const std::size_t ne = static_cast<std::size_t>(n_edges), nh = static_cast<std::size_t>(g.n_head * dim);
  auto d_head = upload_async(head, nh, dev, stream);
  DeviceBuffer<float> d_tail_own(tail ? static_cast<std::size_t>(g.n_tail * dim) : 0, dev);
  if (tail) d_tail_own = upload_async(tail, static_cast<std::size_t>(g.n_tail * dim), dev, stream);
  auto d_indptr = upload_async(g.indptr, static_cast<std::size_t>(g.n_head + 1), dev, stream);
  auto d_indices = upload_async(g.indices, ne, dev, stream);
  auto d_eps = upload_async(eps, ne, dev, stream);
  auto d_next = upload_async(eps, ne, dev, stream);
  DeviceBuffer<double> d_next_neg(ne, dev);
  DeviceBuffer<std::int64_t> d_count(ne, dev);
  DeviceBuffer<float> d_delta(nh, dev);
  DeviceBuffer<std::int64_t> d_rindptr(0, dev), d_redges(0, dev), d_edge_head(0, dev);
  if (g.rindptr) {
    d_rindptr = upload_async(g.rindptr, static_cast<std::size_t>(g.n_head + 1), dev, stream);
    d_redges = upload_async(g.redges, ne, dev, stream);
    d_edge_head = upload_async(g.edge_head, ne, dev, stream);
  }
  const int block = 256;
  if (n_edges > 0) {
    init_neg_kernel<<<blocks_for(n_edges, block), block, 0, stream>>>(n_edges, p.negative_sample_rate, d_eps.data(),
                                                                      d_next_neg.data());
    TL_CUDA_CHECK_LAUNCH("umap init_neg_kernel");
  }
  LayoutArgs dg = g;
  dg.head = d_head.data();
  dg.tail = tail ? d_tail_own.data() : d_head.data();
  dg.indptr = d_indptr.data();
  dg.indices = d_indices.data();
  dg.count = d_count.data();
  if (g.rindptr) {
    dg.rindptr = d_rindptr.data();
    dg.redges = d_redges.data();
    dg.edge_head = d_edge_head.data();
  }
  for (std::int64_t n = 0; n < p.n_epochs && g.n_head > 0; ++n) {
    if (n_edges > 0) {
      schedule_kernel<<<blocks_for(n_edges, block), block, 0, stream>>>(
          n_edges, n, p.negative_sample_rate, d_eps.data(), d_next.data(), d_next_neg.data(), d_count.data());
      TL_CUDA_CHECK_LAUNCH("umap schedule_kernel");
    }
    dg.epoch = n;
    dg.alpha = epoch_alpha(p.initial_alpha, n, p.n_epochs);
    delta_kernel<<<blocks_for(g.n_head, block), block, 0, stream>>>(dg, d_delta.data());
    TL_CUDA_CHECK_LAUNCH("umap delta_kernel");
    move_kernel<<<blocks_for(g.n_head * dim, block), block, 0, stream>>>(g.n_head * dim, d_head.data(), d_delta.data());
    TL_CUDA_CHECK_LAUNCH("umap move_kernel");
  }
  download_async(head, d_head.data(), nh, stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace tl::umap_detail
