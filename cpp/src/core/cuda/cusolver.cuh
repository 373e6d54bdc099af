// cuSOLVER for the fast paths (the symmetric eigensolver, the Gaussian
// process' Cholesky): one dense handle per device, created on first use and
// kept for the process (device_slot). A handle's stream is handle state, so
// work on one device's handle is serialised by the slot's mutex.
#pragma once
#include <cusolverDn.h>

#include <mutex>
#include <string>

#include "core/cuda/device_slot.cuh"
#include "core/cuda/memory.cuh"

namespace tl::detail {

// OutOfMemory for cuSOLVER's allocation failures, CudaError otherwise.
inline void check_solver(cusolverStatus_t st, const char* call) {
  if (st == CUSOLVER_STATUS_SUCCESS) return;
  const std::string msg = concat("cuSOLVER error in ", call, ": status ", static_cast<int>(st));
  if (st == CUSOLVER_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw CudaError(msg);
}

// fn(handle, stream, device) on the context's device, its handle bound to
// the context's stream and held for the call.
template <class Fn>
auto with_solver(const Context& ctx, Fn&& fn) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = ::tl_stream(ctx);
  auto& sh = device_slot<cusolverDnHandle_t>(dev);
  std::lock_guard<std::mutex> lock(sh.mu);
  if (!sh.h) check_solver(cusolverDnCreate(&sh.h), "cusolverDnCreate");
  check_solver(cusolverDnSetStream(sh.h, stream), "cusolverDnSetStream");
  return fn(sh.h, stream, dev);
}

}  // namespace tl::detail
