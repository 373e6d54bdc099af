// The fixed-order host routines of tl::gp (see cholesky.hpp). Every entry
// receives its updates one subtraction at a time in a fixed order of k;
// blocking only changes which loop runs outermost, never that order, and
// threads own whole rows (factorization) or whole column ranges (solves).
#include <algorithm>
#include <cmath>

#include "core/cpu/cpu_clones.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/gaussian_process/cholesky.hpp"

namespace tl::gp::host {

namespace {

constexpr std::int64_t kBlock = 32;   // rows of U applied together (they stay in cache)
constexpr std::int64_t kTile = 512;   // columns of a row updated together (L1)
constexpr std::int64_t kCols = 64;    // right-hand-side columns per thread task

// r[j] -= c * s[j] for j in [j0, j1): one rounding for the product, one for
// the difference (the build does not contract them into an fma).
TL_CPU_CLONES_512 void axpy_minus(double* __restrict__ r, const double* __restrict__ s, double c, std::int64_t j0,
                                  std::int64_t j1) {
  for (std::int64_t j = j0; j < j1; ++j) r[j] = r[j] - c * s[j];
}

TL_CPU_CLONES_512 void scale_div(double* r, double d, std::int64_t j0, std::int64_t j1) {
  for (std::int64_t j = j0; j < j1; ++j) r[j] = r[j] / d;
}

}  // namespace

bool cholesky(const Context& ctx, double* A, std::int64_t n) {
  // Right-looking in blocks of kBlock rows: the block's rows are factored one
  // after another (each updating the block's later rows), then every row
  // below takes the block's updates in increasing k, tile by tile of
  // columns. Entry (i, j), j >= i: A[i][j] - U[0][i] U[0][j] - U[1][i] U[1][j]
  // - ... in increasing k, then / U[i][i] (tl::linalg::cholesky_upper's order).
  for (std::int64_t k0 = 0; k0 < n; k0 += kBlock) {
    const std::int64_t k1 = std::min(k0 + kBlock, n);
    for (std::int64_t k = k0; k < k1; ++k) {
      double* rk = A + k * n;
      const double akk = rk[k];
      if (!(akk > 0.0) || num::is_inf(akk)) return false;
      const double ukk = num::sqrt(akk);
      rk[k] = ukk;
      scale_div(rk, ukk, k + 1, n);
      for (std::int64_t i = k + 1; i < k1; ++i) axpy_minus(A + i * n, rk, rk[i], i, n);
    }
    const std::int64_t nb = k1 - k0;
    parallel_for(ctx, n - k1, [&](std::int64_t t) {
      const std::int64_t i = k1 + t;
      double* ri = A + i * n;
      double c[kBlock];
      for (std::int64_t q = 0; q < nb; ++q) c[q] = A[(k0 + q) * n + i];
      for (std::int64_t j0 = i; j0 < n; j0 += kTile) {
        const std::int64_t j1 = std::min(j0 + kTile, n);
        for (std::int64_t q = 0; q < nb; ++q) axpy_minus(ri, A + (k0 + q) * n, c[q], j0, j1);
      }
    });
  }
  for (std::int64_t i = 1; i < n; ++i) std::fill(A + i * n, A + i * n + i, 0.0);
  return true;
}

void solve_lower(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m, bool identity) {
  // Uᵀ Y = B by columns of B: y_k = b_k / u_kk, then b_i -= u_ki y_k for
  // i > k, in increasing k. With `identity` (B = I) the rows above a task's
  // first column are zeros whose updates change nothing, so they are skipped.
  const std::int64_t tasks = (m + kCols - 1) / kCols;
  parallel_for(ctx, tasks, [&](std::int64_t t) {
    const std::int64_t c0 = t * kCols, c1 = std::min(c0 + kCols, m);
    const std::int64_t start = identity ? std::min(c0, n) : 0;
    for (std::int64_t k0 = start; k0 < n; k0 += kBlock) {
      const std::int64_t k1 = std::min(k0 + kBlock, n);
      for (std::int64_t k = k0; k < k1; ++k) {
        double* bk = B + k * m;
        scale_div(bk, U[k * n + k], c0, c1);
        for (std::int64_t i = k + 1; i < k1; ++i) axpy_minus(B + i * m, bk, U[k * n + i], c0, c1);
      }
      for (std::int64_t i = k1; i < n; ++i) {
        double* bi = B + i * m;
        for (std::int64_t q = k0; q < k1; ++q) axpy_minus(bi, B + q * m, U[q * n + i], c0, c1);
      }
    }
  });
}

void solve_upper(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m) {
  // U X = Y by columns of B: x_k = y_k / u_kk, then y_i -= u_ik x_k for
  // i < k, in decreasing k.
  const std::int64_t tasks = (m + kCols - 1) / kCols;
  parallel_for(ctx, tasks, [&](std::int64_t t) {
    const std::int64_t c0 = t * kCols, c1 = std::min(c0 + kCols, m);
    for (std::int64_t k1 = n; k1 > 0;) {
      const std::int64_t k0 = std::max<std::int64_t>(k1 - kBlock, 0);
      for (std::int64_t k = k1 - 1; k >= k0; --k) {
        double* bk = B + k * m;
        scale_div(bk, U[k * n + k], c0, c1);
        for (std::int64_t i = k0; i < k; ++i) axpy_minus(B + i * m, bk, U[i * n + k], c0, c1);
      }
      for (std::int64_t i = 0; i < k0; ++i) {
        double* bi = B + i * m;
        for (std::int64_t q = k1 - 1; q >= k0; --q) axpy_minus(bi, B + q * m, U[i * n + q], c0, c1);
      }
      k1 = k0;
    }
  });
}

}  // namespace tl::gp::host
