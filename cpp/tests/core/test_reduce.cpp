// Canonical reductions on the CPU backend: the documented order, thread-count
// invariance, tie and NaN rules, and separating arms.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/reduce.hpp"

namespace {

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

template <class T>
tl::VectorView<const T> vv(const std::vector<T>& v) {
  return tl::VectorView<const T>(v.data(), static_cast<std::int64_t>(v.size()));
}

// The order documented in reduce.hpp, written out independently of the
// library: chunks of `chunk`, `lanes` strided lanes summed sequentially from
// -0.0, then the pairwise tree over lanes and over chunks.
template <class Acc, class T>
Acc pairwise(std::vector<Acc> p) {
  while (p.size() > 1) {
    std::vector<Acc> q;
    for (std::size_t i = 0; i + 1 < p.size(); i += 2) q.push_back(p[i] + p[i + 1]);
    if (p.size() % 2) q.push_back(p.back());
    p.swap(q);
  }
  return p.empty() ? Acc(0) : p[0];
}

template <class Acc, class T>
Acc documented_sum(const std::vector<T>& x, std::int64_t chunk = 2048, std::int64_t lanes = 256) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  std::vector<Acc> chunks;
  for (std::int64_t b = 0; b < n; b += chunk) {
    std::vector<Acc> lane(static_cast<std::size_t>(lanes), Acc(-0.0));
    for (std::int64_t k = 0; k < chunk && b + k < n; ++k) lane[k % lanes] = lane[k % lanes] + Acc(x[b + k]);
    chunks.push_back(pairwise<Acc, T>(lane));
  }
  return pairwise<Acc, T>(chunks);
}

template <class T>
std::vector<T> hostile(std::int64_t n, std::uint64_t seed) {
  auto b = tltest::hostile_column(n, seed);
  return std::vector<T>(b.begin(), b.end());
}

}  // namespace

TEST(Reduce, SumFollowsTheDocumentedOrder) {
  for (std::int64_t n : {1, 5, 255, 256, 257, 2047, 2048, 2049, 6000, 100003}) {
    auto xd = hostile<double>(n, 100 + n);
    auto xf = hostile<float>(n, 200 + n);
    EXPECT_TRUE(tltest::same_bits(tl::reduce_sum<double>(cpu(3), vv(xd)), documented_sum<double>(xd))) << n;
    EXPECT_TRUE(tltest::same_bits(tl::reduce_sum<float>(cpu(3), vv(xf)), documented_sum<float>(xf))) << n;
    EXPECT_TRUE(tltest::same_bits(tl::reduce_sum_double<float>(cpu(3), vv(xf)), documented_sum<double>(xf))) << n;
  }
}

TEST(Reduce, SumIsAccurate) {
  std::vector<double> x(50001);
  long double ref = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(0.01 * i) + 2.0;
    ref += x[i];
  }
  EXPECT_NEAR(tl::reduce_sum<double>(cpu(2), vv(x)), static_cast<double>(ref), 1e-9);
  std::vector<float> xf(x.begin(), x.end());
  EXPECT_NEAR(tl::reduce_sum<float>(cpu(2), vv(xf)), static_cast<double>(ref), 1e-5 * static_cast<double>(ref));
}

TEST(Reduce, DotUsesOneFmaPerElement) {
  const std::int64_t n = 9000;
  auto x = hostile<float>(n, 1), y = hostile<float>(n, 2);
  // Documented order with fma lane steps.
  auto doc = [&](auto acc0) {
    using Acc = decltype(acc0);
    std::vector<Acc> chunks;
    for (std::int64_t b = 0; b < n; b += 2048) {
      std::vector<Acc> lane(256, Acc(-0.0));
      for (std::int64_t k = 0; k < 2048 && b + k < n; ++k)
        lane[k % 256] = std::fma(Acc(x[b + k]), Acc(y[b + k]), lane[k % 256]);
      chunks.push_back(pairwise<Acc, float>(lane));
    }
    return pairwise<Acc, float>(chunks);
  };
  EXPECT_TRUE(tltest::same_bits(tl::reduce_dot<float>(cpu(2), vv(x), vv(y)), doc(0.0f)));
  EXPECT_TRUE(tltest::same_bits(tl::reduce_dot_double<float>(cpu(2), vv(x), vv(y)), doc(0.0)));
  EXPECT_THROW(tl::reduce_dot<float>(cpu(1), vv(x), tl::VectorView<const float>(y.data(), n - 1)), tl::ValueError);
}

// Rule 1: the same bits for any thread count.
TEST(Reduce, BitsDoNotDependOnThreadCount) {
  const std::int64_t n = 300007;
  auto x = hostile<double>(n, 5);
  auto xf = hostile<float>(n, 6);
  const double ref = tl::reduce_sum<double>(cpu(1), vv(x));
  const float reff = tl::reduce_sum<float>(cpu(1), vv(xf));
  const float dotf = tl::reduce_dot<float>(cpu(1), vv(xf), vv(xf));
  for (int t : {2, 3, 7, 16}) {
    EXPECT_TRUE(tltest::same_bits(tl::reduce_sum<double>(cpu(t), vv(x)), ref)) << t;
    EXPECT_TRUE(tltest::same_bits(tl::reduce_sum<float>(cpu(t), vv(xf)), reff)) << t;
    EXPECT_TRUE(tltest::same_bits(tl::reduce_dot<float>(cpu(t), vv(xf), vv(xf)), dotf)) << t;
  }
}

// Separating arm for rule 1: on this fixture the sequential order, another
// chunk size and another lane count all give different bits, so the tests
// above (and the CPU-vs-GPU tests) can tell the canonical order from them.
TEST(Reduce, CanonicalOrderDiffersFromOtherOrdersOnFixture) {
  // Values of mixed sign and moderate range: almost every addition rounds.
  const std::int64_t n = 100003;
  std::vector<float> x(static_cast<std::size_t>(n));
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : x) v = u(rng) * (rng() % 8 == 0 ? 1000.0f : 1.0f);
  const float canon = tl::reduce_sum<float>(cpu(4), vv(x));
  float seq = 0.0f;
  for (float v : x) seq += v;
  EXPECT_FALSE(tltest::same_bits(canon, seq)) << "fixture cannot separate sequential from canonical";
  EXPECT_FALSE(tltest::same_bits(canon, documented_sum<float>(x, 1024, 256))) << "chunk size";
  EXPECT_FALSE(tltest::same_bits(canon, documented_sum<float>(x, 2048, 128))) << "lane count";
  EXPECT_TRUE(tltest::same_bits(canon, documented_sum<float>(x, 2048, 256)));
}

TEST(Reduce, StridedInputMatchesContiguous) {
  const std::int64_t n = 5000;
  auto x = hostile<double>(2 * n, 3);
  std::vector<double> even(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) even[i] = x[2 * i];
  tl::VectorView<const double> strided(x.data(), n, 2, tl::Device{});
  EXPECT_TRUE(tltest::same_bits(tl::reduce_sum<double>(cpu(2), strided), tl::reduce_sum<double>(cpu(2), vv(even))));
  EXPECT_EQ(tl::reduce_argmax<double>(cpu(2), strided), tl::reduce_argmax<double>(cpu(2), vv(even)));
}

TEST(Reduce, EmptyAndSignedZeros) {
  std::vector<double> empty;
  const double s = tl::reduce_sum<double>(cpu(1), vv(empty));
  EXPECT_TRUE(tltest::same_bits(s, 0.0));
  EXPECT_THROW(tl::reduce_min<double>(cpu(1), vv(empty)), tl::ValueError);
  EXPECT_THROW(tl::reduce_argmax<double>(cpu(1), vv(empty)), tl::ValueError);
  std::vector<double> negz = {-0.0, -0.0, -0.0};
  EXPECT_TRUE(std::signbit(tl::reduce_sum<double>(cpu(1), vv(negz))));
  std::vector<double> mixed = {-0.0, 0.0};
  EXPECT_FALSE(std::signbit(tl::reduce_sum<double>(cpu(1), vv(mixed))));
}

TEST(Reduce, MinMaxTiesGoToLowestIndex) {
  // Equal minima spread over lanes and chunks: index 1 is the lowest.
  std::vector<float> x(10000, 5.0f);
  for (std::int64_t i : {9000, 2049, 257, 1, 256}) x[i] = -3.0f;
  for (std::int64_t i : {7000, 300, 4}) x[i] = 9.0f;
  for (int t : {1, 4}) {
    EXPECT_EQ(tl::reduce_argmin<float>(cpu(t), vv(x)), 1);
    EXPECT_EQ(tl::reduce_argmax<float>(cpu(t), vv(x)), 4);
    EXPECT_EQ(tl::reduce_min<float>(cpu(t), vv(x)), -3.0f);
    EXPECT_EQ(tl::reduce_max<float>(cpu(t), vv(x)), 9.0f);
  }
  // -0.0 and +0.0 tie: the lower index wins and keeps its sign.
  std::vector<double> z(5000, 1.0);
  z[3000] = -0.0;
  z[257] = 0.0;
  EXPECT_EQ(tl::reduce_argmin<double>(cpu(2), vv(z)), 257);
  EXPECT_FALSE(std::signbit(tl::reduce_min<double>(cpu(2), vv(z))));
  z[100] = -0.0;
  EXPECT_EQ(tl::reduce_argmin<double>(cpu(2), vv(z)), 100);
  EXPECT_TRUE(std::signbit(tl::reduce_min<double>(cpu(2), vv(z))));
}

TEST(Reduce, FirstNanWins) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x(7000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.37 * i);
  x[4100] = nan;
  x[2300] = nan;
  x[6000] = -100.0;
  EXPECT_EQ(tl::reduce_argmin<double>(cpu(3), vv(x)), 2300);
  EXPECT_EQ(tl::reduce_argmax<double>(cpu(3), vv(x)), 2300);
  EXPECT_TRUE(std::isnan(tl::reduce_min<double>(cpu(3), vv(x))));
  EXPECT_TRUE(std::isnan(tl::reduce_max<double>(cpu(3), vv(x))));
  EXPECT_TRUE(std::isnan(tl::reduce_sum<double>(cpu(3), vv(x))));
}

// Separating arm for the tie rule: a merge that keeps the earlier lane on
// ties (instead of the lower index) would return 256 here, not 1.
TEST(Reduce, TieFixtureSeparatesLaneOrderFromIndexOrder) {
  std::vector<double> x(512, 1.0);
  x[256] = 0.0;  // lane 0
  x[1] = 0.0;    // lane 1
  EXPECT_EQ(tl::reduce_argmin<double>(cpu(1), vv(x)), 1);
  // The lane-order rule, spelled out: lane 0 beats lane 1 on a tie.
  std::int64_t lane_rule = -1;
  for (std::int64_t l = 0; l < 256 && lane_rule < 0; ++l)
    for (std::int64_t s = 0; s < 2; ++s)
      if (x[l + 256 * s] == 0.0) {
        lane_rule = l + 256 * s;
        break;
      }
  EXPECT_NE(lane_rule, 1);
}

TEST(Reduce, ColumnsMatchVectors) {
  const std::int64_t rows = 5003, cols = 70;  // two column tiles, the second partial
  auto x = hostile<float>(rows * cols, 9);
  x[17 * cols + 3] = std::numeric_limits<float>::quiet_NaN();
  tl::MatrixView<const float> X(x.data(), rows, cols);
  std::vector<float> s(cols), mn(cols), mx(cols);
  std::vector<double> sd(cols);
  std::vector<std::int64_t> amn(cols), amx(cols);
  tl::column_sums<float>(cpu(3), X, s.data());
  tl::column_sums_double<float>(cpu(3), X, sd.data());
  tl::column_min<float>(cpu(3), X, mn.data());
  tl::column_max<float>(cpu(3), X, mx.data());
  tl::column_argmin<float>(cpu(3), X, amn.data());
  tl::column_argmax<float>(cpu(3), X, amx.data());
  for (std::int64_t j = 0; j < cols; ++j) {
    tl::VectorView<const float> col(x.data() + j, rows, cols, tl::Device{});
    EXPECT_TRUE(tltest::same_bits(s[j], tl::reduce_sum<float>(cpu(1), col))) << j;
    EXPECT_TRUE(tltest::same_bits(sd[j], tl::reduce_sum_double<float>(cpu(1), col))) << j;
    EXPECT_TRUE(tltest::same_bits(mn[j], tl::reduce_min<float>(cpu(1), col))) << j;
    EXPECT_TRUE(tltest::same_bits(mx[j], tl::reduce_max<float>(cpu(1), col))) << j;
    EXPECT_EQ(amn[j], tl::reduce_argmin<float>(cpu(1), col)) << j;
    EXPECT_EQ(amx[j], tl::reduce_argmax<float>(cpu(1), col)) << j;
  }
  EXPECT_EQ(amn[3], 17);
  // Column sums in parallel do not depend on the thread count either.
  std::vector<float> s1(cols);
  tl::column_sums<float>(cpu(1), X, s1.data());
  for (std::int64_t j = 0; j < cols; ++j) EXPECT_TRUE(tltest::same_bits(s[j], s1[j]));
}

TEST(Reduce, EmptyColumns) {
  std::vector<double> out(3, 7.0);
  tl::column_sums<double>(cpu(1), tl::MatrixView<const double>(nullptr, 0, 3), out.data());
  for (double v : out) EXPECT_TRUE(tltest::same_bits(v, 0.0));
  EXPECT_THROW(tl::column_min<double>(cpu(1), tl::MatrixView<const double>(nullptr, 0, 3), out.data()),
               tl::ValueError);
}
