// CUDA backend of DBSCAN's labelling (twinlearn/cluster/dbscan.hpp). Every
// step is integer arithmetic or dbscan_common.hpp's sequential weight sum,
// so the labels are the CPU backend's bits.
#include <vector>

#include "cluster/dbscan/dbscan_common.hpp"
#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"

namespace tl::detail {
namespace {

using ll = long long;
constexpr int kBlock = 256;

// One thread per point (grid-stride): its core flag.
__global__ void core_kernel(const std::int64_t* off, const std::int64_t* ind, const double* w, std::int64_t n,
                            std::int64_t min_samples, std::uint8_t* core) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    core[i] = dbscan_is_core(off, ind, w, i, min_samples) ? 1 : 0;
}

// One thread per point: sets *flag when one of its pairs breaks the symmetry.
__global__ void symmetry_kernel(const std::int64_t* off, const std::int64_t* ind, const std::uint8_t* core,
                                std::int64_t n, int* flag) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    for (std::int64_t k = off[i]; k < off[i + 1]; ++k)
      if (dbscan_edge_breaks_symmetry(off, ind, core, i, ind[k])) {
        atomicOr(flag, 1);
        break;
      }
  }
}

__device__ ll find_root(const ll* parent, ll x) {
  ll p = parent[x];
  while (p != x) {
    x = p;
    p = parent[x];
  }
  return x;
}

// One thread per core point i, over its core neighbours j > i: hooks the
// larger of the two roots under the smaller (atomicMin). parent[x] <= x
// always and only decreases, within x's component, so the fixed point is
// unique: every root is its component's lowest index. *changed is set while
// a pair joins two roots.
__global__ void hook_kernel(const std::int64_t* off, const std::int64_t* ind, const std::uint8_t* core,
                            std::int64_t n, ll* parent, int* changed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    if (!core[i]) continue;
    for (std::int64_t k = off[i]; k < off[i + 1]; ++k) {
      const std::int64_t j = ind[k];
      if (j <= i || !core[j]) continue;
      const ll a = find_root(parent, i), b = find_root(parent, j);
      if (a == b) continue;
      atomicMin(parent + (a < b ? b : a), a < b ? a : b);
      *changed = 1;
    }
  }
}

// One thread per point: its parent becomes its root (path compression).
__global__ void compress_kernel(std::int64_t n, ll* parent) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    parent[i] = find_root(parent, i);
}

// One thread per point: core points take their cluster id, the others the
// lowest id among their core neighbours (symmetric relation), or -1.
__global__ void label_kernel(const std::int64_t* off, const std::int64_t* ind, const std::uint8_t* core,
                             const std::int64_t* cid, std::int64_t n, std::int64_t* labels) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    if (core[i]) {
      labels[i] = cid[i];
      continue;
    }
    std::int64_t best = -1;
    for (std::int64_t k = off[i]; k < off[i + 1]; ++k) {
      const std::int64_t c = cid[ind[k]];
      if (c >= 0 && (best < 0 || c < best)) best = c;
    }
    labels[i] = best;
  }
}

template <class T>
void upload(DeviceBuffer<T>& buf, const T* src, std::size_t count, int dev, cudaStream_t s) {
  buf = DeviceBuffer<T>(count, dev);
  if (count) TL_CUDA_CHECK(cudaMemcpyAsync(buf.data(), src, sizeof(T) * count, cudaMemcpyHostToDevice, s));
}

}  // namespace

void dbscan_from_graph_cuda(const Context& ctx, std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                            const double* weight, const DbscanParams& params, std::int64_t* labels,
                            std::uint8_t* is_core) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t s = tl_stream(ctx);
  const std::size_t nn = static_cast<std::size_t>(n), ne = static_cast<std::size_t>(offsets[n]);
  DeviceBuffer<std::int64_t> d_off, d_ind, d_cid, d_lab;
  DeviceBuffer<double> d_w;
  upload(d_off, offsets, nn + 1, dev, s);
  upload(d_ind, ind, ne, dev, s);
  if (weight) upload(d_w, weight, nn, dev, s);
  DeviceBuffer<std::uint8_t> d_core(nn, dev);
  DeviceBuffer<int> d_flag(1, dev);
  const unsigned grid = grid_for(n, kBlock);
  core_kernel<<<grid, kBlock, 0, s>>>(d_off.data(), d_ind.data(), weight ? d_w.data() : nullptr, n,
                                      params.min_samples, d_core.data());
  TL_CUDA_CHECK_LAUNCH("core_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(is_core, d_core.data(), nn, cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaMemsetAsync(d_flag.data(), 0, sizeof(int), s));
  symmetry_kernel<<<grid, kBlock, 0, s>>>(d_off.data(), d_ind.data(), d_core.data(), n, d_flag.data());
  TL_CUDA_CHECK_LAUNCH("symmetry_kernel");
  int flag = 0;
  TL_CUDA_CHECK(cudaMemcpyAsync(&flag, d_flag.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
  if (flag) {  // scikit-learn's sequential expansion defines the result
    dbscan_expand_host(n, offsets, ind, is_core, labels);
    return;
  }
  std::vector<std::int64_t> root(nn);
  for (std::size_t i = 0; i < nn; ++i) root[i] = static_cast<std::int64_t>(i);
  DeviceBuffer<ll> d_parent(nn, dev);
  TL_CUDA_CHECK(cudaMemcpyAsync(d_parent.data(), root.data(), sizeof(ll) * nn, cudaMemcpyHostToDevice, s));
  for (;;) {
    TL_CUDA_CHECK(cudaMemsetAsync(d_flag.data(), 0, sizeof(int), s));
    hook_kernel<<<grid, kBlock, 0, s>>>(d_off.data(), d_ind.data(), d_core.data(), n, d_parent.data(),
                                        d_flag.data());
    TL_CUDA_CHECK_LAUNCH("hook_kernel");
    compress_kernel<<<grid, kBlock, 0, s>>>(n, d_parent.data());
    TL_CUDA_CHECK_LAUNCH("compress_kernel");
    TL_CUDA_CHECK(cudaMemcpyAsync(&flag, d_flag.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
    TL_CUDA_CHECK(cudaStreamSynchronize(s));
    if (!flag) break;
  }
  TL_CUDA_CHECK(cudaMemcpyAsync(root.data(), d_parent.data(), sizeof(ll) * nn, cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<std::int64_t> cid(nn);
  dbscan_cluster_ids(n, root.data(), is_core, cid.data());
  upload(d_cid, cid.data(), nn, dev, s);
  d_lab = DeviceBuffer<std::int64_t>(nn, dev);
  label_kernel<<<grid, kBlock, 0, s>>>(d_off.data(), d_ind.data(), d_core.data(), d_cid.data(), n, d_lab.data());
  TL_CUDA_CHECK_LAUNCH("label_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(labels, d_lab.data(), sizeof(std::int64_t) * nn, cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace tl::detail
