// CPU versus CUDA identity of tl::linalg::matmul and prepare_rows, and
// the fast mode's cuBLAS path. Compiled into both test binaries; skips (or
// fails under TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/linalg/matmul.hpp"

namespace {

tl::Context cpu_ctx() { return tl::Context(tl::Device{}, 4, tl::NumericMode::Identical, 0); }
tl::Context gpu_ctx(tl::NumericMode mode = tl::NumericMode::Identical) {
  return tl::Context(tl::parse_device("cuda:0"), 0, mode, 0);
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
std::int64_t count_differing(const std::vector<T>& a, const std::vector<T>& b) {
  std::int64_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += !tltest::same_bits(a[i], b[i]);
  return d;
}

template <class T>
std::vector<T> run(const tl::Context& ctx, const std::vector<T>& A, bool ta, const std::vector<T>& B, bool tb,
                   std::int64_t m, std::int64_t n, std::int64_t k, tl::NumericMode* mode = nullptr) {
  std::vector<T> C(static_cast<std::size_t>(m * n), T(-7));
  const auto got = tl::linalg::matmul<T>(ctx, tl::MatrixView<const T>(A.data(), ta ? k : m, ta ? m : k), ta,
                                         tl::MatrixView<const T>(B.data(), tb ? n : k, tb ? k : n), tb,
                                         tl::MatrixView<T>(C.data(), m, n));
  if (mode) *mode = got;
  return C;
}

template <class T>
void check_matmul(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      auto A = random_matrix<T>(m, k, 3 * m + k), B = random_matrix<T>(k, n, 5 * n + k);
      tl::NumericMode mode;
      const auto g = run<T>(gpu_ctx(), A, ta, B, tb, m, n, k, &mode);
      EXPECT_EQ(mode, tl::NumericMode::Identical);
      EXPECT_EQ(count_differing(run<T>(cpu_ctx(), A, ta, B, tb, m, n, k), g), 0)
          << m << "x" << n << "x" << k << " ta=" << ta << " tb=" << tb;
    }
}

}  // namespace

TEST(LinalgCuda, MatmulIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t m : {1, 33, 129, 700})
    for (std::int64_t n : {1, 33, 129, 300})
      for (std::int64_t k : {1, 31, 1000}) {
        check_matmul<float>(m, n, k);
        check_matmul<double>(m, n, k);
      }
}

TEST(LinalgCuda, PrepareRowsIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t n : {1, 31, 1000})
    for (std::int64_t d : {1, 33, 100}) {
      auto X = random_matrix<float>(n, d, 7 + n + d, 3.0);
      auto off = random_matrix<float>(1, d, 8);
      std::vector<float> w(n);
      for (std::int64_t i = 0; i < n; ++i) w[i] = 0.3f + static_cast<float>(i % 9);
      for (bool t : {false, true}) {
        std::vector<float> a(n * d), b(n * d);
        const auto xv = tl::MatrixView<const float>(X.data(), n, d);
        const auto wv = tl::VectorView<const float>(w.data(), n);
        tl::linalg::prepare_rows<float>(cpu_ctx(), xv, wv, off.data(), t,
                                        tl::MatrixView<float>(a.data(), t ? d : n, t ? n : d));
        tl::linalg::prepare_rows<float>(gpu_ctx(), xv, wv, off.data(), t,
                                        tl::MatrixView<float>(b.data(), t ? d : n, t ? n : d));
        EXPECT_EQ(count_differing(a, b), 0) << n << "x" << d << " t=" << t;
      }
    }
}

TEST(LinalgCuda, FastModeUsesCublas) {
  TL_REQUIRE_GPU_OR_SKIP();
  // cuBLAS sums k in its own order: accurate, reported as Fast, and (on this
  // long-k fixture) not the canonical chain's bits.
  const std::int64_t m = 200, n = 150, k = 4000;
  auto A = random_matrix<float>(k, m, 61), B = random_matrix<float>(n, k, 62);
  tl::NumericMode mode;
  const auto fast = run<float>(gpu_ctx(tl::NumericMode::Fast), A, true, B, true, m, n, k, &mode);
  EXPECT_EQ(mode, tl::NumericMode::Fast);
  const auto canon = run<float>(cpu_ctx(), A, true, B, true, m, n, k);
  EXPECT_GT(count_differing(fast, canon), 0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double exact = 0, mag = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(A[p * m + i]) * B[j * k + p];
        exact += t;
        mag += std::fabs(t);
      }
      ASSERT_LE(std::fabs(fast[i * n + j] - exact), 1e-5 * mag) << i << "," << j;
    }
}
