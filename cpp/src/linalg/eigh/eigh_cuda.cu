// cuSOLVER's syevd behind tl::linalg::sym_eigh_device: one handle per
// device, created on first use and kept for the process.
#include <vector>

#include "core/cuda/cusolver.cuh"
#include "core/cuda/memory.cuh"
#include "linalg/eigh/eigh_impl.hpp"

namespace tl::linalg::detail {
using tl::detail::check_solver;

void sym_eigh_cuda(const Context& ctx, const double* A, std::int64_t d, double* w, double* V) {
  tl::detail::with_solver(ctx, [&](cusolverDnHandle_t h, cudaStream_t stream, int dev) {
    using tl::detail::DeviceBuffer;
    const int n = static_cast<int>(d);
    // Row-major A read column-major is Aᵀ = A: its lower triangle is A's upper
    // one, the same matrix. The eigenvectors come back as columns of a
    // column-major matrix, i.e. as rows of the row-major buffer.
    DeviceBuffer<double> a(static_cast<std::size_t>(d * d), dev), ev(static_cast<std::size_t>(d), dev);
    DeviceBuffer<int> info(1, dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(a.data(), A, sizeof(double) * d * d, cudaMemcpyHostToDevice, stream));
    int lwork = 0;
    check_solver(cusolverDnDsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.data(), n,
                                             ev.data(), &lwork),
                 "cusolverDnDsyevd_bufferSize");
    DeviceBuffer<double> work(static_cast<std::size_t>(lwork > 0 ? lwork : 1), dev);
    check_solver(cusolverDnDsyevd(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.data(), n, ev.data(),
                                  work.data(), lwork, info.data()),
                 "cusolverDnDsyevd");
    std::vector<double> rows(static_cast<std::size_t>(d * d));
    int h_info = 0;
    TL_CUDA_CHECK(cudaMemcpyAsync(w, ev.data(), sizeof(double) * d, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaMemcpyAsync(rows.data(), a.data(), sizeof(double) * d * d, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaMemcpyAsync(&h_info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    TL_REQUIRE(h_info == 0, CudaError, "cuSOLVER syevd did not converge (info = ", h_info, ")");
    // rows[i * d + r] is entry r of eigenvector i; V[r, i] (row-major) takes
    // it.
    for (std::int64_t i = 0; i < d; ++i)
      for (std::int64_t r = 0; r < d; ++r) V[r * d + i] = rows[i * d + r];
  });
}

}  // namespace tl::linalg::detail
