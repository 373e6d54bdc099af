// Symmetric eigendecomposition on a GPU, for the fast mode of the solvers
// that diagonalize a small Gram or covariance matrix (PCA's covariance_eigh,
// TruncatedSVD's arpack mapping).
//
// sym_eigh_device: the eigenvalues (ascending) and eigenvectors of the
// symmetric d x d matrix A (host memory, row-major; the lower triangle is
// read) by cuSOLVER's divide and conquer (syevd) on the context's GPU. w: d
// entries; V: d x d, row-major, column i the eigenvector of w[i], both host
// memory. cuSOLVER's summation order is its own, so the result honours only
// NumericMode::Fast: the other modes diagonalize on the host, the same on
// both backends (deterministic with LAPACK, identical with the fixed-order
// Jacobi eigensolver of twinlearn/core/jacobi.hpp). A CPU context raises
// NotAvailable; a failed factorization raises CudaError.
#pragma once
#include <cstdint>

#include "twinlearn/core/context.hpp"

namespace tl::linalg {

void sym_eigh_device(const Context& ctx, const double* A, std::int64_t d, double* w, double* V);

}  // namespace tl::linalg
