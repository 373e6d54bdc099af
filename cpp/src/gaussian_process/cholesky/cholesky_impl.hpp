// Backend entry points of tl::gp (validated; n > 0).
#pragma once
#include <cstdint>

#include "twinlearn/core/error.hpp"
#include "twinlearn/gaussian_process/cholesky.hpp"

namespace tl::gp::detail {

// cuSOLVER potrf / potrs on the context's GPU (fast mode): the same layout
// as the host routines; host buffers in and out.
bool cholesky_cuda(const Context& ctx, double* A, std::int64_t n);
void cho_solve_cuda(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m);
void cho_inverse_cuda(const Context& ctx, const double* U, std::int64_t n, double* out);

}  // namespace tl::gp::detail
