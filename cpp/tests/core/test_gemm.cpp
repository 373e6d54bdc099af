// The canonical GEMM on the CPU backend: the documented fma chain, bit for
// bit, across odd shapes, layouts and thread counts, with separating arms.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/gemm.hpp"

namespace {

tl::Context cpu(int threads, tl::NumericMode mode = tl::NumericMode::Identical) {
  return tl::Context(tl::Device{}, threads, mode, 0);
}

template <class T>
std::vector<T> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<T> v(static_cast<std::size_t>(rows * cols));
  // Mixed magnitudes so that rounding happens at almost every step.
  for (auto& x : v) x = static_cast<T>(nd(rng) * (rng() % 6 == 0 ? 64.0 : 1.0));
  return v;
}

// The documented chain: acc = +0; acc = fma(a_ip, b_pj, acc) for p ascending.
template <class T>
std::vector<T> reference(const std::vector<T>& A, const std::vector<T>& B, std::int64_t m, std::int64_t n,
                         std::int64_t k, bool tb) {
  std::vector<T> C(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      T acc = T(0);
      for (std::int64_t p = 0; p < k; ++p) acc = std::fma(A[i * k + p], tb ? B[j * k + p] : B[p * n + j], acc);
      C[i * n + j] = acc;
    }
  return C;
}

template <class T>
std::vector<T> run(const tl::Context& ctx, const std::vector<T>& A, const std::vector<T>& B, std::int64_t m,
                   std::int64_t n, std::int64_t k, bool tb) {
  std::vector<T> C(static_cast<std::size_t>(m * n), T(-7));
  tl::gemm<T>(ctx, tl::MatrixView<const T>(A.data(), m, k),
              tl::MatrixView<const T>(B.data(), tb ? n : k, tb ? k : n), tb, tl::MatrixView<T>(C.data(), m, n));
  return C;
}

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!tltest::same_bits(a[i], b[i])) return false;
  return true;
}

template <class T>
void check_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (bool tb : {false, true}) {
    auto A = random_matrix<T>(m, k, 1 + m), B = random_matrix<T>(tb ? n : k, tb ? k : n, 2 + n);
    EXPECT_TRUE(same(run<T>(cpu(3), A, B, m, n, k, tb), reference<T>(A, B, m, n, k, tb)))
        << m << "x" << n << "x" << k << " tb=" << tb;
  }
}

}  // namespace

TEST(Gemm, FollowsTheDocumentedChainOnOddShapes) {
  for (std::int64_t m : {1, 7, 33, 129}) {
    for (std::int64_t n : {1, 7, 33, 129}) {
      for (std::int64_t k : {1, 7, 33, 300}) {
        check_shape<float>(m, n, k);
        check_shape<double>(m, n, k);
      }
    }
  }
  check_shape<float>(100, 300, 1000);
  check_shape<double>(257, 129, 517);
}

TEST(Gemm, AccurateAgainstDoubleReference) {
  const std::int64_t m = 50, n = 40, k = 700;
  auto A = random_matrix<float>(m, k, 5), B = random_matrix<float>(k, n, 6);
  auto C = run<float>(cpu(2), A, B, m, n, k, false);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      long double ref = 0, mag = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        ref += static_cast<long double>(A[i * k + p]) * B[p * n + j];
        mag += std::fabs(static_cast<long double>(A[i * k + p]) * B[p * n + j]);
      }
      EXPECT_NEAR(C[i * n + j], static_cast<double>(ref), 1e-6 * k * static_cast<double>(mag) / k + 1e-6);
    }
}

TEST(Gemm, BitsDoNotDependOnThreadCount) {
  const std::int64_t m = 301, n = 259, k = 513;
  for (bool tb : {false, true}) {
    auto A = random_matrix<float>(m, k, 8), B = random_matrix<float>(tb ? n : k, tb ? k : n, 9);
    auto ref = run<float>(cpu(1), A, B, m, n, k, tb);
    for (int t : {2, 3, 8}) EXPECT_TRUE(same(run<float>(cpu(t), A, B, m, n, k, tb), ref)) << t;
  }
}

// Separating arm for rule 7: on this fixture a different k order (two halves
// of k summed separately, then added) and an unfused multiply-add chain both
// give different bits from the canonical chain, so the identity tests can
// tell the canonical kernel from a tiled split-k or a non-fma one.
TEST(Gemm, FixtureSeparatesOtherKOrders) {
  const std::int64_t m = 33, n = 33, k = 1000;
  auto A = random_matrix<float>(m, k, 21), B = random_matrix<float>(k, n, 22);
  auto C = run<float>(cpu(2), A, B, m, n, k, false);
  std::int64_t split_differs = 0, unfused_differs = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float lo = 0, hi = 0, unfused = 0;
      for (std::int64_t p = 0; p < k / 2; ++p) lo = std::fma(A[i * k + p], B[p * n + j], lo);
      for (std::int64_t p = k / 2; p < k; ++p) hi = std::fma(A[i * k + p], B[p * n + j], hi);
      for (std::int64_t p = 0; p < k; ++p) unfused = unfused + A[i * k + p] * B[p * n + j];
      split_differs += !tltest::same_bits(lo + hi, C[i * n + j]);
      unfused_differs += !tltest::same_bits(unfused, C[i * n + j]);
    }
  EXPECT_GT(split_differs, m * n / 4) << "fixture cannot separate split-k from the canonical chain";
  EXPECT_GT(unfused_differs, m * n / 4) << "fixture cannot separate mul+add from fma";
}

TEST(Gemm, StridedViewsAndEdgeCases) {
  const std::int64_t m = 37, n = 21, k = 45;
  auto A = random_matrix<double>(m, k, 31), B = random_matrix<double>(k, n, 32);
  auto ref = reference<double>(A, B, m, n, k, false);
  // A stored column-major (Fortran order), C written into every other column.
  std::vector<double> Af(static_cast<std::size_t>(m * k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) Af[p * m + i] = A[i * k + p];
  std::vector<double> Cw(static_cast<std::size_t>(m * 2 * n), 0.0);
  tl::gemm<double>(cpu(2), tl::MatrixView<const double>(Af.data(), m, k, 1, m, tl::Device{}),
                   tl::MatrixView<const double>(B.data(), k, n), false,
                   tl::MatrixView<double>(Cw.data(), m, n, 2 * n, 2, tl::Device{}));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) EXPECT_TRUE(tltest::same_bits(Cw[i * 2 * n + 2 * j], ref[i * n + j]));
  // k == 0: C = +0.0.
  std::vector<double> C0(6, 5.0);
  tl::gemm<double>(cpu(1), tl::MatrixView<const double>(nullptr, 2, 0), tl::MatrixView<const double>(nullptr, 0, 3),
                   false, tl::MatrixView<double>(C0.data(), 2, 3));
  for (double v : C0) EXPECT_TRUE(tltest::same_bits(v, 0.0));
  // Shape errors.
  std::vector<double> C1(static_cast<std::size_t>(m * n));
  EXPECT_THROW(tl::gemm<double>(cpu(1), tl::MatrixView<const double>(A.data(), m, k),
                                tl::MatrixView<const double>(B.data(), k, n), true,
                                tl::MatrixView<double>(C1.data(), m, n)),
               tl::ValueError);
  EXPECT_THROW(tl::gemm<double>(cpu(1), tl::MatrixView<const double>(A.data(), m, k),
                                tl::MatrixView<const double>(B.data(), k, n), false,
                                tl::MatrixView<double>(C1.data(), n, m)),
               tl::ValueError);
}

TEST(Gemm, NanResultsAreCanonical) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> A = {1.0f, -nan, 2.0f, 3.0f}, B = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> C(4);
  tl::gemm<float>(cpu(1), tl::MatrixView<const float>(A.data(), 2, 2), tl::MatrixView<const float>(B.data(), 2, 2),
                  false, tl::MatrixView<float>(C.data(), 2, 2));
  EXPECT_TRUE(tltest::same_bits(C[0], std::numeric_limits<float>::quiet_NaN()));
  EXPECT_TRUE(tltest::same_bits(C[1], std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(C[2], 2.0f * 1.0f + 3.0f * 3.0f);
}
