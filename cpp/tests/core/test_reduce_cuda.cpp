// CPU versus CUDA identity of the canonical reductions. Compiled into both
// test binaries; skips (or fails under TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/reduce.hpp"

namespace {

tl::Context cpu_ctx() { return tl::Context(tl::Device{}, 3, tl::NumericMode::Identical, 0); }
tl::Context gpu_ctx() { return tl::Context(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0); }

template <class T>
std::vector<T> fixture(std::int64_t n, std::uint64_t seed, bool specials) {
  auto b = tltest::hostile_column(n, seed);
  std::vector<T> x(b.begin(), b.end());
  if (specials && n > 10) {
    x[1] = T(-0.0);
    x[2] = std::numeric_limits<T>::denorm_min();
    x[n / 2] = -std::numeric_limits<T>::denorm_min();
  }
  return x;
}

template <class T>
void check_vectors(std::int64_t n) {
  auto x = fixture<T>(n, 31 + n, true), y = fixture<T>(n, 57 + n, false);
  tl::VectorView<const T> xv(x.data(), n), yv(y.data(), n);
  auto c = cpu_ctx(), g = gpu_ctx();
  EXPECT_TRUE(tltest::same_bits(tl::reduce_sum<T>(c, xv), tl::reduce_sum<T>(g, xv))) << "sum n=" << n;
  EXPECT_TRUE(tltest::same_bits(tl::reduce_sum_double<T>(c, xv), tl::reduce_sum_double<T>(g, xv))) << "sumd n=" << n;
  EXPECT_TRUE(tltest::same_bits(tl::reduce_dot<T>(c, xv, yv), tl::reduce_dot<T>(g, xv, yv))) << "dot n=" << n;
  EXPECT_TRUE(tltest::same_bits(tl::reduce_dot_double<T>(c, xv, yv), tl::reduce_dot_double<T>(g, xv, yv)))
      << "dotd n=" << n;
  if (n == 0) return;
  EXPECT_TRUE(tltest::same_bits(tl::reduce_min<T>(c, xv), tl::reduce_min<T>(g, xv))) << "min n=" << n;
  EXPECT_TRUE(tltest::same_bits(tl::reduce_max<T>(c, xv), tl::reduce_max<T>(g, xv))) << "max n=" << n;
  EXPECT_EQ(tl::reduce_argmin<T>(c, xv), tl::reduce_argmin<T>(g, xv)) << "argmin n=" << n;
  EXPECT_EQ(tl::reduce_argmax<T>(c, xv), tl::reduce_argmax<T>(g, xv)) << "argmax n=" << n;
}

template <class T>
void check_columns(std::int64_t rows, std::int64_t cols) {
  auto x = fixture<T>(rows * cols, 7 * rows + cols, true);
  tl::MatrixView<const T> X(x.data(), rows, cols);
  auto c = cpu_ctx(), g = gpu_ctx();
  std::vector<T> a(cols), b(cols);
  std::vector<double> ad(cols), bd(cols);
  std::vector<std::int64_t> ai(cols), bi(cols);
  tl::column_sums<T>(c, X, a.data());
  tl::column_sums<T>(g, X, b.data());
  for (std::int64_t j = 0; j < cols; ++j) EXPECT_TRUE(tltest::same_bits(a[j], b[j])) << rows << "x" << cols << " j=" << j;
  tl::column_sums_double<T>(c, X, ad.data());
  tl::column_sums_double<T>(g, X, bd.data());
  for (std::int64_t j = 0; j < cols; ++j) EXPECT_TRUE(tltest::same_bits(ad[j], bd[j])) << rows << "x" << cols;
  if (rows == 0) return;
  tl::column_min<T>(c, X, a.data());
  tl::column_min<T>(g, X, b.data());
  for (std::int64_t j = 0; j < cols; ++j) EXPECT_TRUE(tltest::same_bits(a[j], b[j])) << "min " << rows << "x" << cols;
  tl::column_argmax<T>(c, X, ai.data());
  tl::column_argmax<T>(g, X, bi.data());
  for (std::int64_t j = 0; j < cols; ++j) EXPECT_EQ(ai[j], bi[j]) << "argmax " << rows << "x" << cols;
}

}  // namespace

TEST(ReduceCuda, VectorsIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t n : {0, 1, 7, 255, 256, 257, 2047, 2048, 2049, 4096, 100003, 524288 + 3, 2000001}) {
    check_vectors<float>(n);
    check_vectors<double>(n);
  }
}

TEST(ReduceCuda, ColumnsIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t rows : {0, 1, 7, 2048, 2049, 30001}) {
    for (std::int64_t cols : {1, 2, 15, 16, 17, 70}) {
      check_columns<float>(rows, cols);
      check_columns<double>(rows, cols);
    }
  }
}

TEST(ReduceCuda, TiesAndNanRulesOnGpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  auto g = gpu_ctx();
  std::vector<float> x(10000, 5.0f);
  for (std::int64_t i : {9000, 2049, 257, 1, 256}) x[i] = -3.0f;
  tl::VectorView<const float> xv(x.data(), 10000);
  EXPECT_EQ(tl::reduce_argmin<float>(g, xv), 1);
  std::vector<double> z(5000, 1.0);
  z[3000] = -0.0;
  z[257] = 0.0;
  tl::VectorView<const double> zv(z.data(), 5000);
  EXPECT_EQ(tl::reduce_argmin<double>(g, zv), 257);
  EXPECT_FALSE(std::signbit(tl::reduce_min<double>(g, zv)));
  z[4100] = std::numeric_limits<double>::quiet_NaN();
  z[2300] = -std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(tl::reduce_argmax<double>(g, zv), 2300);
  const double s = tl::reduce_sum<double>(g, zv), sc = tl::reduce_sum<double>(cpu_ctx(), zv);
  EXPECT_TRUE(std::isnan(s));
  EXPECT_TRUE(tltest::same_bits(s, sc)) << "NaN results are canonical on both backends";
}

// Strided host input is packed before the copy; the bits stay those of the
// contiguous vector.
TEST(ReduceCuda, StridedHostInput) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t n = 9999;
  auto x = fixture<double>(3 * n, 2, false);
  tl::VectorView<const double> strided(x.data() + 1, n, 3, tl::Device{});
  EXPECT_TRUE(tltest::same_bits(tl::reduce_sum<double>(gpu_ctx(), strided), tl::reduce_sum<double>(cpu_ctx(), strided)));
}
