// tl::gp's fixed-order host Cholesky and solves: the bits of
// tl::linalg::cholesky_upper, independent of the thread count, and solves
// that invert the factored matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/gaussian_process/cholesky.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"

namespace {

// A = G Gᵀ / d + 0.1 I, n x n: symmetric positive definite with entries of
// every sign (rows of G with a wide range of scales).
std::vector<double> spd(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  const std::int64_t d = n + 3;
  std::vector<double> G(static_cast<std::size_t>(n * d)), A(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double s = (i % 5 == 0) ? 30.0 : 1.0;
    for (std::int64_t k = 0; k < d; ++k) G[i * d + k] = s * nd(rng);
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (std::int64_t k = 0; k < d; ++k) s += G[i * d + k] * G[j * d + k];
      A[i * n + j] = s / static_cast<double>(d) + (i == j ? 0.1 : 0.0);
    }
  return A;
}

std::vector<double> rhs(std::int64_t n, std::int64_t m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<double> B(static_cast<std::size_t>(n * m));
  for (auto& b : B) b = nd(rng);
  return B;
}

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST(GpCholesky, SameBitsAsTheLinearSolversFactor) {
  for (std::int64_t n : {1, 7, 32, 33, 100, 150}) {
    auto A = spd(n, 10 + n);
    auto ref = A;
    ASSERT_TRUE(tl::linalg::cholesky_upper(ref.data(), n));
    for (std::int64_t i = 1; i < n; ++i)
      for (std::int64_t j = 0; j < i; ++j) ref[i * n + j] = 0.0;
    for (int threads : {1, 3}) {
      auto U = A;
      ASSERT_TRUE(tl::gp::cholesky(cpu(threads), U.data(), n));
      EXPECT_TRUE(same(U, ref)) << "n=" << n << " threads=" << threads;
    }
  }
}

TEST(GpCholesky, RefusesANonPositiveDefiniteMatrix) {
  std::vector<double> A = {1.0, 2.0, 2.0, 1.0};  // eigenvalues 3 and -1
  EXPECT_FALSE(tl::gp::cholesky(cpu(1), A.data(), 2));
  std::vector<double> N = {std::nan(""), 0.0, 0.0, 1.0};
  EXPECT_FALSE(tl::gp::cholesky(cpu(1), N.data(), 2));
}

TEST(GpCholesky, SolvesInvertTheMatrixWhateverTheThreads) {
  const std::int64_t n = 90, m = 70;
  auto A = spd(n, 3);
  auto U = A;
  ASSERT_TRUE(tl::gp::cholesky(cpu(1), U.data(), n));
  const auto B0 = rhs(n, m, 4);
  std::vector<double> X1 = B0, X3 = B0;
  tl::gp::cho_solve(cpu(1), U.data(), n, X1.data(), m);
  tl::gp::cho_solve(cpu(3), U.data(), n, X3.data(), m);
  EXPECT_TRUE(same(X1, X3));
  double worst = 0.0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      double s = 0.0;
      for (std::int64_t k = 0; k < n; ++k) s += A[i * n + k] * X1[k * m + j];
      worst = std::max(worst, std::fabs(s - B0[i * m + j]));
    }
  EXPECT_LT(worst, 1e-8);
  // Forward substitution alone: Uᵀ (U⁻ᵀ B) = B.
  std::vector<double> Y = B0;
  tl::gp::solve_lower(cpu(2), U.data(), n, Y.data(), m);
  worst = 0.0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      double s = 0.0;
      for (std::int64_t k = 0; k <= i; ++k) s += U[k * n + i] * Y[k * m + j];
      worst = std::max(worst, std::fabs(s - B0[i * m + j]));
    }
  EXPECT_LT(worst, 1e-9);
}

TEST(GpCholesky, InverseSkipsOnlyZeroUpdates) {
  // cho_inverse skips the rows above each column block of the identity; the
  // result must be the bits of cho_solve on the full identity.
  const std::int64_t n = 150;
  auto U = spd(n, 8);
  ASSERT_TRUE(tl::gp::cholesky(cpu(1), U.data(), n));
  std::vector<double> I(static_cast<std::size_t>(n * n), 0.0), inv(I.size());
  for (std::int64_t i = 0; i < n; ++i) I[i * n + i] = 1.0;
  tl::gp::cho_solve(cpu(1), U.data(), n, I.data(), n);
  tl::gp::cho_inverse(cpu(3), U.data(), n, inv.data());
  EXPECT_TRUE(same(I, inv));
}

TEST(GpCholeskyCuda, FastModeMatchesTheHostFactor) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t n = 120, m = 5;
  auto A = spd(n, 21);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Fast, 0);
  auto Uh = A, Ud = A;
  ASSERT_TRUE(tl::gp::cholesky(cpu(2), Uh.data(), n));
  ASSERT_TRUE(tl::gp::cholesky(gpu, Ud.data(), n));
  for (std::int64_t i = 0; i < n * n; ++i) EXPECT_NEAR(Uh[i], Ud[i], 1e-9 * (1.0 + std::fabs(Uh[i])));
  auto B = rhs(n, m, 22), Bh = B, Bd = B;
  tl::gp::cho_solve(cpu(1), Uh.data(), n, Bh.data(), m);
  tl::gp::cho_solve(gpu, Ud.data(), n, Bd.data(), m);
  for (std::int64_t i = 0; i < n * m; ++i) EXPECT_NEAR(Bh[i], Bd[i], 1e-8 * (1.0 + std::fabs(Bh[i])));
  std::vector<double> invh(n * n), invd(n * n);
  tl::gp::cho_inverse(cpu(1), Uh.data(), n, invh.data());
  tl::gp::cho_inverse(gpu, Ud.data(), n, invd.data());
  for (std::int64_t i = 0; i < n * n; ++i) EXPECT_NEAR(invh[i], invd[i], 1e-8 * (1.0 + std::fabs(invh[i])));
  std::vector<double> bad = {1.0, 2.0, 2.0, 1.0};
  EXPECT_FALSE(tl::gp::cholesky(gpu, bad.data(), 2));
  // Deterministic and identical mode on a GPU factor on the host: the CPU's bits.
  tl::Context gid(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  auto Ui = A;
  ASSERT_TRUE(tl::gp::cholesky(gid, Ui.data(), n));
  EXPECT_TRUE(same(Ui, Uh));
}
