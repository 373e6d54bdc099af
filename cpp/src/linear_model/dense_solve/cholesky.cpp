// Cholesky factorisation, triangular solves and the 1-norm condition
// estimate (fixed order, IEEE operations only; see dense_solve.hpp).
#include <cmath>
#include <vector>

#include "core/cpu/cpu_clones.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"

namespace tl::linalg {

namespace {

constexpr std::int64_t kBlock = 8;

// Row i's entries j in [j0, n) take the kBlock updates of the block whose
// rows start at R (stride n; R[q*n + j] = U[k0+q][j], c[q] = U[k0+q][i]), in
// increasing q. The row and the block never overlap (i is below the block),
// which __restrict__ tells the compiler, so the loop over j runs in vectors;
// built for baseline x86-64, AVX2 and AVX-512 (the same operations in the
// same order: the same bits).
TL_CPU_CLONES_512 void block_update(double* __restrict__ ri, const double* __restrict__ R, const double* c,
                                std::int64_t j0, std::int64_t n) {
  const double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5], c6 = c[6], c7 = c[7];
  for (std::int64_t j = j0; j < n; ++j) {
    double s = ri[j];
    s = s - c0 * R[j];
    s = s - c1 * R[n + j];
    s = s - c2 * R[2 * n + j];
    s = s - c3 * R[3 * n + j];
    s = s - c4 * R[4 * n + j];
    s = s - c5 * R[5 * n + j];
    s = s - c6 * R[6 * n + j];
    s = s - c7 * R[7 * n + j];
    ri[j] = s;
  }
}

}  // namespace

bool cholesky_upper(double* A, std::int64_t n) {
  // Entry (i, j), j >= i, receives A[i][j] - U[k][i] * U[k][j] for k = 0, 1,
  // ..., i - 1 in increasing k, then row i is divided by U[i][i] = sqrt of
  // its diagonal. The steps go in blocks of kBlock rows: the block's rows are
  // factored one after another (each updating the block's later rows only),
  // then every row below the block takes the block's kBlock updates at once,
  // still in increasing k, so each entry sees the same operations in the
  // same order as step by step, while the block's rows stay in cache.
  for (std::int64_t k0 = 0; k0 < n; k0 += kBlock) {
    const std::int64_t k1 = k0 + kBlock < n ? k0 + kBlock : n;
    for (std::int64_t k = k0; k < k1; ++k) {
      double* rk = A + k * n;
      const double akk = rk[k];
      if (!(akk > 0.0) || num::is_inf(akk)) return false;
      const double ukk = num::sqrt(akk);
      rk[k] = ukk;
      for (std::int64_t j = k + 1; j < n; ++j) rk[j] = rk[j] / ukk;
      for (std::int64_t i = k + 1; i < k1; ++i) {
        const double uki = rk[i];
        double* ri = A + i * n;
        for (std::int64_t j = i; j < n; ++j) ri[j] = ri[j] - uki * rk[j];
      }
    }
    const std::int64_t nb = k1 - k0;
    for (std::int64_t i = k1; i < n; ++i) {
      double* ri = A + i * n;
      double c[kBlock];
      const double* r[kBlock];
      for (std::int64_t q = 0; q < nb; ++q) {
        r[q] = A + (k0 + q) * n;
        c[q] = r[q][i];
      }
      if (nb == kBlock) {
        block_update(ri, r[0], c, i, n);
      } else {
        for (std::int64_t j = i; j < n; ++j) {
          double s = ri[j];
          for (std::int64_t q = 0; q < nb; ++q) s = s - c[q] * r[q][j];
          ri[j] = s;
        }
      }
    }
  }
  return true;
}

namespace {

// cholesky_solve with the operands' independence stated (b is not U), so
// that the forward updates run in vectors; built for baseline x86-64 and
// AVX2 (the same bits).
TL_CPU_CLONES void solve_upper(const double* __restrict__ U, std::int64_t n, double* __restrict__ b) {
  // Uᵀ y = b, column-oriented: y_k is final once the rows above are applied.
  for (std::int64_t k = 0; k < n; ++k) {
    const double yk = b[k] / U[k * n + k];
    b[k] = yk;
    const double* rk = U + k * n;
    for (std::int64_t i = k + 1; i < n; ++i) b[i] = b[i] - rk[i] * yk;
  }
  // U x = y: x_k = (y_k - u_k,n-1 x_n-1 - ... - u_k,k+1 x_k+1) / u_kk, the
  // later columns first. Rows go in blocks of kBlock from the bottom: the
  // block's rows first take the columns below the block, side by side (one
  // chain of subtractions per row, kBlock chains interleaved), then the
  // block is solved from its last row up. (A row's dot product alone is one
  // chain of dependent subtractions: n² / 2 of them back to back.)
  for (std::int64_t i1 = n; i1 > 0;) {
    const std::int64_t i0 = i1 > kBlock ? i1 - kBlock : 0, nb = i1 - i0;
    double s[kBlock];
    for (std::int64_t q = 0; q < nb; ++q) s[q] = b[i0 + q];
    if (nb == kBlock) {
      for (std::int64_t j = n - 1; j >= i1; --j) {
        const double xj = b[j];
        for (std::int64_t q = 0; q < kBlock; ++q) s[q] = s[q] - U[(i0 + q) * n + j] * xj;
      }
    } else {
      for (std::int64_t j = n - 1; j >= i1; --j) {
        const double xj = b[j];
        for (std::int64_t q = 0; q < nb; ++q) s[q] = s[q] - U[(i0 + q) * n + j] * xj;
      }
    }
    for (std::int64_t k = i1 - 1; k >= i0; --k) {
      const double* rk = U + k * n;
      double v = s[k - i0];
      for (std::int64_t j = i1 - 1; j > k; --j) v = v - rk[j] * b[j];
      b[k] = v / rk[k];
    }
    i1 = i0;
  }
}

}  // namespace

void cholesky_solve(const double* U, std::int64_t n, double* b) { solve_upper(U, n, b); }

double norm1(const double* A, std::int64_t n) {
  // Column sums in increasing row order, accumulated row by row (contiguous
  // reads; each sum sees the same additions in the same order).
  std::vector<double> col(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    const double* ri = A + i * n;
    for (std::int64_t j = 0; j < n; ++j) col[j] = col[j] + std::fabs(ri[j]);
  }
  double best = 0.0;
  for (std::int64_t j = 0; j < n; ++j)
    if (col[j] > best || num::is_nan(col[j])) best = col[j];
  return best;
}

double norm1_symmetric_upper(const double* A, std::int64_t n) {
  // Column j of the symmetric matrix is A[i][j] for i < j, then row j from
  // the diagonal on: col[j] takes the first part row by row, and at row j
  // the rest, in increasing i as norm1 of the full matrix does.
  std::vector<double> col(static_cast<std::size_t>(n), 0.0);
  double best = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double* ri = A + i * n;
    double s = col[i];
    for (std::int64_t j = i; j < n; ++j) s = s + std::fabs(ri[j]);
    if (s > best || num::is_nan(s)) best = s;
    for (std::int64_t j = i + 1; j < n; ++j) col[j] = col[j] + std::fabs(ri[j]);
  }
  return best;
}

double inverse_norm1_estimate(std::int64_t n, const std::function<void(double*)>& solve) {
  if (n == 0) return 0.0;
  auto norm1v = [n](const std::vector<double>& v) {
    double s = 0.0;
    for (std::int64_t i = 0; i < n; ++i) s = s + std::fabs(v[i]);
    return s;
  };
  std::vector<double> x(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n)), z(static_cast<std::size_t>(n));
  solve(x.data());
  double est = norm1v(x);
  if (n == 1) return est;
  std::int64_t last_j = -1;
  for (int iter = 0; iter < 5; ++iter) {
    for (std::int64_t i = 0; i < n; ++i) z[i] = x[i] >= 0.0 ? 1.0 : -1.0;
    solve(z.data());  // A symmetric: A⁻ᵀ = A⁻¹
    std::int64_t j = 0;
    for (std::int64_t i = 1; i < n; ++i)
      if (std::fabs(z[i]) > std::fabs(z[j])) j = i;
    if (j == last_j) break;
    last_j = j;
    std::fill(x.begin(), x.end(), 0.0);
    x[j] = 1.0;
    solve(x.data());
    const double e = norm1v(x);
    if (!(e > est)) break;
    est = e;
  }
  // Higham's alternative vector guards against the estimate missing a
  // large-norm direction.
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = 1.0 + static_cast<double>(i) / static_cast<double>(n - 1);
    x[i] = (i % 2 == 0) ? v : -v;
  }
  solve(x.data());
  const double alt = 2.0 * norm1v(x) / (3.0 * static_cast<double>(n));
  return alt > est ? alt : est;
}

}  // namespace tl::linalg
