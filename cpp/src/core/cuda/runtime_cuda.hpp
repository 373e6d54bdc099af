// Host-side declarations of the CUDA runtime helpers (defined in runtime.cu, memory.cu).
#pragma once
#include "twinlearn/core/runtime.hpp"

namespace tl::detail {
CudaStatus cuda_status_impl();
std::vector<GpuInfo> cuda_devices_impl();
void cuda_synchronize_impl(const Context& ctx);
AllocatorStats allocator_stats_impl(int device);
void allocator_release_cached_impl(int device);
void device_alloc_probe_impl(int device, std::size_t bytes);
}  // namespace tl::detail
