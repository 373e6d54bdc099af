#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/lane_reduce.hpp"
#include "twinlearn/preprocessing/normalizer.hpp"

namespace {

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

template <class T>
std::vector<T> normalize(const tl::Context& ctx, const std::vector<T>& x, std::int64_t rows, std::int64_t cols,
                         tl::RowNorm norm) {
  std::vector<T> y(x.size());
  tl::normalizer_apply<T>(ctx, tl::MatrixView<const T>(x.data(), rows, cols), norm,
                          tl::MatrixView<T>(y.data(), rows, cols));
  return y;
}

// The lane order written out by hand: 32 interleaved sequential sums, then
// lanes l and l + off added for off = 16, 8, 4, 2, 1.
double lane_sum_by_hand(const std::vector<double>& v) {
  double lanes[32] = {};
  for (std::size_t j = 0; j < v.size(); ++j) lanes[j % 32] += v[j];
  for (int off = 16; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) lanes[l] += lanes[l + off];
  return lanes[0];
}

}  // namespace

TEST(Normalizer, UnitNormsAndZeroRows) {
  std::vector<double> x = {3, 4, 0, 0, -1, 1};
  auto l2 = normalize(cpu(1), x, 3, 2, tl::RowNorm::L2);
  EXPECT_DOUBLE_EQ(l2[0], 0.6);
  EXPECT_DOUBLE_EQ(l2[1], 0.8);
  EXPECT_EQ(l2[2], 0.0);  // zero row: norm replaced by 1
  EXPECT_EQ(l2[3], 0.0);
  auto l1 = normalize(cpu(1), x, 3, 2, tl::RowNorm::L1);
  EXPECT_DOUBLE_EQ(l1[0], 3.0 / 7.0);
  EXPECT_DOUBLE_EQ(l1[4], -0.5);
  auto mx = normalize(cpu(1), x, 3, 2, tl::RowNorm::Max);
  EXPECT_DOUBLE_EQ(mx[0], 0.75);
  EXPECT_DOUBLE_EQ(mx[1], 1.0);
  EXPECT_THROW(tl::parse_row_norm("l3"), tl::ValueError);
}

// Separating test for the row order: on this fixture the lane order and a
// plain sequential sum give different bits; the kernel's norm must be the
// lane order's.
TEST(Normalizer, NormUsesLaneOrder) {
  const std::int64_t cols = 1000;
  auto v = tltest::hostile_column(cols, 31);
  std::vector<double> abs_v(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) abs_v[j] = std::fabs(v[j]);
  const double lane = lane_sum_by_hand(abs_v);
  double seq = 0;
  for (double a : abs_v) seq += a;
  ASSERT_FALSE(tltest::same_bits(lane, seq)) << "fixture cannot separate the lane order from the sequential one";
  const double ref = tl::lane_reduce(
      cols, 0.0, [&](std::int64_t j) { return abs_v[j]; }, tl::lane_ops::Add{});
  EXPECT_TRUE(tltest::same_bits(ref, lane));
  auto y = normalize(cpu(2), v, 1, cols, tl::RowNorm::L1);
  for (std::int64_t j = 0; j < cols; ++j) EXPECT_TRUE(tltest::same_bits(y[j], v[j] / lane)) << j;
}

TEST(Normalizer, BitsDoNotDependOnThreadCount) {
  const std::int64_t rows = 3001, cols = 77;
  auto base = tltest::hostile_column(rows * cols, 41);
  std::vector<float> x(base.begin(), base.end());
  for (auto norm : {tl::RowNorm::L1, tl::RowNorm::L2, tl::RowNorm::Max}) {
    auto ref = normalize(cpu(1), x, rows, cols, norm);
    for (int t : {2, 7}) {
      auto y = normalize(cpu(t), x, rows, cols, norm);
      for (std::size_t i = 0; i < y.size(); ++i) ASSERT_TRUE(tltest::same_bits(ref[i], y[i])) << i;
    }
  }
}

TEST(NormalizerCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {5, 3}, {1000, 31}, {1000, 32}, {333, 33}, {97, 1000}, {20000, 9}}) {
    auto base = tltest::hostile_column(rows * cols, 50 + cols);
    std::vector<double> x(base.begin(), base.end());
    for (std::int64_t j = 0; j < cols; ++j) x[j] = 0.0;  // a zero row
    std::vector<float> xf(x.begin(), x.end());
    for (auto norm : {tl::RowNorm::L1, tl::RowNorm::L2, tl::RowNorm::Max}) {
      auto a = normalize(cpu(3), x, rows, cols, norm), b = normalize(gpu, x, rows, cols, norm);
      auto af = normalize(cpu(3), xf, rows, cols, norm), bf = normalize(gpu, xf, rows, cols, norm);
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_TRUE(tltest::same_bits(a[i], b[i])) << rows << "x" << cols << " norm " << int(norm) << " at " << i;
        ASSERT_TRUE(tltest::same_bits(af[i], bf[i])) << rows << "x" << cols << " norm " << int(norm) << " at " << i;
      }
    }
  }
}
