// tl::linalg::matmul and prepare_rows on the CPU backend: the documented
// order bit for bit, for every transposition and thread count, with
// separating arms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/linalg/matmul.hpp"

namespace {

tl::Context cpu(int threads, tl::NumericMode mode = tl::NumericMode::Identical) {
  return tl::Context(tl::Device{}, threads, mode, 0);
}

template <class T>
std::vector<T> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, double shift = 0.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<T> v(static_cast<std::size_t>(rows * cols));
  for (auto& x : v) x = static_cast<T>(shift + nd(rng) * (rng() % 6 == 0 ? 64.0 : 1.0));
  return v;
}

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!tltest::same_bits(a[i], b[i])) return false;
  return true;
}

// The documented chain for C = op(A) op(B): acc = fma(opA[i, p], opB[p, j], acc), p ascending.
template <class T>
std::vector<T> reference(const std::vector<T>& A, bool ta, const std::vector<T>& B, bool tb, std::int64_t m,
                         std::int64_t n, std::int64_t k) {
  std::vector<T> C(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      T acc = T(0);
      for (std::int64_t p = 0; p < k; ++p) {
        const T a = ta ? A[p * m + i] : A[i * k + p];
        const T b = tb ? B[j * k + p] : B[p * n + j];
        acc = std::fma(a, b, acc);
      }
      C[i * n + j] = acc;
    }
  return C;
}

template <class T>
std::vector<T> run(const tl::Context& ctx, const std::vector<T>& A, bool ta, const std::vector<T>& B, bool tb,
                   std::int64_t m, std::int64_t n, std::int64_t k) {
  std::vector<T> C(static_cast<std::size_t>(m * n), T(-7));
  const auto mode =
      tl::linalg::matmul<T>(ctx, tl::MatrixView<const T>(A.data(), ta ? k : m, ta ? m : k), ta,
                            tl::MatrixView<const T>(B.data(), tb ? n : k, tb ? k : n), tb,
                            tl::MatrixView<T>(C.data(), m, n));
  EXPECT_EQ(mode, tl::NumericMode::Identical);
  return C;
}

template <class T>
void check_matmul(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      auto A = random_matrix<T>(m, k, 1 + m + 3 * k), B = random_matrix<T>(k, n, 2 + n);
      EXPECT_TRUE(same(run<T>(cpu(3), A, ta, B, tb, m, n, k), reference<T>(A, ta, B, tb, m, n, k)))
          << m << "x" << n << "x" << k << " ta=" << ta << " tb=" << tb;
    }
}

}  // namespace

TEST(LinalgMatmul, FollowsTheDocumentedChainForEveryTransposition) {
  for (std::int64_t m : {1, 7, 33, 70})
    for (std::int64_t n : {1, 7, 33, 70})
      for (std::int64_t k : {1, 7, 65, 300}) {
        check_matmul<float>(m, n, k);
        check_matmul<double>(m, n, k);
      }
}

TEST(LinalgMatmul, ThreadCountDoesNotChangeBits) {
  auto A = random_matrix<float>(500, 130, 5), B = random_matrix<float>(500, 90, 6);
  // C = Aᵀ B: 130 x 90 over k = 500.
  const auto one = run<float>(cpu(1), A, true, B, false, 130, 90, 500);
  for (int t : {2, 3, 8}) EXPECT_TRUE(same(one, run<float>(cpu(t), A, true, B, false, 130, 90, 500))) << t;
}

TEST(LinalgMatmul, FastModeOnTheCpuIsCanonical) {
  auto A = random_matrix<double>(40, 30, 7), B = random_matrix<double>(40, 20, 8);
  EXPECT_TRUE(same(run<double>(cpu(2, tl::NumericMode::Fast), A, true, B, false, 30, 20, 40),
                   reference<double>(A, true, B, false, 30, 20, 40)));
}

TEST(LinalgMatmul, RejectsMismatchedShapes) {
  std::vector<double> A(12), B(12), C(16);
  EXPECT_THROW(tl::linalg::matmul<double>(cpu(1), tl::MatrixView<const double>(A.data(), 3, 4), true,
                                          tl::MatrixView<const double>(B.data(), 4, 3), false,
                                          tl::MatrixView<double>(C.data(), 4, 3)),
               tl::ValueError);
  EXPECT_THROW(tl::linalg::matmul<double>(cpu(1), tl::MatrixView<const double>(A.data(), 3, 4), true,
                                          tl::MatrixView<const double>(B.data(), 3, 4), false,
                                          tl::MatrixView<double>(C.data(), 4, 3)),
               tl::ValueError);
}

TEST(LinalgPrepareRows, SpelledOutAndTransposed) {
  const std::int64_t n = 77, d = 45;
  auto X = random_matrix<float>(n, d, 11, 3.0);
  auto off = random_matrix<float>(1, d, 12);
  std::vector<float> w(n);
  for (std::int64_t i = 0; i < n; ++i) w[i] = 0.25f + static_cast<float>(i % 7);
  std::vector<float> Z(n * d), Zt(n * d);
  tl::linalg::prepare_rows<float>(cpu(3), tl::MatrixView<const float>(X.data(), n, d),
                                  tl::VectorView<const float>(w.data(), n), off.data(), false,
                                  tl::MatrixView<float>(Z.data(), n, d));
  tl::linalg::prepare_rows<float>(cpu(2), tl::MatrixView<const float>(X.data(), n, d),
                                  tl::VectorView<const float>(w.data(), n), off.data(), true,
                                  tl::MatrixView<float>(Zt.data(), d, n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) {
      const float want = (X[i * d + j] - off[j]) * std::sqrt(w[i]);
      ASSERT_TRUE(tltest::same_bits(Z[i * d + j], want)) << i << "," << j;
      ASSERT_TRUE(tltest::same_bits(Zt[j * n + i], want)) << i << "," << j;
    }
}

