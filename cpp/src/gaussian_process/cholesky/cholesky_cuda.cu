// cuSOLVER's potrf / potrs behind tl::gp in fast mode (one handle per
// device, shared with the other cuSOLVER users through device_slot).
//
// The row-major buffers read column-major are transposes: the row-major
// upper factor U is cuSOLVER's column-major lower factor L = Uᵀ, and a
// row-major n x m right-hand side is transposed on the host into the
// column-major n x m one cuSOLVER takes.
#include <vector>

#include "core/cuda/cusolver.cuh"
#include "core/cuda/memory.cuh"
#include "gaussian_process/cholesky/cholesky_impl.hpp"

namespace tl::gp::detail {
namespace {

using tl::detail::check_solver;
using tl::detail::with_solver;

// X (n x m column-major, device) := (L Lᵀ)⁻¹ X with the factor's n x n
// column-major lower triangle at host U.
void potrs(cusolverDnHandle_t h, cudaStream_t stream, int dev, const double* U, std::int64_t n, double* x,
           std::int64_t m) {
  using tl::detail::DeviceBuffer;
  DeviceBuffer<double> a(static_cast<std::size_t>(n * n), dev);
  DeviceBuffer<int> info(1, dev);
  TL_CUDA_CHECK(cudaMemcpyAsync(a.data(), U, sizeof(double) * n * n, cudaMemcpyHostToDevice, stream));
  check_solver(cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), static_cast<int>(m), a.data(),
                                static_cast<int>(n), x, static_cast<int>(n), info.data()),
               "cusolverDnDpotrs");
  int h_info = 0;
  TL_CUDA_CHECK(cudaMemcpyAsync(&h_info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  TL_REQUIRE(h_info == 0, CudaError, "cuSOLVER potrs: invalid argument ", -h_info);
}

}  // namespace

bool cholesky_cuda(const Context& ctx, double* A, std::int64_t n) {
  TL_REQUIRE(n < (std::int64_t(1) << 31), ValueError, "gp cholesky: n = ", n, " is larger than cuSOLVER takes");
  return with_solver(ctx, [&](cusolverDnHandle_t h, cudaStream_t stream, int dev) {
    using tl::detail::DeviceBuffer;
    const int ni = static_cast<int>(n);
    DeviceBuffer<double> a(static_cast<std::size_t>(n * n), dev);
    DeviceBuffer<int> info(1, dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(a.data(), A, sizeof(double) * n * n, cudaMemcpyHostToDevice, stream));
    int lwork = 0;
    check_solver(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, ni, a.data(), ni, &lwork),
                 "cusolverDnDpotrf_bufferSize");
    DeviceBuffer<double> work(static_cast<std::size_t>(lwork > 0 ? lwork : 1), dev);
    check_solver(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, ni, a.data(), ni, work.data(), lwork, info.data()),
                 "cusolverDnDpotrf");
    int h_info = 0;
    TL_CUDA_CHECK(cudaMemcpyAsync(A, a.data(), sizeof(double) * n * n, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaMemcpyAsync(&h_info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    TL_REQUIRE(h_info >= 0, CudaError, "cuSOLVER potrf: invalid argument ", -h_info);
    if (h_info > 0) return false;  // leading minor h_info is not positive definite
    for (std::int64_t i = 1; i < n; ++i)
      for (std::int64_t j = 0; j < i; ++j) A[i * n + j] = 0.0;
    return true;
  });
}

void cho_solve_cuda(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m) {
  with_solver(ctx, [&](cusolverDnHandle_t h, cudaStream_t stream, int dev) {
    std::vector<double> cm(static_cast<std::size_t>(n * m));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) cm[j * n + i] = B[i * m + j];
    tl::detail::DeviceBuffer<double> x(cm.size(), dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(x.data(), cm.data(), sizeof(double) * n * m, cudaMemcpyHostToDevice, stream));
    potrs(h, stream, dev, U, n, x.data(), m);
    TL_CUDA_CHECK(cudaMemcpyAsync(cm.data(), x.data(), sizeof(double) * n * m, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) B[i * m + j] = cm[j * n + i];
    return 0;
  });
}

void cho_inverse_cuda(const Context& ctx, const double* U, std::int64_t n, double* out) {
  with_solver(ctx, [&](cusolverDnHandle_t h, cudaStream_t stream, int dev) {
    std::vector<double> cm(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) cm[i * n + i] = 1.0;
    tl::detail::DeviceBuffer<double> x(cm.size(), dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(x.data(), cm.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice, stream));
    potrs(h, stream, dev, U, n, x.data(), n);
    TL_CUDA_CHECK(cudaMemcpyAsync(cm.data(), x.data(), sizeof(double) * n * n, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) out[i * n + j] = cm[j * n + i];
    return 0;
  });
}

}  // namespace tl::gp::detail
