// Exact fixed-point accumulation on the CPU backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/fixed_point.hpp"

namespace {

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

struct Data {
  std::vector<double> values;  // rows x nv
  std::vector<std::int32_t> bins;
  std::int64_t rows, nv, n_bins;
};

Data make_data(std::int64_t rows, std::int64_t nv, std::int64_t n_bins, std::uint64_t seed) {
  Data d{std::vector<double>(static_cast<std::size_t>(rows * nv)), std::vector<std::int32_t>(static_cast<std::size_t>(rows)),
         rows, nv, n_bins};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  for (auto& v : d.values) v = nd(rng) * (rng() % 5 == 0 ? 1e3 : 1e-2);
  for (auto& b : d.bins) b = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(n_bins));
  return d;
}

template <class T>
std::vector<std::int64_t> hist(const tl::Context& ctx, const std::vector<T>& values, const std::vector<std::int32_t>& bins,
                               std::int64_t nv, std::int64_t n_bins, tl::FixedScale s) {
  const std::int64_t rows = static_cast<std::int64_t>(bins.size());
  std::vector<std::int64_t> out(static_cast<std::size_t>(n_bins * nv));
  tl::fixed_histogram<T>(ctx, tl::MatrixView<const T>(values.data(), rows, nv),
                         tl::VectorView<const std::int32_t>(bins.data(), rows), n_bins, s, out.data());
  return out;
}

}  // namespace

TEST(FixedPoint, ScaleIsTheLargestSafeExponent) {
  for (double m : {1e-300, 1e-5, 0.75, 1.0, 3.0, 1e6, 1e300}) {
    for (std::int64_t n : {1, 2, 1000, 1 << 20, 1000000007}) {
      const tl::FixedScale s = tl::fixed_point_scale(m, n);
      const int L = tl::fixed_value_bits(n);
      EXPECT_LT(std::ldexp(m, s.exponent), std::ldexp(1.0, L)) << m << " " << n;
      EXPECT_GE(std::ldexp(m, s.exponent + 1), std::ldexp(1.0, L)) << m << " " << n;
    }
  }
  EXPECT_EQ(tl::fixed_count_bits(1), 0);
  EXPECT_EQ(tl::fixed_count_bits(2), 1);
  EXPECT_EQ(tl::fixed_count_bits(1000), 10);
  EXPECT_EQ(tl::fixed_count_bits(1024), 10);
  EXPECT_EQ(tl::fixed_count_bits(1025), 11);
  EXPECT_THROW(tl::fixed_point_scale(std::numeric_limits<double>::infinity(), 5), tl::ValueError);
  EXPECT_THROW(tl::fixed_point_scale(-1.0, 5), tl::ValueError);
}

TEST(FixedPoint, QuantizeRoundsHalfToEven) {
  const tl::FixedScale s{3};  // steps of 1/8
  EXPECT_EQ(tl::fixed_quantize(2.5 / 8, s), 2);
  EXPECT_EQ(tl::fixed_quantize(3.5 / 8, s), 4);
  EXPECT_EQ(tl::fixed_quantize(-2.5 / 8, s), -2);
  EXPECT_EQ(tl::fixed_quantize(0.3, s), 2);
  EXPECT_EQ(tl::fixed_dequantize(tl::fixed_quantize(1.625, s), s), 1.625);
  const tl::FixedScale big{1100};  // beyond a single power of two's range
  EXPECT_EQ(tl::fixed_quantize(std::ldexp(1.0, -1070), big), std::int64_t(1) << 30);
  EXPECT_EQ(tl::fixed_dequantize(std::int64_t(1) << 30, big), std::ldexp(1.0, -1070));
}

TEST(FixedPoint, HistogramMatchesReference) {
  auto d = make_data(10007, 2, 17, 1);
  const tl::FixedScale s = tl::fixed_point_scale_for<double>(cpu(2), tl::MatrixView<const double>(d.values.data(), d.rows, d.nv));
  auto h = hist<double>(cpu(3), d.values, d.bins, d.nv, d.n_bins, s);
  std::vector<std::int64_t> ref(static_cast<std::size_t>(d.n_bins * d.nv), 0);
  std::vector<long double> exact(ref.size(), 0);
  for (std::int64_t i = 0; i < d.rows; ++i)
    for (std::int64_t v = 0; v < d.nv; ++v) {
      ref[d.bins[i] * d.nv + v] += std::llrint(std::ldexp(d.values[i * d.nv + v], s.exponent));
      exact[d.bins[i] * d.nv + v] += d.values[i * d.nv + v];
    }
  for (std::size_t k = 0; k < ref.size(); ++k) {
    EXPECT_EQ(h[k], ref[k]) << k;
    // The fixed-point sum is within n half-steps of the exact sum.
    EXPECT_NEAR(tl::fixed_dequantize(h[k], s), static_cast<double>(exact[k]), d.rows * std::ldexp(0.5, -s.exponent));
  }
}

TEST(FixedPoint, HistogramDoesNotDependOnOrderOrThreads) {
  auto d = make_data(50000, 3, 33, 2);
  const tl::FixedScale s = tl::fixed_point_scale(5e3, d.rows);
  auto ref = hist<double>(cpu(1), d.values, d.bins, d.nv, d.n_bins, s);
  for (int t : {2, 5, 16}) EXPECT_EQ(hist<double>(cpu(t), d.values, d.bins, d.nv, d.n_bins, s), ref) << t;
  // Rows in reverse order.
  std::vector<double> rv(d.values.size());
  std::vector<std::int32_t> rb(d.bins.size());
  for (std::int64_t i = 0; i < d.rows; ++i) {
    rb[d.rows - 1 - i] = d.bins[i];
    for (std::int64_t v = 0; v < d.nv; ++v) rv[(d.rows - 1 - i) * d.nv + v] = d.values[i * d.nv + v];
  }
  EXPECT_EQ(hist<double>(cpu(3), rv, rb, d.nv, d.n_bins, s), ref);
}

// Separating arm for rule 2: summing the same float values in two orders
// (what unordered float atomics do) gives different bits on this fixture;
// the fixed-point sums of the same values in the same two orders do not.
TEST(FixedPoint, FloatSumsDependOnOrderFixedPointSumsDoNot) {
  const std::int64_t n = 20000;
  std::vector<float> x(static_cast<std::size_t>(n));
  std::mt19937_64 rng(3);
  std::normal_distribution<float> nd;
  for (auto& v : x) v = nd(rng) * (rng() % 7 == 0 ? 100.0f : 0.01f);
  float fwd = 0.0f, bwd = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) fwd += x[i];
  for (std::int64_t i = n - 1; i >= 0; --i) bwd += x[i];
  EXPECT_FALSE(tltest::same_bits(fwd, bwd)) << "fixture cannot separate float summation orders";

  std::vector<std::int32_t> one_bin(static_cast<std::size_t>(n), 0);
  std::vector<float> xr(x.rbegin(), x.rend());
  const tl::FixedScale s = tl::fixed_point_scale_for<float>(cpu(1), tl::MatrixView<const float>(x.data(), n, 1));
  auto a = hist<float>(cpu(1), x, one_bin, 1, 1, s);
  auto b = hist<float>(cpu(4), xr, one_bin, 1, 1, s);
  EXPECT_EQ(a, b);
  EXPECT_NEAR(tl::fixed_dequantize(a[0], s), fwd, 1e-2);
}

TEST(FixedPoint, BoundIsCheckedAndSufficient) {
  const std::int64_t n = 1000;
  const int L = tl::fixed_value_bits(n);  // 52
  std::vector<std::int32_t> bins(static_cast<std::size_t>(n), 0);
  // Values just below the bound: the sum of n of them is exact and in range.
  const double m = std::ldexp(1.0, L) - 1.0;
  std::vector<double> big(static_cast<std::size_t>(n), m);
  auto h = hist<double>(cpu(2), big, bins, 1, 1, tl::FixedScale{0});
  EXPECT_EQ(h[0], static_cast<std::int64_t>(m) * n);
  std::vector<double> neg(static_cast<std::size_t>(n), -m);
  EXPECT_EQ(hist<double>(cpu(2), neg, bins, 1, 1, tl::FixedScale{0})[0], -static_cast<std::int64_t>(m) * n);
  // One value at the bound, or a scale one step too fine, is refused.
  big[n / 2] = std::ldexp(1.0, L);
  EXPECT_THROW(hist<double>(cpu(2), big, bins, 1, 1, tl::FixedScale{0}), tl::ValueError);
  std::vector<double> ones(static_cast<std::size_t>(n), 1.0);
  const tl::FixedScale s = tl::fixed_point_scale(1.0, n);
  EXPECT_NO_THROW(hist<double>(cpu(2), ones, bins, 1, 1, s));
  EXPECT_THROW(hist<double>(cpu(2), ones, bins, 1, 1, tl::FixedScale{s.exponent + 1}), tl::ValueError);
  // Non-finite values and bad bins.
  ones[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(hist<double>(cpu(2), ones, bins, 1, 1, tl::FixedScale{0}), tl::ValueError);
  ones[3] = 1.0;
  bins[7] = 1;
  EXPECT_THROW(hist<double>(cpu(2), ones, bins, 1, 1, tl::FixedScale{0}), tl::ValueError);
  bins[7] = -1;
  EXPECT_THROW(hist<double>(cpu(2), ones, bins, 1, 1, tl::FixedScale{0}), tl::ValueError);
}
