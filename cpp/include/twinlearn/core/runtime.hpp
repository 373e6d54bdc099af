// What the CUDA runtime in this build can see, and the device allocator's
// statistics. Compiles without the CUDA headers; in a build without CUDA every
// query reports "not compiled" instead of failing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "twinlearn/core/context.hpp"

namespace tl {

struct GpuInfo {
  int id = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
  int multiprocessors = 0;
};

struct CudaStatus {
  bool compiled = false;      // this module contains the CUDA backend
  std::string arch;           // architectures compiled for, e.g. "90"
  int runtime_version = 0;    // CUDA runtime linked into the module (e.g. 13000)
  int driver_version = 0;     // 0 when no driver is installed
  int device_count = 0;
  std::string error;          // why no device is usable, when device_count == 0
};

struct AllocatorStats {
  std::size_t in_use_bytes = 0;
  std::size_t cached_bytes = 0;
  std::size_t peak_bytes = 0;
  std::uint64_t n_device_allocs = 0;  // calls to cudaMalloc
  std::uint64_t n_requests = 0;       // allocations served (from the cache or not)
};

CudaStatus cuda_status();
// The instruction set the CPU backend's run-time-dispatched loops use here:
// "baseline", "avx2" or "avx512" (the widest this CPU runs, capped by
// TWINLEARN_CPU_ISA; "baseline" off x86-64).
std::string cpu_isa();
std::vector<GpuInfo> cuda_devices();
void cuda_synchronize(const Context& ctx);
AllocatorStats allocator_stats(int device);
// Returns the cached (free) blocks of a device to the driver.
void allocator_release_cached(int device);
// Allocates `bytes` on `device` through the caching allocator and frees them
// again (diagnostics and tests of the out-of-memory path).
void device_alloc_probe(int device, std::size_t bytes);

}  // namespace tl
