// Turns CUDA errors into C++ exceptions that name the failing call and where
// it was made. Out-of-memory becomes tl::OutOfMemory (MemoryError in Python).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "twinlearn/core/context.hpp"
#include "twinlearn/core/error.hpp"

namespace tl::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  std::string msg = std::string("CUDA error in ") + call + " at " + file + ":" + std::to_string(line) + ": " +
                    cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) throw OutOfMemory(msg);
  throw CudaError(msg);
}

}  // namespace tl::detail

#define TL_CUDA_CHECK(call)                                                         \
  do {                                                                              \
    cudaError_t tl_err_ = (call);                                                   \
    if (tl_err_ != cudaSuccess) ::tl::detail::throw_cuda_error(tl_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports launch-configuration errors at the launch site.
#define TL_CUDA_CHECK_LAUNCH(name) TL_CUDA_CHECK(cudaGetLastError())

inline cudaStream_t tl_stream(const ::tl::Context& ctx) { return reinterpret_cast<cudaStream_t>(ctx.stream()); }
