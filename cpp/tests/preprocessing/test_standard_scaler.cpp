#include <gtest/gtest.h>

#include <vector>

#include "../test_util.hpp"
#include "twinlearn/preprocessing/standard_scaler.hpp"

TEST(StandardScaler, ApplyAndInverse) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> y(6), z(6);
  const double mean[2] = {3, 4}, scale[2] = {2, 0.5};
  tl::Context cpu;
  tl::standard_scaler_apply<float>(cpu, tl::MatrixView<const float>(x.data(), 3, 2), mean, scale,
                                   tl::MatrixView<float>(y.data(), 3, 2), false);
  EXPECT_FLOAT_EQ(y[0], -1.0f);
  EXPECT_FLOAT_EQ(y[1], -4.0f);
  tl::standard_scaler_apply<float>(cpu, tl::MatrixView<const float>(y.data(), 3, 2), mean, scale,
                                   tl::MatrixView<float>(z.data(), 3, 2), true);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(z[i], x[i]);
}

TEST(StandardScaler, RejectsShapeMismatch) {
  std::vector<double> x(6), y(4);
  tl::Context cpu;
  EXPECT_THROW(tl::standard_scaler_apply<double>(cpu, tl::MatrixView<const double>(x.data(), 3, 2), nullptr, nullptr,
                                                 tl::MatrixView<double>(y.data(), 2, 2), false),
               tl::ValueError);
}

TEST(StandardScalerCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t rows = 4099, cols = 5;
  auto base = tltest::hostile_column(rows * cols, 5);
  std::vector<float> x(base.begin(), base.end()), a(x.size()), b(x.size());
  const double mean[5] = {0.1, -3, 1e7, 0, 2}, scale[5] = {3, 0.7, 1e8, 1, 1e-3};
  tl::Context cpu(tl::Device{}, 2, tl::NumericMode::Identical, 0);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (bool inverse : {false, true}) {
    tl::standard_scaler_apply<float>(cpu, tl::MatrixView<const float>(x.data(), rows, cols), mean, scale,
                                     tl::MatrixView<float>(a.data(), rows, cols), inverse);
    tl::standard_scaler_apply<float>(gpu, tl::MatrixView<const float>(x.data(), rows, cols), mean, scale,
                                     tl::MatrixView<float>(b.data(), rows, cols), inverse);
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(tltest::same_bits(a[i], b[i])) << i;
  }
}
