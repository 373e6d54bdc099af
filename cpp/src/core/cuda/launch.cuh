// Launch sizes shared by the CUDA kernels (host code): blocks for one thread
// per item, capped grids for grid-stride loops, and the device's
// multiprocessors, which size the grids that fill it. Results never depend
// on these sizes unless a kernel's comment says that its grid fixes an order.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/check.cuh"

namespace tl::detail {

// Blocks of `block` threads for n items, one thread each: ceil(n / block).
inline unsigned blocks_for(std::int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

// Grid for n one-thread-per-item tasks with a grid-stride loop: the grid is
// capped, and results never depend on it.
inline unsigned grid_for(std::int64_t n, int block) {
  const std::int64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(g < 65535 ? (g < 1 ? 1 : g) : 65535);
}

// Number of multiprocessors of device dev (at least 1).
inline int sm_count(int dev) {
  int sms = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms > 0 ? sms : 1;
}

// Number of multiprocessors of the current device (sizes grid-stride grids).
inline int sm_count() {
  int dev = 0;
  TL_CUDA_CHECK(cudaGetDevice(&dev));
  return sm_count(dev);
}

}  // namespace tl::detail
