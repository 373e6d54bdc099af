// CUDA backend of the device array helpers: DeviceBuffers held by shared_ptr.
#include "core/cuda/memory.cuh"
#include "linalg/staging/staging_impl.hpp"

namespace tl::linalg::detail {

using ::tl::detail::DeviceBuffer;
using ::tl::detail::DeviceGuard;

DeviceArray device_empty_cuda(const Context& ctx, std::size_t bytes) {
  DeviceGuard guard(ctx.device().id);
  auto buf = std::make_shared<DeviceBuffer<unsigned char>>(bytes, ctx.device().id);
  DeviceArray a;
  a.data = buf->data();
  a.owner = std::move(buf);
  return a;
}

DeviceArray device_copy_cuda(const Context& ctx, const void* host, std::size_t bytes) {
  DeviceArray a = device_empty_cuda(ctx, bytes);
  if (bytes == 0) return a;
  DeviceGuard guard(ctx.device().id);
  cudaStream_t stream = tl_stream(ctx);
  TL_CUDA_CHECK(cudaMemcpyAsync(a.data, host, bytes, cudaMemcpyHostToDevice, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return a;
}

}  // namespace tl::linalg::detail
