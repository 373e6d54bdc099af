// Infinity counting and the canonical NaN of column_affine_apply.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/preprocessing/column_affine.hpp"

namespace {

template <class T>
std::vector<T> with_specials(std::int64_t rows, std::int64_t cols) {
  auto base = tltest::hostile_column(rows * cols, 5);
  std::vector<T> x(base.begin(), base.end());
  x[7] = std::numeric_limits<T>::infinity();
  x[8] = -std::numeric_limits<T>::infinity();
  // A NaN with a payload: x86 would propagate it, CUDA would not.
  std::uint64_t bits = sizeof(T) == 8 ? 0x7ff8000000000123ULL : 0x7fc00123ULL;
  std::memcpy(&x[9], &bits, sizeof(T));
  return x;
}

}  // namespace

TEST(ColumnAffine, CountsInfinitiesAndCanonicalizesNan) {
  const std::int64_t rows = 300, cols = 3;
  auto x = with_specials<float>(rows, cols);
  std::vector<float> y(x.size());
  const double sub[3] = {1, 2, 3}, div[3] = {2, 4, 8};
  tl::ColumnAffine steps;
  steps.sub = sub;
  steps.div = div;
  tl::Context cpu(tl::Device{}, 3, tl::NumericMode::Identical, 0);
  EXPECT_EQ(tl::column_affine_apply<float>(cpu, tl::MatrixView<const float>(x.data(), rows, cols), steps,
                                           tl::MatrixView<float>(y.data(), rows, cols)),
            2);
  std::uint32_t nan_bits;
  std::memcpy(&nan_bits, &y[9], 4);
  EXPECT_EQ(nan_bits, 0x7fc00000u) << "NaN results must be the canonical quiet NaN";
  EXPECT_EQ(y[0], static_cast<float>((static_cast<double>(x[0]) - 1.0) / 2.0));
}

TEST(ColumnAffineCuda, InfinitiesAndNanIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t rows = 4099, cols = 5;
  auto x = with_specials<double>(rows, cols);
  std::vector<double> a(x.size()), b(x.size());
  const double mean[5] = {0.1, -3, 1e7, 0, 2}, scale[5] = {3, 0.7, 1e8, 1, 1e-3};
  tl::ColumnAffine steps;
  steps.sub = mean;
  steps.div = scale;
  tl::Context cpu(tl::Device{}, 2, tl::NumericMode::Identical, 0);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  const auto na = tl::column_affine_apply<double>(cpu, tl::MatrixView<const double>(x.data(), rows, cols), steps,
                                                  tl::MatrixView<double>(a.data(), rows, cols));
  const auto nb = tl::column_affine_apply<double>(gpu, tl::MatrixView<const double>(x.data(), rows, cols), steps,
                                                  tl::MatrixView<double>(b.data(), rows, cols));
  EXPECT_EQ(na, 2);
  EXPECT_EQ(nb, 2);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(tltest::same_bits(a[i], b[i])) << i;
}
