// Device memory: a caching allocator over cudaMalloc (never managed memory),
// RAII buffers, and host<->device staging for views.
//
// The cache keeps freed blocks per device, binned by rounded size, and hands
// them out again; when cudaMalloc fails it frees the cache and retries once,
// then raises tl::OutOfMemory naming the size asked for and the memory free.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "core/cuda/check.cuh"
#include "twinlearn/core/array.hpp"

namespace tl::detail {

void* device_alloc(std::size_t bytes, int device);
void device_free(void* p, std::size_t bytes, int device) noexcept;

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t n, int device) : n_(n), device_(device) {
    if (n_) p_ = static_cast<T*>(device_alloc(n_ * sizeof(T), device_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  ~DeviceBuffer() {
    if (p_) device_free(p_, n_ * sizeof(T), device_);
  }
  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  // Room for at least n elements on `device` (grow only; the contents are
  // not kept): buffers reused across the iterations of a fit, so that the
  // iterations allocate and free nothing (a free waits for the device).
  void reserve(std::size_t n, int device) {
    if (n_ < n) *this = DeviceBuffer(n, device);
  }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(device_, o.device_);
  }
  T* p_ = nullptr;
  std::size_t n_ = 0;
  int device_ = 0;
};

// Selects the context's device for the current thread for the guard's life.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    TL_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device) TL_CUDA_CHECK(cudaSetDevice(device));
    restore_ = prev_ != device;
  }
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(prev_);
  }

 private:
  int prev_ = 0;
  bool restore_ = false;
};

// A device copy of n host elements, queued on `stream` (the host buffer must
// stay alive until the stream reaches the copy), and the copy back.
template <class T>
DeviceBuffer<T> upload_async(const T* host, std::size_t n, int device, cudaStream_t stream) {
  DeviceBuffer<T> d(n, device);
  if (n) TL_CUDA_CHECK(cudaMemcpyAsync(d.data(), host, sizeof(T) * n, cudaMemcpyHostToDevice, stream));
  return d;
}

template <class T>
void download_async(T* host, const T* device_data, std::size_t n, cudaStream_t stream) {
  if (n) TL_CUDA_CHECK(cudaMemcpyAsync(host, device_data, sizeof(T) * n, cudaMemcpyDeviceToHost, stream));
}

// Host <-> device copies of large pageable host buffers through a pinned
// double buffer (the host-side copy split over the context's threads, each
// chunk's DMA overlapped with the next chunk's host copy). Small copies go
// straight to cudaMemcpyAsync. Both return once `dst` may be read: the H2D
// data is on the context's stream in order; the D2H data is on the host.
void copy_h2d(const Context& ctx, void* dst, const void* src, std::size_t bytes);
void copy_d2h(const Context& ctx, void* dst, const void* src, std::size_t bytes);

// A contiguous device copy of a (possibly host, possibly strided) matrix, or
// the matrix itself when it already is a contiguous device array.
template <class T>
struct StagedMatrix {
  DeviceBuffer<T> owned;
  MatrixView<const T> view;
};

template <class T>
StagedMatrix<T> stage_to_device(const Context& ctx, MatrixView<const T> m) {
  StagedMatrix<T> s;
  if (m.device.is_cuda() && m.is_c_contiguous()) {
    s.view = m;
    return s;
  }
  TL_REQUIRE(m.is_c_contiguous(), ValueError, "the CUDA backend needs C-contiguous arrays");
  const int dev = ctx.device().id;
  s.owned = DeviceBuffer<T>(static_cast<std::size_t>(m.size()), dev);
  copy_h2d(ctx, s.owned.data(), m.data, sizeof(T) * m.size());
  s.view = MatrixView<const T>(s.owned.data(), m.rows, m.cols, ctx.device());
  return s;
}

// Where a kernel writes a matrix result: the output itself when it is a
// device array, else a device buffer that finish() copies to the host array.
template <class T>
struct StagedOutput {
  DeviceBuffer<T> owned;
  T* data = nullptr;
  MatrixView<T> target;

  StagedOutput(const Context& ctx, MatrixView<T> out) : target(out) {
    TL_REQUIRE(out.is_c_contiguous(), ValueError, "the CUDA backend writes C-contiguous outputs only");
    if (out.on_host()) {
      owned = DeviceBuffer<T>(static_cast<std::size_t>(out.size()), ctx.device().id);
      data = owned.data();
    } else {
      data = out.data;
    }
  }
  void finish(const Context& ctx) {
    if (target.on_host()) copy_d2h(ctx, target.data, data, sizeof(T) * target.size());
  }
};

}  // namespace tl::detail
