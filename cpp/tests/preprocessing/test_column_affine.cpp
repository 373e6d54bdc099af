#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/preprocessing/column_affine.hpp"

namespace {
tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }
}  // namespace

TEST(ColumnAffine, StepsInOrderThenClip) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {1, 2, 3, nan, -5, 6};
  std::vector<float> y(6);
  const double sub[2] = {1, 2}, div[2] = {2, 4}, mul[2] = {10, 10}, add[2] = {0.5, -0.5};
  tl::ColumnAffine s;
  s.sub = sub;
  s.div = div;
  s.mul = mul;
  s.add = add;
  s.clip = true;
  s.clip_lo = -20;
  s.clip_hi = 9;
  tl::column_affine_apply<float>(cpu(1), tl::MatrixView<const float>(x.data(), 3, 2), s,
                                 tl::MatrixView<float>(y.data(), 3, 2));
  EXPECT_EQ(y[0], 0.5f);          // (1-1)/2*10+0.5
  EXPECT_EQ(y[1], -0.5f);         // (2-2)/4*10-0.5
  EXPECT_EQ(y[2], 9.0f);          // 10.5 clipped
  EXPECT_TRUE(std::isnan(y[3]));  // NaN kept
  EXPECT_EQ(y[4], -20.0f);        // -29.5 clipped
  EXPECT_EQ(y[5], 9.0f);          // 9.5 clipped
}

// Each step is one rounding to T: for float input the result equals float
// arithmetic step by step, not one double expression rounded once. The
// fixture separates the two spellings.
TEST(ColumnAffine, EachStepRoundsToT) {
  std::uint32_t bits = 3291475726u;  // -703.7352f
  float x0;
  std::memcpy(&x0, &bits, sizeof x0);
  std::vector<float> x = {x0};
  const double mul[1] = {3.0}, add[1] = {0.1};
  tl::ColumnAffine s;
  s.mul = mul;
  s.add = add;
  std::vector<float> y(1);
  tl::column_affine_apply<float>(cpu(1), tl::MatrixView<const float>(x.data(), 1, 1), s,
                                 tl::MatrixView<float>(y.data(), 1, 1));
  const float stepwise =
      static_cast<float>(static_cast<double>(static_cast<float>(static_cast<double>(x0) * 3.0)) + 0.1);
  const float fused_double = static_cast<float>(static_cast<double>(x0) * 3.0 + 0.1);
  EXPECT_TRUE(tltest::same_bits(y[0], stepwise));
  EXPECT_FALSE(tltest::same_bits(stepwise, fused_double)) << "fixture cannot separate per-step rounding";
}

TEST(ColumnAffine, InPlaceAndStrided) {
  std::vector<double> x = {1, 2, 3, 4, 5, 6};
  const double div[1] = {2};
  tl::ColumnAffine s;
  s.div = div;
  // Column 1 of a 3 x 2 matrix, viewed as a strided 3 x 1 matrix, in place.
  tl::MatrixView<double> col(x.data() + 1, 3, 1, 2, 1, tl::Device{});
  tl::column_affine_apply<double>(cpu(2), col.as_const(), s, col);
  EXPECT_EQ(x, (std::vector<double>{1, 1, 3, 2, 5, 3}));
}

// Contiguous rows take a loop built for the call's set of steps; strided
// rows the general per-element one. Every set of steps (32) must give the
// same bits both ways, and the same count of infinities, on data with NaN,
// infinities, -0 and values of wide range, in float and double.
template <class T>
void check_step_sets() {
  const std::int64_t rows = 300, cols = 13;
  std::vector<T> x(static_cast<std::size_t>(rows * cols));
  auto base = tltest::hostile_column(rows * cols, 31);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(base[i] * std::pow(10.0, double(i % 7) - 3));
  x[5] = std::numeric_limits<T>::quiet_NaN();
  x[17] = std::numeric_limits<T>::infinity();
  x[29] = -std::numeric_limits<T>::infinity();
  x[40] = T(-0.0);
  std::vector<double> sub(cols), div(cols), mul(cols), add(cols);
  for (std::int64_t j = 0; j < cols; ++j) {
    sub[j] = 0.3 * j - 1.7;
    div[j] = j == 3 ? 1.0 : 0.9 + 0.37 * j;
    mul[j] = 1.0 / (1.3 + j);
    add[j] = -0.25 * j;
  }
  std::vector<T> wide(static_cast<std::size_t>(rows * cols * 2));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) wide[i * 2 * cols + 2 * j] = x[i * cols + j];
  for (int mask = 0; mask < 32; ++mask) {
    tl::ColumnAffine s;
    s.sub = mask & 1 ? sub.data() : nullptr;
    s.div = mask & 2 ? div.data() : nullptr;
    s.mul = mask & 4 ? mul.data() : nullptr;
    s.add = mask & 8 ? add.data() : nullptr;
    s.clip = (mask & 16) != 0;
    s.clip_lo = -0.5;
    s.clip_hi = 2.0;
    std::vector<T> a(x.size()), b(wide.size());
    const auto ia = tl::column_affine_apply<T>(cpu(2), tl::MatrixView<const T>(x.data(), rows, cols), s,
                                               tl::MatrixView<T>(a.data(), rows, cols));
    const auto ib = tl::column_affine_apply<T>(
        cpu(2), tl::MatrixView<const T>(wide.data(), rows, cols, 2 * cols, 2, tl::Device{}), s,
        tl::MatrixView<T>(b.data(), rows, cols, 2 * cols, 2, tl::Device{}));
    EXPECT_EQ(ia, ib) << "mask " << mask;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        ASSERT_TRUE(tltest::same_bits(a[i * cols + j], b[i * 2 * cols + 2 * j])) << "mask " << mask;
  }
}

TEST(ColumnAffine, EveryStepSetSameOnContiguousAndStridedRows) {
  check_step_sets<float>();
  check_step_sets<double>();
}

TEST(ColumnAffine, RejectsShapeMismatchAndEmptyClip) {
  std::vector<double> x(6), y(4);
  tl::ColumnAffine s;
  EXPECT_THROW(tl::column_affine_apply<double>(cpu(1), tl::MatrixView<const double>(x.data(), 3, 2), s,
                                               tl::MatrixView<double>(y.data(), 2, 2)),
               tl::ValueError);
  s.clip = true;
  s.clip_lo = 1;
  s.clip_hi = 0;
  EXPECT_THROW(tl::column_affine_apply<double>(cpu(1), tl::MatrixView<const double>(x.data(), 3, 2), s,
                                               tl::MatrixView<double>(x.data(), 3, 2)),
               tl::ValueError);
}

// cols = 5 takes the kernel's one-column path; cols = 8 its packs of 16
// bytes (4 floats, 2 doubles).
template <class T>
void expect_affine_identical(std::int64_t cols) {
  const std::int64_t rows = 4099;
  auto base = tltest::hostile_column(rows * cols, 21);
  std::vector<T> x(base.begin(), base.end());
  x[3] = std::numeric_limits<T>::quiet_NaN();
  const double a[8] = {0.1, -3, 1e7, 0, 2, -0.5, 7, 1e-3}, b[8] = {3, 0.7, 1e8, 1, 1e-3, 11, 0.25, 3e5};
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (int variant = 0; variant < 4; ++variant) {
    tl::ColumnAffine s;
    if (variant == 0) {
      s.sub = a;
      s.div = b;
    } else if (variant == 1) {
      s.mul = b;
      s.add = a;
      s.clip = true;
      s.clip_lo = -1;
      s.clip_hi = 2;
    } else if (variant == 2) {
      s.div = b;
      s.clip = true;
      s.clip_lo = -1;
      s.clip_hi = 1;
    } else {
      s.sub = a;
      s.div = b;
      s.mul = a;
      s.add = b;
    }
    std::vector<T> y1(x.size()), y2(x.size()), y3(x);
    tl::column_affine_apply<T>(cpu(3), tl::MatrixView<const T>(x.data(), rows, cols), s,
                               tl::MatrixView<T>(y1.data(), rows, cols));
    tl::column_affine_apply<T>(gpu, tl::MatrixView<const T>(x.data(), rows, cols), s,
                               tl::MatrixView<T>(y2.data(), rows, cols));
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(tltest::same_bits(y1[i], y2[i])) << "cols=" << cols << " variant " << variant << " " << i;
    // In place (one host array as input and output): the same bits.
    tl::column_affine_apply<T>(gpu, tl::MatrixView<const T>(y3.data(), rows, cols), s,
                               tl::MatrixView<T>(y3.data(), rows, cols));
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(tltest::same_bits(y1[i], y3[i])) << "in place, cols=" << cols << " variant " << variant << " " << i;
  }
}

TEST(ColumnAffineCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t cols : {5, 8}) {
    expect_affine_identical<float>(cols);
    expect_affine_identical<double>(cols);
  }
}
