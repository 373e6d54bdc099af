// Dense symmetric positive definite solves for Gaussian-process regression:
// the Cholesky factor of K + alpha I and solves with it, many right-hand
// sides at once.
//
// Matrices are row-major doubles in host memory. The factor is kept as the
// upper triangle U of a row-major n x n buffer (A = Uᵀ U), which is the lower
// factor L = Uᵀ read column-major (cuSOLVER's convention, so both backends
// share one layout).
//
// On the host (every mode on the CPU backend, deterministic and identical
// mode on a GPU) each entry receives its updates in increasing k, one
// subtraction at a time, with IEEE operations only; threads split rows (the
// factorization) or columns of B (the solves), never one entry's sum, so the
// bits depend neither on the thread count nor on the machine
// (docs/NUMERICS.md, "Gaussian processes"). The factor has the same bits as
// tl::linalg::cholesky_upper's. Fast mode on a CUDA context calls cuSOLVER
// (potrf / potrs) on the context's GPU instead: accuracy only.
#pragma once
#include <cstdint>

#include "twinlearn/core/context.hpp"

namespace tl::gp {

// A (n x n) := U in place (upper triangle; the strict lower triangle is set
// to 0). Returns false when A is not positive definite (a pivot not
// positive or not finite); A's contents are then unspecified.
bool cholesky(const Context& ctx, double* A, std::int64_t n);

// B (n x m) := U⁻ᵀ B = L⁻¹ B (forward substitution), on the host in every
// mode (the triangular solve of a prediction's variance).
void solve_lower(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m);

// B (n x m) := (Uᵀ U)⁻¹ B.
void cho_solve(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m);

// out (n x n) := (Uᵀ U)⁻¹, as cho_solve of the identity (the zeros above the
// diagonal of L⁻¹ are skipped: the same bits as solving the full identity).
void cho_inverse(const Context& ctx, const double* U, std::int64_t n, double* out);

namespace host {
// The fixed-order host routines behind the functions above (any context).
bool cholesky(const Context& ctx, double* A, std::int64_t n);
void solve_lower(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m, bool identity);
void solve_upper(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m);
}  // namespace host

}  // namespace tl::gp
