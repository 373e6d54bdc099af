// Cholesky factorisation, triangular solves and the 1-norm condition
// estimate (fixed order, IEEE operations only; see dense_solve.hpp).
#include <cmath>
#include <vector>

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"

namespace tl::linalg {

bool cholesky_upper(double* A, std::int64_t n) {
  // Entry (i, j), j >= i, receives A[i][j] - U[k][i] * U[k][j] for k = 0, 1,
  // ..., i - 1 in increasing k, then row i is divided by U[i][i] = sqrt of
  // its diagonal. The steps go in blocks of kBlock rows: the block's rows are
  // factored one after another (each updating the block's later rows only),
  // then every row below the block takes the block's kBlock updates at once,
  // still in increasing k, so each entry sees the same operations in the
  // same order as step by step, while the block's rows stay in cache.
  constexpr std::int64_t kBlock = 8;
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
        for (std::int64_t j = i; j < n; ++j) {
          double s = ri[j];
          for (std::int64_t q = 0; q < kBlock; ++q) s = s - c[q] * r[q][j];
          ri[j] = s;
        }
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

void cholesky_solve(const double* U, std::int64_t n, double* b) {
  // Uᵀ y = b, column-oriented: y_k is final once the rows above are applied.
  for (std::int64_t k = 0; k < n; ++k) {
    const double yk = b[k] / U[k * n + k];
    b[k] = yk;
    const double* rk = U + k * n;
    for (std::int64_t i = k + 1; i < n; ++i) b[i] = b[i] - rk[i] * yk;
  }
  // U x = y, row-oriented: a sequential dot product in increasing j.
  for (std::int64_t i = n - 1; i >= 0; --i) {
    const double* ri = U + i * n;
    double s = b[i];
    for (std::int64_t j = i + 1; j < n; ++j) s = s - ri[j] * b[j];
    b[i] = s / ri[i];
  }
}

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
