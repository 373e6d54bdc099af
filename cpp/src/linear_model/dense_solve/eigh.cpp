// Symmetric eigendecomposition: Householder tridiagonalisation and the
// implicit QL method, after EISPACK's tred2 / tql2 (as in the public-domain
// JAMA library). Fixed operation order, IEEE operations only; hypot is
// written out so that no libm routine decides a bit.
#include <cmath>
#include <vector>

#include "twinlearn/core/error.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"

namespace tl::linalg {
namespace {

// sqrt(a² + b²) without undue overflow or underflow.
double hypot2(double a, double b) {
  a = std::fabs(a);
  b = std::fabs(b);
  const double m = a > b ? a : b;
  const double s = a > b ? b : a;
  if (m == 0.0) return 0.0;
  const double r = s / m;
  return m * num::sqrt(1.0 + r * r);
}

// V (n x n, row-major) holds A on entry; on exit the orthogonal transform to
// tridiagonal form, d the diagonal and e the subdiagonal (e[0] = 0).
void tred2(std::int64_t n, double* V, double* d, double* e) {
  auto v = [&](std::int64_t i, std::int64_t j) -> double& { return V[i * n + j]; };
  for (std::int64_t j = 0; j < n; ++j) d[j] = v(n - 1, j);
  for (std::int64_t i = n - 1; i > 0; --i) {
    double scale = 0.0, h = 0.0;
    for (std::int64_t k = 0; k < i; ++k) scale = scale + std::fabs(d[k]);
    if (scale == 0.0) {
      e[i] = d[i - 1];
      for (std::int64_t j = 0; j < i; ++j) {
        d[j] = v(i - 1, j);
        v(i, j) = 0.0;
        v(j, i) = 0.0;
      }
    } else {
      for (std::int64_t k = 0; k < i; ++k) {
        d[k] = d[k] / scale;
        h = h + d[k] * d[k];
      }
      double f = d[i - 1];
      double g = num::sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h = h - f * g;
      d[i - 1] = f - g;
      for (std::int64_t j = 0; j < i; ++j) e[j] = 0.0;
      for (std::int64_t j = 0; j < i; ++j) {
        f = d[j];
        v(j, i) = f;
        g = e[j] + v(j, j) * f;
        for (std::int64_t k = j + 1; k <= i - 1; ++k) {
          g = g + v(k, j) * d[k];
          e[k] = e[k] + v(k, j) * f;
        }
        e[j] = g;
      }
      f = 0.0;
      for (std::int64_t j = 0; j < i; ++j) {
        e[j] = e[j] / h;
        f = f + e[j] * d[j];
      }
      const double hh = f / (h + h);
      for (std::int64_t j = 0; j < i; ++j) e[j] = e[j] - hh * d[j];
      for (std::int64_t j = 0; j < i; ++j) {
        f = d[j];
        g = e[j];
        for (std::int64_t k = j; k <= i - 1; ++k) v(k, j) = v(k, j) - (f * e[k] + g * d[k]);
        d[j] = v(i - 1, j);
        v(i, j) = 0.0;
      }
    }
    d[i] = h;
  }
  for (std::int64_t i = 0; i < n - 1; ++i) {
    v(n - 1, i) = v(i, i);
    v(i, i) = 1.0;
    const double h = d[i + 1];
    if (h != 0.0) {
      for (std::int64_t k = 0; k <= i; ++k) d[k] = v(k, i + 1) / h;
      for (std::int64_t j = 0; j <= i; ++j) {
        double g = 0.0;
        for (std::int64_t k = 0; k <= i; ++k) g = g + v(k, i + 1) * v(k, j);
        for (std::int64_t k = 0; k <= i; ++k) v(k, j) = v(k, j) - g * d[k];
      }
    }
    for (std::int64_t k = 0; k <= i; ++k) v(k, i + 1) = 0.0;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    d[j] = v(n - 1, j);
    v(n - 1, j) = 0.0;
  }
  v(n - 1, n - 1) = 1.0;
  e[0] = 0.0;
}

void tql2(std::int64_t n, double* V, double* d, double* e) {
  auto v = [&](std::int64_t i, std::int64_t j) -> double& { return V[i * n + j]; };
  for (std::int64_t i = 1; i < n; ++i) e[i - 1] = e[i];
  e[n - 1] = 0.0;
  double f = 0.0, tst1 = 0.0;
  const double eps = 2.220446049250313e-16;  // 2^-52
  for (std::int64_t l = 0; l < n; ++l) {
    const double t = std::fabs(d[l]) + std::fabs(e[l]);
    if (t > tst1) tst1 = t;
    std::int64_t m = l;
    while (m < n) {
      if (std::fabs(e[m]) <= eps * tst1) break;
      ++m;
    }
    if (m > l) {
      int iter = 0;
      do {
        TL_REQUIRE(++iter <= 100, ValueError, "symmetric eigendecomposition did not converge");
        double g = d[l];
        double p = (d[l + 1] - g) / (2.0 * e[l]);
        double r = hypot2(p, 1.0);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const double dl1 = d[l + 1];
        double h = g - d[l];
        for (std::int64_t i = l + 2; i < n; ++i) d[i] = d[i] - h;
        f = f + h;
        p = d[m];
        double c = 1.0, c2 = 1.0, c3 = 1.0;
        const double el1 = e[l + 1];
        double s = 0.0, s2 = 0.0;
        for (std::int64_t i = m - 1; i >= l; --i) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = hypot2(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          for (std::int64_t k = 0; k < n; ++k) {
            h = v(k, i + 1);
            v(k, i + 1) = s * v(k, i) + c * h;
            v(k, i) = c * v(k, i) - s * h;
          }
        }
        p = -s * s2 * c3 * el1 * e[l] / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (std::fabs(e[l]) > eps * tst1);
    }
    d[l] = d[l] + f;
    e[l] = 0.0;
  }
  // Ascending order (selection sort; ties keep the lower index first).
  for (std::int64_t i = 0; i < n - 1; ++i) {
    std::int64_t k = i;
    double p = d[i];
    for (std::int64_t j = i + 1; j < n; ++j) {
      if (d[j] < p) {
        k = j;
        p = d[j];
      }
    }
    if (k != i) {
      d[k] = d[i];
      d[i] = p;
      for (std::int64_t j = 0; j < n; ++j) {
        const double tmp = v(j, i);
        v(j, i) = v(j, k);
        v(j, k) = tmp;
      }
    }
  }
}

}  // namespace

void symmetric_eigh(const double* A, std::int64_t n, double* lam, double* V) {
  if (n == 0) return;
  for (std::int64_t i = 0; i < n * n; ++i)
    TL_REQUIRE(!num::is_nan(A[i]) && !num::is_inf(A[i]), ValueError,
               "symmetric_eigh: the matrix has non-finite entries");
  std::vector<double> own;
  double* W = V;
  if (!W) {
    own.resize(static_cast<std::size_t>(n * n));
    W = own.data();
  }
  // Symmetrise from the upper triangle, so that only it is read.
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) W[i * n + j] = i <= j ? A[i * n + j] : A[j * n + i];
  std::vector<double> e(static_cast<std::size_t>(n));
  tred2(n, W, lam, e.data());
  tql2(n, W, lam, e.data());
}

}  // namespace tl::linalg
