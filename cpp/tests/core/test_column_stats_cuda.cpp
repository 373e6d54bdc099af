// CPU versus CUDA identity of the canonical column statistics. Compiled into
// both test binaries; skips (or fails under TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/reduce.hpp"

namespace {

template <class T>
std::vector<tl::ColStat> run(const tl::Context& ctx, const std::vector<T>& x, std::int64_t rows, std::int64_t cols,
                             const std::vector<T>* w) {
  std::vector<tl::ColStat> out(static_cast<std::size_t>(cols));
  tl::VectorView<const T> wv;
  if (w) wv = tl::VectorView<const T>(w->data(), rows);
  tl::column_stats<T>(ctx, tl::MatrixView<const T>(x.data(), rows, cols), wv, out.data());
  return out;
}

template <class T>
void check_identical(std::int64_t rows, std::int64_t cols, bool weighted) {
  auto base = tltest::hostile_column(rows * cols, 3 + rows);
  std::vector<T> x(base.begin(), base.end());
  const T nan = std::numeric_limits<T>::quiet_NaN();
  if (rows > 5) {
    x[5 * cols % x.size()] = nan;
    x[1] = T(-0.0);
    x[2 % x.size()] = std::numeric_limits<T>::denorm_min();
  }
  std::vector<T> w(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) w[i] = T(0.5 + (i % 7) * 0.25);
  tl::Context cpu(tl::Device{}, 3, tl::NumericMode::Identical, 0);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  auto a = run<T>(cpu, x, rows, cols, weighted ? &w : nullptr);
  auto b = run<T>(gpu, x, rows, cols, weighted ? &w : nullptr);
  for (std::int64_t j = 0; j < cols; ++j) {
    EXPECT_TRUE(tltest::same_bits(a[j].mean, b[j].mean)) << "rows=" << rows << " col=" << j;
    EXPECT_TRUE(tltest::same_bits(a[j].m2, b[j].m2)) << "rows=" << rows << " col=" << j;
    EXPECT_TRUE(tltest::same_bits(a[j].w, b[j].w)) << "rows=" << rows << " col=" << j;
    EXPECT_EQ(a[j].n, b[j].n);
  }
}

}  // namespace

TEST(ColumnStatsCuda, IdenticalToCpuAcrossShapes) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t rows : {1, 7, 1023, 1024, 1025, 4097, 100003}) {
    for (std::int64_t cols : {1, 3, 33}) {
      check_identical<double>(rows, cols, false);
      check_identical<float>(rows, cols, true);
    }
  }
}
