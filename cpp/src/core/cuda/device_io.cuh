// Staging of 1-D inputs and outputs for the CUDA backend: device arrays are
// used in place, host arrays are copied in (inputs) or written through a
// device buffer and copied back (outputs). Both need contiguous memory.
#pragma once
#include "core/cuda/memory.cuh"

namespace tl::detail {

template <class T>
struct DeviceIn {
  DeviceBuffer<T> owned;
  const T* ptr = nullptr;
};

template <class T>
DeviceIn<T> device_in(const Context& ctx, VectorView<const T> v, const char* name) {
  TL_REQUIRE(v.is_contiguous(), ValueError, name, ": the CUDA backend needs a contiguous array");
  DeviceIn<T> s;
  if (v.size == 0) return s;
  if (v.device.is_cuda()) {
    s.ptr = v.data;
    return s;
  }
  s.owned = DeviceBuffer<T>(static_cast<std::size_t>(v.size), ctx.device().id);
  TL_CUDA_CHECK(cudaMemcpyAsync(s.owned.data(), v.data, sizeof(T) * v.size, cudaMemcpyHostToDevice, tl_stream(ctx)));
  s.ptr = s.owned.data();
  return s;
}

template <class T>
class DeviceOut {
 public:
  DeviceOut(const Context& ctx, VectorView<T> v, const char* name) : ctx_(ctx), v_(v) {
    TL_REQUIRE(v.is_contiguous(), ValueError, name, ": the CUDA backend needs a contiguous array");
    if (v.device.is_cuda() || v.size == 0) {
      ptr_ = v.data;
    } else {
      owned_ = DeviceBuffer<T>(static_cast<std::size_t>(v.size), ctx.device().id);
      ptr_ = owned_.data();
    }
  }
  T* ptr() const { return ptr_; }
  // Copies a staged result back to the host and waits for the stream.
  void finish() {
    if (owned_.data())
      TL_CUDA_CHECK(cudaMemcpyAsync(v_.data, owned_.data(), sizeof(T) * v_.size, cudaMemcpyDeviceToHost,
                                    tl_stream(ctx_)));
    TL_CUDA_CHECK(cudaStreamSynchronize(tl_stream(ctx_)));
  }

 private:
  const Context& ctx_;
  VectorView<T> v_;
  DeviceBuffer<T> owned_;
  T* ptr_ = nullptr;
};

}  // namespace tl::detail
