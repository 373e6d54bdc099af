// CPU versus CUDA identity of the canonical GEMM. Compiled into both test
// binaries; skips (or fails under TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/gemm.hpp"

namespace {

tl::Context cpu_ctx() { return tl::Context(tl::Device{}, 4, tl::NumericMode::Identical, 0); }
tl::Context gpu_ctx(tl::NumericMode mode = tl::NumericMode::Identical) {
  return tl::Context(tl::parse_device("cuda:0"), 0, mode, 0);
}

template <class T>
std::vector<T> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<T> v(static_cast<std::size_t>(rows * cols));
  for (auto& x : v) x = static_cast<T>(nd(rng) * (rng() % 6 == 0 ? 64.0 : 1.0));
  return v;
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
std::int64_t count_differing(const std::vector<T>& a, const std::vector<T>& b) {
  std::int64_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += !tltest::same_bits(a[i], b[i]);
  return d;
}

template <class T>
void check(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (bool tb : {false, true}) {
    auto A = random_matrix<T>(m, k, 3 * m + k), B = random_matrix<T>(tb ? n : k, tb ? k : n, 5 * n + k);
    EXPECT_EQ(count_differing(run<T>(cpu_ctx(), A, B, m, n, k, tb), run<T>(gpu_ctx(), A, B, m, n, k, tb)), 0)
        << m << "x" << n << "x" << k << " tb=" << tb;
  }
}

}  // namespace

TEST(GemmCuda, IdenticalToCpuOnOddShapes) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t m : {1, 7, 33, 129, 1000})
    for (std::int64_t n : {1, 7, 33, 129, 1000})
      for (std::int64_t k : {1, 7, 33, 129, 1000}) {
        check<float>(m, n, k);
        if (m * n * k <= 33 * 1000 * 1000) check<double>(m, n, k);
      }
  check<double>(1000, 1000, 1000);
  check<float>(257, 300, 0);
}

TEST(GemmCuda, SpecialValuesIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t m = 45, n = 131, k = 77;
  auto A = random_matrix<float>(m, k, 1), B = random_matrix<float>(k, n, 2);
  A[3] = std::numeric_limits<float>::quiet_NaN();
  A[k + 5] = std::numeric_limits<float>::infinity();
  A[2 * k] = -0.0f;
  B[7] = std::numeric_limits<float>::denorm_min();
  B[n + 1] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(count_differing(run<float>(cpu_ctx(), A, B, m, n, k, false), run<float>(gpu_ctx(), A, B, m, n, k, false)),
            0);
}

// Fast mode (cuBLAS) is accurate but carries no bit promise.
TEST(GemmCuda, FastModeUsesVendorGemmWithinTolerance) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t m = 300, n = 200, k = 500;
  for (bool tb : {false, true}) {
    auto A = random_matrix<double>(m, k, 7), B = random_matrix<double>(tb ? n : k, tb ? k : n, 8);
    auto ref = run<double>(cpu_ctx(), A, B, m, n, k, tb);
    auto fast = run<double>(gpu_ctx(tl::NumericMode::Fast), A, B, m, n, k, tb);
    for (std::size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(fast[i], ref[i], 1e-9 * (1 + std::fabs(ref[i])));
    std::vector<float> Af(A.begin(), A.end()), Bf(B.begin(), B.end());
    auto reff = run<float>(cpu_ctx(), Af, Bf, m, n, k, tb);
    auto fastf = run<float>(gpu_ctx(tl::NumericMode::Fast), Af, Bf, m, n, k, tb);
    // No TF32: errors at float precision (eps 6e-8) relative to sum |a b|,
    // far below what a 10-bit mantissa (5e-4) would give.
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double mag = 0;
        for (std::int64_t p = 0; p < k; ++p) mag += std::fabs(A[i * k + p] * (tb ? B[j * k + p] : B[p * n + j]));
        EXPECT_NEAR(fastf[i * n + j], reff[i * n + j], 1e-5 * mag) << i << "," << j;
      }
  }
}

TEST(GemmCuda, StridedHostOutput) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t m = 37, n = 21, k = 45;
  auto A = random_matrix<double>(m, k, 31), B = random_matrix<double>(n, k, 32);
  auto ref = run<double>(cpu_ctx(), A, B, m, n, k, true);
  std::vector<double> Cw(static_cast<std::size_t>(m * 2 * n), 0.0);
  tl::gemm<double>(gpu_ctx(), tl::MatrixView<const double>(A.data(), m, k), tl::MatrixView<const double>(B.data(), n, k),
                   true, tl::MatrixView<double>(Cw.data(), m, n, 2 * n, 2, tl::Device{}));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) EXPECT_TRUE(tltest::same_bits(Cw[i * 2 * n + 2 * j], ref[i * n + j]));
}
