#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/cuda/memory.cuh"
#include "core/cuda/runtime_cuda.hpp"

namespace tl::detail {
namespace {

// Sizes are rounded up to 512 bytes below 1 MiB and to 2 MiB above, so that a
// freed block serves later requests of similar size.
std::size_t round_size(std::size_t b) {
  if (b < (1u << 20)) return (b + 511) & ~std::size_t(511);
  const std::size_t two_mb = std::size_t(2) << 20;
  return (b + two_mb - 1) / two_mb * two_mb;
}

struct DevicePool {
  std::multimap<std::size_t, void*> free_blocks;  // rounded size -> block
  std::unordered_map<void*, std::size_t> live;    // block -> rounded size
  AllocatorStats stats;
};

struct Allocator {
  std::mutex mu;
  std::vector<DevicePool> pools;
  DevicePool& pool(int device) {
    if (device >= static_cast<int>(pools.size())) pools.resize(device + 1);
    return pools[device];
  }
  void release_locked(DevicePool& p) {
    for (auto& kv : p.free_blocks) cudaFree(kv.second);
    p.free_blocks.clear();
    p.stats.cached_bytes = 0;
  }
};

Allocator& allocator() {
  static Allocator* a = new Allocator();  // never destroyed: frees at exit are unsafe
  return *a;
}

}  // namespace

void* device_alloc(std::size_t bytes, int device) {
  const std::size_t sz = round_size(bytes == 0 ? 1 : bytes);
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mu);
  DevicePool& p = a.pool(device);
  p.stats.n_requests++;
  auto it = p.free_blocks.lower_bound(sz);
  // Reuse a cached block when it is not more than twice the size asked for.
  if (it != p.free_blocks.end() && it->first <= 2 * sz) {
    void* ptr = it->second;
    const std::size_t bsz = it->first;
    p.free_blocks.erase(it);
    p.stats.cached_bytes -= bsz;
    p.live[ptr] = bsz;
    p.stats.in_use_bytes += bsz;
    if (p.stats.in_use_bytes > p.stats.peak_bytes) p.stats.peak_bytes = p.stats.in_use_bytes;
    return ptr;
  }
  DeviceGuard guard(device);
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, sz);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    a.release_locked(p);
    err = cudaMalloc(&ptr, sz);
  }
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw OutOfMemory(detail::concat("CUDA out of memory on cuda:", device, ": tried to allocate ", bytes,
                                     " bytes (", bytes / double(1 << 20), " MiB) with ", free_b / double(1 << 20),
                                     " MiB free of ", total_b / double(1 << 20), " MiB"));
  }
  if (err != cudaSuccess) throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
  p.stats.n_device_allocs++;
  p.live[ptr] = sz;
  p.stats.in_use_bytes += sz;
  if (p.stats.in_use_bytes > p.stats.peak_bytes) p.stats.peak_bytes = p.stats.in_use_bytes;
  return ptr;
}

void device_free(void* ptr, std::size_t, int device) noexcept {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mu);
  DevicePool& p = a.pool(device);
  auto it = p.live.find(ptr);
  if (it == p.live.end()) return;
  const std::size_t sz = it->second;
  p.live.erase(it);
  p.stats.in_use_bytes -= sz;
  // Work queued on any stream may still read this block: the block is only
  // handed out again after the device has drained.
  cudaDeviceSynchronize();
  p.free_blocks.emplace(sz, ptr);
  p.stats.cached_bytes += sz;
}

AllocatorStats allocator_stats_impl(int device) {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mu);
  return a.pool(device).stats;
}

void allocator_release_cached_impl(int device) {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mu);
  DeviceGuard guard(device);
  a.release_locked(a.pool(device));
}

void device_alloc_probe_impl(int device, std::size_t bytes) {
  DeviceBuffer<unsigned char> b(bytes, device);
}

}  // namespace tl::detail
