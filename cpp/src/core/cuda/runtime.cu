#include <cuda_runtime.h>

#include "core/cuda/check.cuh"
#include "core/cuda/runtime_cuda.hpp"

namespace tl::detail {

CudaStatus cuda_status_impl() {
  CudaStatus s;
  s.compiled = true;
#ifdef TWINLEARN_CUDA_ARCH
  s.arch = TWINLEARN_CUDA_ARCH;
#endif
  cudaRuntimeGetVersion(&s.runtime_version);
  if (cudaDriverGetVersion(&s.driver_version) != cudaSuccess) s.driver_version = 0;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    s.device_count = 0;
    s.error = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    if (s.driver_version == 0) s.error = "no NVIDIA driver found (" + s.error + ")";
  } else {
    s.device_count = n;
    if (n == 0) s.error = "the driver reports no CUDA device";
  }
  return s;
}

std::vector<GpuInfo> cuda_devices_impl() {
  std::vector<GpuInfo> out;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return out;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    TL_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
    GpuInfo g;
    g.id = i;
    g.name = p.name;
    g.cc_major = p.major;
    g.cc_minor = p.minor;
    g.total_memory = p.totalGlobalMem;
    g.multiprocessors = p.multiProcessorCount;
    int prev = 0;
    TL_CUDA_CHECK(cudaGetDevice(&prev));
    TL_CUDA_CHECK(cudaSetDevice(i));
    std::size_t fr = 0, tot = 0;
    TL_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
    TL_CUDA_CHECK(cudaSetDevice(prev));
    g.free_memory = fr;
    out.push_back(g);
  }
  return out;
}

void cuda_synchronize_impl(const Context& ctx) {
  TL_CUDA_CHECK(cudaSetDevice(ctx.device().id));
  TL_CUDA_CHECK(cudaStreamSynchronize(tl_stream(ctx)));
}

}  // namespace tl::detail
