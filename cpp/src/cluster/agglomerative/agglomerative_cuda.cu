// CUDA backend of agglomerative clustering's single linkage: Prim's scan on
// the device (twinlearn/cluster/agglomerative.hpp). Each step is two
// kernels: one thread per vertex updates its distance to the tree with
// agglo_distance (agglomerative_common.hpp, the CPU backend's bits) and the
// blocks reduce (distance, index) by agglo_better, a total order, so the
// chosen vertex is the CPU backend's whatever the reduction order; a
// one-block kernel picks the step's vertex and adds it to the tree. The
// current vertex stays on the device: no host round trip per step.
#include <limits>
#include <vector>

#include "cluster/agglomerative/agglomerative_common.hpp"
#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"

namespace tl::detail {
namespace {

constexpr int kBlock = 256;
constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();

__global__ void sqnorm_kernel(const double* x, std::int64_t n, std::int64_t d, std::int64_t ld, double* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = dist::sqnorm(x + i * ld, d);
}

__device__ void block_best(double v, std::int64_t i, double* sv, std::int64_t* si, double* out_v,
                           std::int64_t* out_i) {
  sv[threadIdx.x] = v;
  si[threadIdx.x] = i;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && agglo_better(sv[threadIdx.x + s], si[threadIdx.x + s], sv[threadIdx.x], si[threadIdx.x])) {
      sv[threadIdx.x] = sv[threadIdx.x + s];
      si[threadIdx.x] = si[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *out_v = sv[0];
    *out_i = si[0];
  }
}

// One thread per vertex j (one block per kBlock vertices): the distance of j
// to the tree after *cur joined it, and each block's best candidate.
__global__ void prim_update_kernel(AggloPoints p, const std::int64_t* cur, const std::uint8_t* in_tree, double* dist,
                                   double* part_v, std::int64_t* part_i) {
  __shared__ double sv[kBlock];
  __shared__ std::int64_t si[kBlock];
  const std::int64_t j = blockIdx.x * std::int64_t(kBlock) + threadIdx.x;
  const std::int64_t x = *cur;
  double v = INFINITY;
  std::int64_t i = kNone;
  if (j < p.n && !in_tree[j]) {
    const double dv = agglo_distance(p, x, j);
    double dj = dist[j];
    if (dv < dj) {
      dj = dv;
      dist[j] = dv;
    }
    v = dj;
    i = j;
  }
  block_best(v, i, sv, si, part_v + blockIdx.x, part_i + blockIdx.x);
}

// One block: the best of the blocks' candidates is the step's edge.
__global__ void prim_pick_kernel(const double* part_v, const std::int64_t* part_i, std::int64_t nparts,
                                 std::int64_t k, std::int64_t* cur, std::uint8_t* in_tree, std::int64_t* from,
                                 std::int64_t* to, double* w) {
  __shared__ double sv[kBlock];
  __shared__ std::int64_t si[kBlock];
  double bv = INFINITY;
  std::int64_t bi = kNone;
  for (std::int64_t q = threadIdx.x; q < nparts; q += kBlock)
    if (agglo_better(part_v[q], part_i[q], bv, bi)) {
      bv = part_v[q];
      bi = part_i[q];
    }
  __shared__ double rv;
  __shared__ std::int64_t ri;
  block_best(bv, bi, sv, si, &rv, &ri);
  if (threadIdx.x == 0) {
    from[k] = *cur;
    to[k] = ri;
    w[k] = rv;
    *cur = ri;
    in_tree[ri] = 1;
  }
}

}  // namespace

void agglo_prim_cuda(const Context& ctx, const AggloPoints& host_p, std::int64_t* from, std::int64_t* to, double* w) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t s = tl_stream(ctx);
  const std::int64_t n = host_p.n;
  TL_REQUIRE(host_p.kind != AggloDist::Precomputed, ValueError,
             "agglo_prim_cuda: a precomputed matrix runs on the host");
  AggloPoints p = host_p;
  StagedMatrix<double> xs =
      stage_to_device(ctx, MatrixView<const double>(host_p.x, n, host_p.d, host_p.ld, 1, host_p.device));
  p.x = xs.view.data;
  p.ld = host_p.d;
  const std::size_t nn = static_cast<std::size_t>(n);
  DeviceBuffer<double> d_norm;
  if (p.kind == AggloDist::Cosine) {
    d_norm = DeviceBuffer<double>(nn, dev);
    sqnorm_kernel<<<grid_for(n, kBlock), kBlock, 0, s>>>(p.x, n, p.d, p.ld, d_norm.data());
    TL_CUDA_CHECK_LAUNCH("sqnorm_kernel");
    p.sqnorm = d_norm.data();
  }
  const std::int64_t nparts = (n + kBlock - 1) / kBlock;
  DeviceBuffer<double> d_dist(nn, dev), d_pv(static_cast<std::size_t>(nparts), dev), d_w(nn, dev);
  DeviceBuffer<std::int64_t> d_pi(static_cast<std::size_t>(nparts), dev), d_from(nn, dev), d_to(nn, dev),
      d_cur(1, dev);
  DeviceBuffer<std::uint8_t> d_in(nn, dev);
  std::vector<double> inf(nn, std::numeric_limits<double>::infinity());
  TL_CUDA_CHECK(cudaMemcpyAsync(d_dist.data(), inf.data(), sizeof(double) * nn, cudaMemcpyHostToDevice, s));
  TL_CUDA_CHECK(cudaMemsetAsync(d_in.data(), 0, nn, s));
  TL_CUDA_CHECK(cudaMemsetAsync(d_in.data(), 1, 1, s));  // vertex 0 starts the tree
  TL_CUDA_CHECK(cudaMemsetAsync(d_cur.data(), 0, sizeof(std::int64_t), s));
  for (std::int64_t k = 0; k + 1 < n; ++k) {
    prim_update_kernel<<<static_cast<unsigned>(nparts), kBlock, 0, s>>>(p, d_cur.data(), d_in.data(), d_dist.data(),
                                                                         d_pv.data(), d_pi.data());
    TL_CUDA_CHECK_LAUNCH("prim_update_kernel");
    prim_pick_kernel<<<1, kBlock, 0, s>>>(d_pv.data(), d_pi.data(), nparts, k, d_cur.data(), d_in.data(),
                                          d_from.data(), d_to.data(), d_w.data());
    TL_CUDA_CHECK_LAUNCH("prim_pick_kernel");
  }
  const std::size_t ne = nn - 1;
  download_async(from, d_from.data(), ne, s);
  download_async(to, d_to.data(), ne, s);
  download_async(w, d_w.data(), ne, s);
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace tl::detail
