#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"
#include "twinlearn/linear_model/linear_decision.hpp"

namespace {

using Vec = std::vector<double>;

// A = Bᵀ B for a random n x m B (rank min(n, m)) plus shift * I.
Vec spd(std::int64_t n, std::int64_t m, double shift, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  Vec B(static_cast<std::size_t>(m * n));
  for (auto& v : B) v = nd(rng);
  Vec A(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t r = 0; r < m; ++r) s += B[r * n + i] * B[r * n + j];
      A[i * n + j] = s + (i == j ? shift : 0.0);
    }
  return A;
}

Vec matvec(const Vec& A, const Vec& x) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  Vec y(x.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) y[i] += A[i * n + j] * x[j];
  return y;
}

}  // namespace

TEST(DenseSolve, CholeskySolvesSpdSystem) {
  const std::int64_t n = 37;
  Vec A = spd(n, 60, 0.0, 1), U = A;
  Vec x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::cos(1.0 + i);
  Vec b = matvec(A, x);
  ASSERT_TRUE(tl::linalg::cholesky_upper(U.data(), n));
  tl::linalg::cholesky_solve(U.data(), n, b.data());
  for (std::int64_t i = 0; i < n; ++i) EXPECT_NEAR(b[i], x[i], 1e-10);
  // Semi-definite: a pivot fails.
  Vec S = spd(n, 10, 0.0, 2);
  S[(n - 1) * n + n - 1] = -1.0;
  EXPECT_FALSE(tl::linalg::cholesky_upper(S.data(), n));
}

// The solve's documented order, spelled out: forward substitution by
// columns, then x_k = (b_k - u_k,n-1 x_n-1 - ... - u_k,k+1 x_k+1) / u_kk, the
// later columns first. Increasing j (the row's dot product read left to
// right) gives other bits on this system.
TEST(DenseSolve, CholeskySolveIsTheDocumentedOrder) {
  const std::int64_t n = 41;
  Vec U = spd(n, 50, 0.0, 3);
  ASSERT_TRUE(tl::linalg::cholesky_upper(U.data(), n));
  Vec b(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) b[i] = std::sin(0.5 + 3.0 * i);
  Vec y = b;
  for (std::int64_t k = 0; k < n; ++k) {
    y[k] = y[k] / U[k * n + k];
    for (std::int64_t i = k + 1; i < n; ++i) y[i] = y[i] - U[k * n + i] * y[k];
  }
  Vec want(static_cast<std::size_t>(n)), rowwise(static_cast<std::size_t>(n));
  for (std::int64_t k = n - 1; k >= 0; --k) {
    double s = y[k], r = y[k];
    for (std::int64_t j = n - 1; j > k; --j) s = s - U[k * n + j] * want[j];
    for (std::int64_t j = k + 1; j < n; ++j) r = r - U[k * n + j] * rowwise[j];
    want[k] = s / U[k * n + k];
    rowwise[k] = r / U[k * n + k];
  }
  tl::linalg::cholesky_solve(U.data(), n, b.data());
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(tltest::same_bits(b[i], want[i])) << i;
    differ += !tltest::same_bits(rowwise[i], want[i]);
  }
  EXPECT_GT(differ, 0);
}

// The factor's documented arithmetic, entry by entry (left-looking):
// u_ij = (a_ij - u_0i u_0j - u_1i u_1j - ... - u_(i-1)i u_(i-1)j) / u_ii in
// that order, u_ii = sqrt of its diagonal so reduced. cholesky_upper works in
// blocks of rows; its bits must be these for every size around the block
// (a block's updates applied in another order, or summed first, differ).
Vec cholesky_reference(const Vec& A, std::int64_t n) {
  Vec U(A.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    double dii = A[i * n + i];
    for (std::int64_t k = 0; k < i; ++k) dii = dii - U[k * n + i] * U[k * n + i];
    const double uii = std::sqrt(dii);
    U[i * n + i] = uii;
    for (std::int64_t j = i + 1; j < n; ++j) {
      double s = A[i * n + j];
      for (std::int64_t k = 0; k < i; ++k) s = s - U[k * n + i] * U[k * n + j];
      U[i * n + j] = s / uii;
    }
  }
  return U;
}

TEST(DenseSolve, BlockedCholeskyHasTheEntrywiseBits) {
  for (std::int64_t n : {1, 2, 7, 8, 9, 16, 17, 63, 100, 257}) {
    const Vec A = spd(n, n + 5, 0.25, 40 + static_cast<std::uint64_t>(n));
    Vec U = A;
    ASSERT_TRUE(tl::linalg::cholesky_upper(U.data(), n));
    const Vec R = cholesky_reference(A, n);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i; j < n; ++j)
        ASSERT_TRUE(tltest::same_bits(U[i * n + j], R[i * n + j]))
            << "n=" << n << " (" << i << ", " << j << "): " << U[i * n + j] << " vs " << R[i * n + j];
  }
}

TEST(DenseSolve, ConditionEstimateIsClose) {
  // diag(1, ..., 1e-8): ‖A⁻¹‖₁ = 1e8 exactly.
  const std::int64_t n = 9;
  Vec A(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) A[i * n + i] = std::pow(10.0, -double(i));
  Vec U = A;
  ASSERT_TRUE(tl::linalg::cholesky_upper(U.data(), n));
  const double est = tl::linalg::inverse_norm1_estimate(n, [&](double* x) { tl::linalg::cholesky_solve(U.data(), n, x); });
  EXPECT_NEAR(est, 1e8, 1e-2);
  EXPECT_DOUBLE_EQ(tl::linalg::norm1(A.data(), n), 1.0);
}

TEST(DenseSolve, SymmetricNormReadsTheUpperTriangleOnly) {
  for (std::int64_t n : {1, 2, 5, 33}) {
    Vec A = spd(n, n + 3, 0.0, 90 + static_cast<std::uint64_t>(n));
    for (std::int64_t i = 0; i < n; ++i) A[i * n + (n - 1 - i)] *= 1e9;  // one large entry a row
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < i; ++j) A[i * n + j] = A[j * n + i];
    Vec upper = A;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < i; ++j) upper[i * n + j] = NAN;  // never read
    const double full = tl::linalg::norm1(A.data(), n);
    EXPECT_TRUE(tltest::same_bits(tl::linalg::norm1_symmetric_upper(upper.data(), n), full)) << "n=" << n;
  }
}

TEST(DenseSolve, EigenDecompositionReconstructs) {
  for (std::int64_t n : {1, 2, 5, 40}) {
    Vec A = spd(n, n / 2 + 1, 0.5, 7 + n);
    A[0] = -3.0;  // indefinite
    Vec lam(static_cast<std::size_t>(n)), V(static_cast<std::size_t>(n * n));
    tl::linalg::symmetric_eigh(A.data(), n, lam.data(), V.data());
    for (std::int64_t i = 1; i < n; ++i) EXPECT_LE(lam[i - 1], lam[i]);
    double scale = 0;
    for (double v : A) scale = std::max(scale, std::fabs(v));
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double r = 0, o = 0;
        for (std::int64_t k = 0; k < n; ++k) {
          r += V[i * n + k] * lam[k] * V[j * n + k];
          o += V[k * n + i] * V[k * n + j];
        }
        EXPECT_NEAR(r, A[i * n + j], 1e-12 * scale * n);
        EXPECT_NEAR(o, i == j ? 1.0 : 0.0, 1e-13 * n);
      }
    }
  }
  Vec bad = {1.0, NAN, NAN, 1.0}, lam(2);
  EXPECT_THROW(tl::linalg::symmetric_eigh(bad.data(), 2, lam.data(), nullptr), tl::ValueError);
}

TEST(DenseSolve, NnlsSatisfiesKkt) {
  const std::int64_t n = 12;
  Vec A = spd(n, 30, 0.0, 3);
  Vec b(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) b[i] = std::sin(2.0 * i) * 10.0;
  Vec x(static_cast<std::size_t>(n));
  tl::linalg::nnls_gram(A.data(), b.data(), n, 0, x.data());
  Vec g = matvec(A, x);  // gradient of ½xᵀAx - bᵀx is Ax - b
  bool some_zero = false, some_pos = false;
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_GE(x[i], 0.0);
    if (x[i] > 0) {
      some_pos = true;
      EXPECT_NEAR(g[i] - b[i], 0.0, 1e-9);
    } else {
      some_zero = true;
      EXPECT_GE(g[i] - b[i], -1e-9);
    }
  }
  EXPECT_TRUE(some_zero && some_pos);
}

// Augmented Gram [XᵀX Xᵀy; yᵀX yᵀy] for X with a duplicated column: the
// eigen path gives the minimum-norm solution (the duplicate splits the weight).
TEST(DenseSolve, RankDeficientGivesMinimumNorm) {
  const std::int64_t n = 200, d = 3;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> nd;
  Vec X(static_cast<std::size_t>(n * d)), y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    X[i * d] = nd(rng);
    X[i * d + 1] = nd(rng);
    X[i * d + 2] = X[i * d];
    y[i] = 2.0 * X[i * d] - X[i * d + 1];
  }
  const std::int64_t D = d + 1;
  Vec G(static_cast<std::size_t>(D * D), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < D; ++j)
      for (std::int64_t k = 0; k < D; ++k)
        G[j * D + k] += (j < d ? X[i * d + j] : y[i]) * (k < d ? X[i * d + k] : y[i]);
  Vec coef(3);
  double alpha = 0.0;
  tl::NormalEquationsOptions opt;
  opt.tol = 1e-6;
  auto info = tl::solve_normal_equations(G.data(), d, 1, &alpha, opt, coef.data());
  EXPECT_EQ(info.rank, 2);
  EXPECT_FALSE(info.cholesky);
  EXPECT_NEAR(coef[0], 1.0, 1e-10);
  EXPECT_NEAR(coef[1], -1.0, 1e-10);
  EXPECT_NEAR(coef[2], 1.0, 1e-10);
  // A penalty makes the system definite: Cholesky, and still symmetric in the duplicates.
  alpha = 1.0;
  info = tl::solve_normal_equations(G.data(), d, 1, &alpha, opt, coef.data());
  EXPECT_TRUE(info.cholesky);
  EXPECT_NEAR(coef[0], coef[2], 1e-12);
  // Singular with no information at all: zeros, not NaN.
  Vec Z(static_cast<std::size_t>(D * D), 0.0);
  alpha = 0.0;
  info = tl::solve_normal_equations(Z.data(), d, 1, &alpha, opt, coef.data());
  EXPECT_EQ(info.rank, 0);
  for (double c : coef) EXPECT_EQ(c, 0.0);
}

// Each output of the decision function is one fma chain from +0.0, then the
// intercept: bitwise against the chain written out, and different from the
// multiply-then-add spelling on this fixture (separating arm).
TEST(LinearDecision, IsTheCanonicalChain) {
  const std::int64_t n = 300, d = 57, t = 2;
  std::mt19937_64 rng(9);
  std::normal_distribution<float> nd;
  std::vector<float> X(static_cast<std::size_t>(n * d)), coef(static_cast<std::size_t>(t * d)), icpt = {0.5f, -2.f};
  for (auto& v : X) v = nd(rng) * 100.0f;
  for (auto& v : coef) v = nd(rng);
  std::vector<float> out(static_cast<std::size_t>(n * t));
  tl::Context ctx(tl::Device{}, 3, tl::NumericMode::Identical, 0);
  tl::linear_decision<float>(ctx, tl::MatrixView<const float>(X.data(), n, d), coef.data(), icpt.data(), t,
                             tl::MatrixView<float>(out.data(), n, t));
  bool differs = false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < t; ++c) {
      float acc = 0.0f, plain = 0.0f;
      for (std::int64_t j = 0; j < d; ++j) {
        acc = std::fma(X[i * d + j], coef[c * d + j], acc);
        plain = plain + X[i * d + j] * coef[c * d + j];
      }
      ASSERT_TRUE(tltest::same_bits(out[i * t + c], acc + icpt[c]));
      differs |= !tltest::same_bits(plain + icpt[c], acc + icpt[c]);
    }
  EXPECT_TRUE(differs);
  X[5] = NAN;
  EXPECT_EQ(tl::linear_decision<float>(ctx, tl::MatrixView<const float>(X.data(), n, d), coef.data(), icpt.data(), t,
                                       tl::MatrixView<float>(out.data(), n, t)),
            1);
}
