// Cholesky factorisation, triangular solves and the 1-norm condition
// estimate (fixed order, IEEE operations only; see dense_solve.hpp).
#include <cmath>
#include <vector>

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"

namespace tl::linalg {

bool cholesky_upper(double* A, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) {
    double* rk = A + k * n;
    const double akk = rk[k];
    if (!(akk > 0.0) || num::is_inf(akk)) return false;
    const double ukk = num::sqrt(akk);
    rk[k] = ukk;
    for (std::int64_t j = k + 1; j < n; ++j) rk[j] = rk[j] / ukk;
    // Trailing update, row by row: A[i][j] -= U[k][i] * U[k][j] for j >= i.
    // Each entry receives its updates in increasing k; the inner loop is an
    // axpy over independent entries.
    for (std::int64_t i = k + 1; i < n; ++i) {
      const double uki = rk[i];
      double* ri = A + i * n;
      for (std::int64_t j = i; j < n; ++j) ri[j] = ri[j] - uki * rk[j];
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
  double best = 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (std::int64_t i = 0; i < n; ++i) s = s + std::fabs(A[i * n + j]);
    if (s > best || num::is_nan(s)) best = s;
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
