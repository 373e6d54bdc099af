// cuBLAS for the fast paths: one handle per device, created on first use and
// kept for the process, with TF32 off (fast mode trades the summation order,
// not the precision of the products; KMeans' fast assignment and the fast
// neighbour search ask for TF32 per call, on split operands that keep float
// accuracy: core/cuda/tf32_split.cuh). A handle's stream is handle state, so
// work on one device's handle is serialised by a lease.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <mutex>

namespace tl::detail {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

// The device's handle, bound to `stream` while the lease lives.
class CublasLease {
 public:
  CublasLease(int device, cudaStream_t stream);
  CublasLease(const CublasLease&) = delete;
  CublasLease& operator=(const CublasLease&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cublasHandle_t handle_ = nullptr;
};

// Row-major C (m x n) = op(A) · op(B), op(A) m x k, op(B) k x n, all
// C-contiguous; ta / tb: the operand is used transposed.
void cublas_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const float* A, const float* B, float* C);
void cublas_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const double* A, const double* B,
                 double* C);

}  // namespace tl::detail

// cuBLAS status to an exception naming the call; allocation failure becomes
// tl::OutOfMemory (MemoryError in Python).
#define TL_CUBLAS_CHECK(call)                                                                       \
  do {                                                                                              \
    cublasStatus_t tl_st_ = (call);                                                                 \
    if (tl_st_ != CUBLAS_STATUS_SUCCESS) ::tl::detail::throw_cublas_error(tl_st_, #call, __FILE__, __LINE__); \
  } while (0)
