// Normal equations of least squares and ridge from the augmented Gram
// matrix, and non-negative least squares in Gram form (see dense_solve.hpp
// and docs/NUMERICS.md, "Linear solves").
#include <algorithm>
#include <cmath>
#include <vector>

#include "twinlearn/core/error.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"

namespace tl {
namespace {

using Vec = std::vector<double>;

// A Cholesky factor of the equilibrated matrix S A S, S = diag(1/sqrt(A_jj)).
struct SpdFactor {
  std::int64_t n = 0;
  Vec U, s;
  // x <- A⁻¹ x = S (SAS)⁻¹ S x
  void solve(double* x) const {
    for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] * s[i];
    linalg::cholesky_solve(U.data(), n, x);
    for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] * s[i];
  }
};

// Factorises A (n x n) when it is numerically positive definite:
// the scaled condition estimate below cond_limit and, when unscaled_limit > 0,
// the unscaled one below unscaled_limit.
bool spd_factor(const Vec& A, std::int64_t n, double cond_limit, double unscaled_limit, SpdFactor& f) {
  f.n = n;
  f.s.assign(static_cast<std::size_t>(n), 0.0);
  f.U.assign(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = A[i * n + i];
    if (!(a > 0.0) || num::is_inf(a)) return false;
    f.s[i] = 1.0 / num::sqrt(a);
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) f.U[i * n + j] = (f.s[i] * A[i * n + j]) * f.s[j];
  const double scaled_norm = linalg::norm1_symmetric_upper(f.U.data(), n);  // S A S, before factoring
  if (!linalg::cholesky_upper(f.U.data(), n)) return false;
  const double scaled_cond =
      scaled_norm *
      linalg::inverse_norm1_estimate(n, [&](double* x) { linalg::cholesky_solve(f.U.data(), n, x); });
  if (!(scaled_cond < cond_limit)) return false;
  if (unscaled_limit > 0.0) {
    const double cond = linalg::norm1_symmetric_upper(A.data(), n) *
                        linalg::inverse_norm1_estimate(n, [&](double* x) { f.solve(x); });
    if (!(cond < unscaled_limit)) return false;
  }
  return true;
}

// Eigendecomposition of a symmetric matrix, eigenvalues descending.
struct Eigen {
  std::int64_t n = 0;
  Vec lam, V;  // V: n x n, column i the eigenvector of lam[i]
  void compute(const Vec& A, std::int64_t n_) {
    n = n_;
    Vec asc(static_cast<std::size_t>(n)), Va(static_cast<std::size_t>(n * n));
    linalg::symmetric_eigh(A.data(), n, asc.data(), Va.data());
    lam.resize(static_cast<std::size_t>(n));
    V.resize(static_cast<std::size_t>(n * n));
    for (std::int64_t i = 0; i < n; ++i) {
      lam[i] = asc[n - 1 - i];
      for (std::int64_t r = 0; r < n; ++r) V[r * n + i] = Va[r * n + (n - 1 - i)];
    }
  }
  // x = sum over kept i (descending lam) of v_i (v_iᵀ b) / (lam_i + alpha),
  // keeping lam_i > rel * max(lam_0, 0). Returns the number kept.
  std::int64_t solve(const double* b, double alpha, double rel, double* x) const {
    const double top = n > 0 && lam[0] > 0.0 ? lam[0] : 0.0;
    const double thr = rel * top;
    std::fill(x, x + n, 0.0);
    std::int64_t kept = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      if (!(lam[i] > thr) || top == 0.0) continue;
      ++kept;
      double c = 0.0;
      for (std::int64_t r = 0; r < n; ++r) c = c + V[r * n + i] * b[r];
      c = c / (lam[i] + alpha);
      for (std::int64_t r = 0; r < n; ++r) x[r] = x[r] + V[r * n + i] * c;
    }
    return kept;
  }
};

}  // namespace

namespace linalg {

std::int64_t nnls_gram(const double* A, const double* b, std::int64_t n, std::int64_t max_iter, double* x) {
  std::fill(x, x + n, 0.0);
  if (n == 0) return 0;
  if (max_iter <= 0) max_iter = 3 * n;
  double bmax = 0.0, amax = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    bmax = std::max(bmax, std::fabs(b[i]));
    for (std::int64_t j = 0; j < n; ++j) amax = std::max(amax, std::fabs(A[i * n + j]));
  }
  const double eps = 2.220446049250313e-16;
  std::vector<char> passive(static_cast<std::size_t>(n), 0);
  Vec w(static_cast<std::size_t>(n)), z(static_cast<std::size_t>(n));
  auto gradient = [&] {  // w = b - A x, sequential sums in increasing j
    for (std::int64_t i = 0; i < n; ++i) {
      double s = b[i];
      for (std::int64_t j = 0; j < n; ++j) s = s - A[i * n + j] * x[j];
      w[i] = s;
    }
  };
  // z_P = argmin over the passive set (z = 0 elsewhere): Cholesky, or the
  // minimum-norm eigen solution when the passive block is singular.
  auto subproblem = [&] {
    std::vector<std::int64_t> idx;
    for (std::int64_t i = 0; i < n; ++i)
      if (passive[i]) idx.push_back(i);
    const std::int64_t m = static_cast<std::int64_t>(idx.size());
    Vec S(static_cast<std::size_t>(m * m)), rhs(static_cast<std::size_t>(m)), sol(static_cast<std::size_t>(m));
    for (std::int64_t a = 0; a < m; ++a) {
      rhs[a] = b[idx[a]];
      for (std::int64_t c = 0; c < m; ++c) S[a * m + c] = A[idx[a] * n + idx[c]];
    }
    SpdFactor f;
    if (spd_factor(S, m, 1e12, 0.0, f)) {
      sol = rhs;
      f.solve(sol.data());
    } else {
      Eigen e;
      e.compute(S, m);
      e.solve(rhs.data(), 0.0, 64.0 * eps * static_cast<double>(m), sol.data());
    }
    std::fill(z.begin(), z.end(), 0.0);
    for (std::int64_t a = 0; a < m; ++a) z[idx[a]] = sol[a];
  };

  const double tol = 10.0 * eps * static_cast<double>(n) * std::max(bmax, amax);
  std::int64_t iter = 0;
  gradient();
  while (iter < max_iter) {
    std::int64_t jmax = -1;
    for (std::int64_t i = 0; i < n; ++i)
      if (!passive[i] && w[i] > tol && (jmax < 0 || w[i] > w[jmax])) jmax = i;
    if (jmax < 0) break;
    ++iter;
    passive[jmax] = 1;
    for (std::int64_t inner = 0; inner < 3 * n + 3; ++inner) {
      subproblem();
      bool feasible = true;
      for (std::int64_t i = 0; i < n; ++i)
        if (passive[i] && !(z[i] > 0.0)) feasible = false;
      if (feasible) {
        for (std::int64_t i = 0; i < n; ++i) x[i] = z[i];
        break;
      }
      // Step towards z until the first passive coordinate reaches zero.
      double step = 1.0;
      std::int64_t blocking = -1;
      for (std::int64_t i = 0; i < n; ++i) {
        if (passive[i] && !(z[i] > 0.0)) {
          const double a = x[i] / (x[i] - z[i]);
          if (blocking < 0 || a < step) {
            step = a;
            blocking = i;
          }
        }
      }
      for (std::int64_t i = 0; i < n; ++i)
        if (passive[i]) x[i] = x[i] + step * (z[i] - x[i]);
      if (blocking >= 0) x[blocking] = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        if (passive[i] && !(x[i] > 0.0)) {
          passive[i] = 0;
          x[i] = 0.0;
        }
      }
    }
    gradient();
  }
  return iter;
}

}  // namespace linalg

NormalEquationsInfo solve_normal_equations(const double* G, std::int64_t d, std::int64_t t, const double* alpha,
                                           const NormalEquationsOptions& opt, double* coef) {
  using Method = NormalEquationsOptions::Method;
  const std::int64_t D = d + t;
  NormalEquationsInfo info;
  std::fill(coef, coef + t * d, 0.0);
  if (d == 0 || t == 0) return info;
  for (std::int64_t i = 0; i < D * D; ++i)
    TL_REQUIRE(!num::is_nan(G[i]) && !num::is_inf(G[i]), ValueError,
               "the Gram matrix has non-finite entries (the data overflows its dtype)");
  for (std::int64_t c = 0; c < t; ++c)
    TL_REQUIRE(alpha[c] >= 0.0 && !num::is_inf(alpha[c]), ValueError, "alpha must be finite and >= 0");
  const double gram_eps = opt.gram_eps > 0.0 ? opt.gram_eps : 1.4210854715202004e-14;
  const double cond_limit = 0.01 / gram_eps;
  const double tol2 = opt.tol * opt.tol;

  // XᵀX and the right-hand sides (Xᵀy_c as rows).
  Vec xtx(static_cast<std::size_t>(d * d)), rhs(static_cast<std::size_t>(t * d));
  for (std::int64_t i = 0; i < d; ++i) {
    for (std::int64_t j = 0; j < d; ++j) xtx[i * d + j] = G[i * D + j];
    for (std::int64_t c = 0; c < t; ++c) rhs[c * d + i] = G[i * D + d + c];
  }
  std::vector<char> done(static_cast<std::size_t>(t), 0);
  Eigen eig;
  bool have_eig = false;
  auto eigen = [&]() -> const Eigen& {
    if (!have_eig) {
      eig.compute(xtx, d);
      have_eig = true;
    }
    return eig;
  };
  info.rank = 0;

  for (std::int64_t c0 = 0; c0 < t; ++c0) {
    if (done[c0]) continue;
    const double a = alpha[c0];
    std::vector<std::int64_t> group;  // targets sharing this penalty, in order
    for (std::int64_t c = c0; c < t; ++c)
      if (!done[c] && alpha[c] == a) {
        group.push_back(c);
        done[c] = 1;
      }
    if (opt.method == Method::Nnls) {
      Vec A(xtx);
      for (std::int64_t i = 0; i < d; ++i) A[i * d + i] = A[i * d + i] + a;
      for (std::int64_t c : group) {
        const std::int64_t it = linalg::nnls_gram(A.data(), rhs.data() + c * d, d, opt.max_iter, coef + c * d);
        info.n_iter = std::max(info.n_iter, it);
      }
      info.cholesky = false;
      continue;
    }
    if (opt.method == Method::Auto) {
      // Without a penalty, exactly zero columns (constant features once
      // centred) drop out: their coefficient is 0 in the minimum-norm
      // solution, and the rest may still be well conditioned.
      std::vector<std::int64_t> cols;
      for (std::int64_t i = 0; i < d; ++i)
        if (a > 0.0 || xtx[i * d + i] != 0.0) cols.push_back(i);
      const std::int64_t m = static_cast<std::int64_t>(cols.size());
      if (m == 0) {
        info.rank = std::max<std::int64_t>(info.rank, 0);
        continue;
      }
      Vec A(static_cast<std::size_t>(m * m));
      for (std::int64_t p = 0; p < m; ++p)
        for (std::int64_t q = 0; q < m; ++q) A[p * m + q] = xtx[cols[p] * d + cols[q]];
      for (std::int64_t p = 0; p < m; ++p) A[p * m + p] = A[p * m + p] + a;
      SpdFactor f;
      const double unscaled = (a == 0.0 && tol2 > 0.0) ? 0.1 / tol2 : 0.0;
      if (spd_factor(A, m, cond_limit, unscaled, f)) {
        Vec x(static_cast<std::size_t>(m));
        for (std::int64_t c : group) {
          for (std::int64_t p = 0; p < m; ++p) x[p] = rhs[c * d + cols[p]];
          f.solve(x.data());
          for (std::int64_t p = 0; p < m; ++p) coef[c * d + cols[p]] = x[p];
        }
        info.rank = std::max(info.rank, m);
        continue;
      }
    }
    const Eigen& e = eigen();
    const double rel = a == 0.0 ? std::max(tol2, gram_eps) : gram_eps;
    for (std::int64_t c : group) info.rank = std::max(info.rank, e.solve(rhs.data() + c * d, a, rel, coef + c * d));
    info.cholesky = false;
  }
  for (std::int64_t i = 0; i < t * d; ++i) coef[i] = num::canonical(coef[i]);
  return info;
}

}  // namespace tl
