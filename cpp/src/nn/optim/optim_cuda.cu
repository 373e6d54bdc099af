// Optimizers on the GPU: one launch over the whole tensor list. The host
// builds the chunk table (optim_common.hpp) and a table of the tensors'
// pointers; block b takes chunks b, b + gridDim.x, ... and its threads walk a
// chunk's elements (as float4 where the tensor's buffers are 16-byte
// aligned) with the CPU's per-element function, so every element gets
// the CPU's bits. Host tensors under a CUDA context are copied in and out.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "nn/optim/optim_common.hpp"

namespace tl::optim_detail {
using tl::detail::DeviceBuffer;
using tl::detail::DeviceGuard;
using tl::detail::download_async;
using tl::detail::upload_async;

namespace {

// A tensor's pointers and whether all of them are 16-byte aligned (then the
// chunk, whose start is a multiple of kChunk, is read as float4).
struct Entry {
  Ptrs p;
  bool vec4;
};

__device__ __forceinline__ float4 load4(const float* q, std::int64_t j) {
  return q ? reinterpret_cast<const float4*>(q)[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}
__device__ __forceinline__ void store4(float* q, std::int64_t j, float4 v) {
  if (q) reinterpret_cast<float4*>(q)[j] = v;
}

__global__ void step_kernel(Scalars s, const Entry* __restrict__ table, const Chunk* __restrict__ chunks,
                            std::int64_t n_chunks) {
  for (std::int64_t c = blockIdx.x; c < n_chunks; c += gridDim.x) {
    const Chunk k = chunks[c];
    const Entry e = table[k.tensor];
    const Ptrs& t = e.p;
    std::int64_t done = 0;
    if (e.vec4) {
      // The same per-element function on each lane of a float4.
      const std::int64_t n4 = k.len / 4, base = k.start / 4;
      for (std::int64_t j = base + threadIdx.x; j < base + n4; j += blockDim.x) {
        float4 p = load4(t.param, j), g = load4(t.grad, j), a = load4(t.s1, j), b = load4(t.s2, j), q = load4(t.s3, j);
        update_values(s, p.x, g.x, a.x, b.x, q.x);
        update_values(s, p.y, g.y, a.y, b.y, q.y);
        update_values(s, p.z, g.z, a.z, b.z, q.z);
        update_values(s, p.w, g.w, a.w, b.w, q.w);
        if (s.kind == kScale) {
          store4(t.grad, j, g);
          continue;
        }
        store4(t.param, j, p);
        store4(t.s1, j, a);
        store4(t.s2, j, b);
        store4(t.s3, j, q);
      }
      done = n4 * 4;
    }
    for (std::int64_t i = k.start + done + threadIdx.x; i < k.start + k.len; i += blockDim.x) update(s, t, i);
  }
}

bool aligned16(const float* q) { return (reinterpret_cast<std::uintptr_t>(q) & 15u) == 0; }

// A device copy of a host buffer of n floats (empty for null).
DeviceBuffer<float> stage(const float* h, std::int64_t n, int dev, cudaStream_t stream) {
  if (!h) return DeviceBuffer<float>();
  return upload_async(h, static_cast<std::size_t>(n), dev, stream);
}

}  // namespace

void step_cuda(const Context& ctx, const OptimTensor* tensors, std::int64_t count, const Scalars& s) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::vector<Chunk> chunks = chunk_table(tensors, count);
  if (chunks.empty()) return;
  std::vector<Entry> table(static_cast<std::size_t>(count));
  // Host tensors: staged copies (param, grad, states), copied back after.
  std::vector<DeviceBuffer<float>> staged;
  bool host = false;
  for (std::int64_t t = 0; t < count; ++t) {
    const OptimTensor& x = tensors[t];
    if (x.n > 0 && !x.device.is_cuda()) host = true;
  }
  if (host) staged.reserve(static_cast<std::size_t>(5 * count));
  for (std::int64_t t = 0; t < count; ++t) {
    const OptimTensor& x = tensors[t];
    Ptrs& p = table[static_cast<std::size_t>(t)].p;
    if (host && x.n > 0) {
      const float* src[5] = {x.param, x.grad, x.state1, x.state2, x.state3};
      float** dst[5] = {&p.param, &p.grad, &p.s1, &p.s2, &p.s3};
      for (int j = 0; j < 5; ++j) {
        staged.push_back(stage(src[j], x.n, dev, stream));
        *dst[j] = staged.back().data();
      }
    } else {
      p = Ptrs{x.param, const_cast<float*>(x.grad), x.state1, x.state2, x.state3};
    }
    table[static_cast<std::size_t>(t)].vec4 =
        aligned16(p.param) && aligned16(p.grad) && aligned16(p.s1) && aligned16(p.s2) && aligned16(p.s3);
  }
  auto d_table = upload_async(table.data(), table.size(), dev, stream);
  auto d_chunks = upload_async(chunks.data(), chunks.size(), dev, stream);
  const int block = 512;
  const std::int64_t n_chunks = static_cast<std::int64_t>(chunks.size());
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(n_chunks, 65535));
  step_kernel<<<grid, block, 0, stream>>>(s, d_table.data(), d_chunks.data(), n_chunks);
  TL_CUDA_CHECK_LAUNCH("optim step_kernel");
  if (host) {
    for (std::int64_t t = 0; t < count; ++t) {
      const OptimTensor& x = tensors[t];
      if (x.n == 0) continue;
      const Ptrs& p = table[static_cast<std::size_t>(t)].p;
      const std::size_t n = static_cast<std::size_t>(x.n);
      if (s.kind == kScale) {
        download_async(const_cast<float*>(x.grad), p.grad, n, stream);
        continue;
      }
      download_async(x.param, p.param, n, stream);
      if (x.state1) download_async(x.state1, p.s1, n, stream);
      if (x.state2) download_async(x.state2, p.s2, n, stream);
      if (x.state3) download_async(x.state3, p.s3, n, stream);
    }
  }
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace tl::optim_detail
