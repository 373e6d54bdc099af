#include "core/cuda/blas.cuh"

#include <vector>

#include "core/cuda/check.cuh"
#include "core/cuda/device_slot.cuh"

namespace tl::detail {

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  const std::string msg =
      concat("cuBLAS error in ", call, " at ", file, ":", line, ": ", cublasGetStatusString(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw CudaError(msg);
}

CublasLease::CublasLease(int device, cudaStream_t stream) {
  DeviceSlot<cublasHandle_t>& d = device_slot<cublasHandle_t>(device);
  lock_ = std::unique_lock<std::mutex>(d.mu);
  if (!d.h) {
    TL_CUBLAS_CHECK(cublasCreate(&d.h));
    TL_CUBLAS_CHECK(cublasSetMathMode(d.h, CUBLAS_DEFAULT_MATH));  // no TF32
  }
  handle_ = d.h;
  TL_CUBLAS_CHECK(cublasSetStream(handle_, stream));
}

// Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and a
// row-major matrix read column-major is its transpose: a row-major operand
// that is used transposed is passed with OP_T.
void cublas_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const float* A, const float* B, float* C) {
  const float one = 1.0f, zero = 0.0f;
  TL_CUBLAS_CHECK(cublasSgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, B,
                              tb ? k : n, A, ta ? m : k, &zero, C, n));
}
void cublas_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const double* A, const double* B,
                 double* C) {
  const double one = 1.0, zero = 0.0;
  TL_CUBLAS_CHECK(cublasDgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, B,
                              tb ? k : n, A, ta ? m : k, &zero, C, n));
}

}  // namespace tl::detail
