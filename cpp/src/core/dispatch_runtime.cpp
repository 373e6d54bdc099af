// Runtime queries: forwarded to the CUDA backend when this module has one.
#include "twinlearn/core/runtime.hpp"
#include "twinlearn/core/error.hpp"
#include "core/cpu/cpu_clones.hpp"

#if TWINLEARN_WITH_CUDA
#include "core/cuda/runtime_cuda.hpp"
#endif

namespace tl {

CudaStatus cuda_status() {
#if TWINLEARN_WITH_CUDA
  return detail::cuda_status_impl();
#else
  CudaStatus s;
  s.error = "this module was built without CUDA";
  return s;
#endif
}

std::string cpu_isa() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
  switch (detail::cpu_isa()) {
    case detail::CpuIsa::Avx512: return "avx512";
    case detail::CpuIsa::Avx2: return "avx2";
    case detail::CpuIsa::Baseline: break;
  }
#endif
  return "baseline";
}

std::vector<GpuInfo> cuda_devices() {
#if TWINLEARN_WITH_CUDA
  return detail::cuda_devices_impl();
#else
  return {};
#endif
}

void cuda_synchronize(const Context& ctx) {
#if TWINLEARN_WITH_CUDA
  if (ctx.is_cuda()) detail::cuda_synchronize_impl(ctx);
#else
  (void)ctx;
#endif
}

AllocatorStats allocator_stats(int device) {
#if TWINLEARN_WITH_CUDA
  return detail::allocator_stats_impl(device);
#else
  (void)device;
  return {};
#endif
}

void allocator_release_cached(int device) {
#if TWINLEARN_WITH_CUDA
  detail::allocator_release_cached_impl(device);
#else
  (void)device;
#endif
}

void device_alloc_probe(int device, std::size_t bytes) {
#if TWINLEARN_WITH_CUDA
  detail::device_alloc_probe_impl(device, bytes);
#else
  (void)device;
  (void)bytes;
  throw NotAvailable("twinlearn was built without CUDA: the CUDA backend is not available in this module");
#endif
}

}  // namespace tl
