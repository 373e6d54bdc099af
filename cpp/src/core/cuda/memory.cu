#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
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

namespace {

constexpr std::size_t kPinnedChunk = std::size_t(32) << 20;  // bytes per staging buffer
constexpr std::size_t kDirectCopy = std::size_t(8) << 20;    // below this, no staging

// Two pinned buffers and their "DMA done" events, per device.
struct PinnedRing {
  std::mutex mu;
  void* buf[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
};

PinnedRing& pinned_ring(int device) {
  static std::mutex mu;
  static std::map<int, PinnedRing*>* rings = new std::map<int, PinnedRing*>();
  std::lock_guard<std::mutex> lock(mu);
  PinnedRing*& r = (*rings)[device];
  if (!r) {
    auto* nr = new PinnedRing();
    for (int k = 0; k < 2; ++k) {
      TL_CUDA_CHECK(cudaHostAlloc(&nr->buf[k], kPinnedChunk, cudaHostAllocPortable));
      TL_CUDA_CHECK(cudaEventCreateWithFlags(&nr->done[k], cudaEventDisableTiming));
    }
    r = nr;
  }
  return *r;
}

// memcpy split over n threads (plain bytes: no arithmetic, so any split is exact).
void parallel_memcpy(void* dst, const void* src, std::size_t bytes, int n) {
  const std::size_t piece = std::max<std::size_t>(std::size_t(1) << 20, (bytes + n - 1) / n);
  const std::int64_t pieces = static_cast<std::int64_t>((bytes + piece - 1) / piece);
#pragma omp parallel for schedule(static) num_threads(n)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::size_t off = static_cast<std::size_t>(p) * piece;
    std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(piece, bytes - off));
  }
}

}  // namespace

void copy_h2d(const Context& ctx, void* dst, const void* src, std::size_t bytes) {
  cudaStream_t stream = tl_stream(ctx);
  if (bytes < kDirectCopy) {
    TL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  PinnedRing& ring = pinned_ring(ctx.device().id);
  std::lock_guard<std::mutex> lock(ring.mu);
  const int nt = std::min(ctx.n_threads(), 8);
  int k = 0;
  for (std::size_t off = 0; off < bytes; off += kPinnedChunk, k ^= 1) {
    const std::size_t len = std::min(kPinnedChunk, bytes - off);
    TL_CUDA_CHECK(cudaEventSynchronize(ring.done[k]));  // the DMA that last read buf[k] is over
    parallel_memcpy(ring.buf[k], static_cast<const char*>(src) + off, len, nt);
    TL_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, ring.buf[k], len, cudaMemcpyHostToDevice, stream));
    TL_CUDA_CHECK(cudaEventRecord(ring.done[k], stream));
  }
}

void copy_d2h(const Context& ctx, void* dst, const void* src, std::size_t bytes) {
  cudaStream_t stream = tl_stream(ctx);
  if (bytes < kDirectCopy) {
    TL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  PinnedRing& ring = pinned_ring(ctx.device().id);
  std::lock_guard<std::mutex> lock(ring.mu);
  const int nt = std::min(ctx.n_threads(), 8);
  const std::size_t nchunks = (bytes + kPinnedChunk - 1) / kPinnedChunk;
  auto issue = [&](std::size_t c) {
    const std::size_t off = c * kPinnedChunk, len = std::min(kPinnedChunk, bytes - off);
    TL_CUDA_CHECK(cudaMemcpyAsync(ring.buf[c & 1], static_cast<const char*>(src) + off, len,
                                  cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaEventRecord(ring.done[c & 1], stream));
  };
  issue(0);
  for (std::size_t c = 0; c < nchunks; ++c) {
    if (c + 1 < nchunks) issue(c + 1);  // the next chunk's DMA runs while this one is copied out
    TL_CUDA_CHECK(cudaEventSynchronize(ring.done[c & 1]));
    const std::size_t off = c * kPinnedChunk, len = std::min(kPinnedChunk, bytes - off);
    parallel_memcpy(static_cast<char*>(dst) + off, ring.buf[c & 1], len, nt);
  }
}

void device_alloc_probe_impl(int device, std::size_t bytes) {
  DeviceBuffer<unsigned char> b(bytes, device);
}

}  // namespace tl::detail
