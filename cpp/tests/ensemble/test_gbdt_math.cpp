// Gradient-boosted trees: shared math (exp/log, fixed-point words), fixed-point
// histograms and borders (quantiles, NaN bin, bin rule).
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

// ---------------------------------------------------------------------------
// Shared math
// ---------------------------------------------------------------------------
TEST(GbdtMath, ExpAndLogWithinTwoUlpOfLibm) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-740.0, 709.0);
  std::int64_t worst_exp = 0, worst_log = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = i < 1000 ? (i - 500) * 1e-3 : u(rng);
    worst_exp = std::max(worst_exp, ulp_distance(tl::gbdt::exp(x), std::exp(x)));
    const double y = std::exp(u(rng) * 0.5);
    worst_log = std::max(worst_log, ulp_distance(tl::gbdt::log(y), std::log(y)));
  }
  EXPECT_LE(worst_exp, 2);
  EXPECT_LE(worst_log, 2);
  EXPECT_EQ(tl::gbdt::exp(0.0), 1.0);
  EXPECT_EQ(tl::gbdt::exp(1000.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(tl::gbdt::exp(-1000.0), 0.0);
  EXPECT_EQ(tl::gbdt::log(1.0), 0.0);
  EXPECT_TRUE(std::isinf(tl::gbdt::log(0.0)) && tl::gbdt::log(0.0) < 0);
  EXPECT_TRUE(std::isnan(tl::gbdt::log(-1.0)));
  EXPECT_NEAR(tl::gbdt::log(5e-324), std::log(5e-324), 1e-12);
}

// Rule 4 (own transcendentals), separating arm: on this fixture the project's
// exp and libm's exp disagree in the last bit somewhere, so a backend that
// used libm (or CUDA's exp) would be caught by the identity tests.
TEST(GbdtMath, OwnExpDiffersFromLibmOnFixture) {
  int differ = 0;
  for (int i = 0; i < 10000; ++i) {
    const double x = -20.0 + i * 0.004;
    differ += tl::gbdt::exp(x) != std::exp(x);
  }
  EXPECT_GT(differ, 0) << "fixture cannot tell the project's exp from libm's";
}

TEST(GbdtMath, QuantExponentBoundsTheFixedPointValues) {
  for (double m : {1e-300, 3e-12, 0.25, 0.2500001, 1.0, 7.5, 1e6, 3e200, 1.7e308}) {
    const int e = tl::gbdt::quant_exponent(m);
    const double scaled = m * std::ldexp(1.0, e);
    EXPECT_LE(scaled, std::ldexp(1.0, tl::gbdt::kQuantBits)) << m;
    if (e < 1022 && e > -1022) {
      EXPECT_GT(scaled, std::ldexp(1.0, tl::gbdt::kQuantBits - 1)) << m;
    }
    EXPECT_LE(std::llabs(tl::gbdt::quantize(-m, std::ldexp(1.0, e))), std::int64_t(1) << tl::gbdt::kQuantBits);
  }
  EXPECT_EQ(tl::gbdt::quant_exponent(0.0), 0);
  EXPECT_EQ(tl::gbdt::quantize(2.5, 1.0), 3);
  EXPECT_EQ(tl::gbdt::quantize(-2.5, 1.0), -3);
  EXPECT_EQ(tl::gbdt::quantize(-2.4, 1.0), -2);
}

// The two-word addition of the CUDA shared-memory histograms (lo += q, then
// hi += high_word_increment(old lo, q)) gives the exact int64 sum, whatever
// the order of the additions, including at the extreme values and through
// many wraps of the low word. Separating arm: the same words without the
// sign extension, or without the carry, miss the sum.
namespace {
struct Words {
  std::uint32_t lo = 0, hi = 0;
  std::int64_t value() const { return static_cast<std::int64_t>((std::uint64_t(hi) << 32) | lo); }
};
enum class Rule { Exact, NoSignExtension, NoCarry };
void add_words(Words& w, std::int32_t q, Rule rule) {
  const std::uint32_t old = w.lo;
  w.lo += static_cast<std::uint32_t>(q);
  std::uint32_t up = tl::gbdt::high_word_increment(old, q);
  if (rule == Rule::NoSignExtension && q < 0) up -= 0xFFFFFFFFu;
  if (rule == Rule::NoCarry) up = q < 0 ? 0xFFFFFFFFu : 0u;
  w.hi += up;
}
}  // namespace

TEST(GbdtMath, TwoWordSumsAreExact) {
  const std::int32_t lim = std::int32_t(1) << tl::gbdt::kQuantBits;
  std::vector<std::int32_t> q = {lim, -lim, lim, lim, lim, lim, -1, 1, 0, -lim, lim - 1, -65537, 65536};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i)
    q.push_back(static_cast<std::int32_t>(static_cast<std::int64_t>(rng() % (2 * static_cast<std::uint64_t>(lim) + 1)) - lim));
  for (int i = 0; i < 5000; ++i) q.push_back(lim);  // a long run of the largest value: lo wraps many times
  std::int64_t exact = 0;
  for (std::int32_t v : q) exact += v;
  for (int order = 0; order < 2; ++order) {
    Words w;
    for (std::size_t i = 0; i < q.size(); ++i) add_words(w, q[order == 0 ? i : q.size() - 1 - i], Rule::Exact);
    EXPECT_EQ(w.value(), exact) << "order " << order;
  }
  Words no_sign, no_carry;
  for (std::int32_t v : q) {
    add_words(no_sign, v, Rule::NoSignExtension);
    add_words(no_carry, v, Rule::NoCarry);
  }
  EXPECT_NE(no_sign.value(), exact);
  EXPECT_NE(no_carry.value(), exact);
}

// ---------------------------------------------------------------------------
// Fixed point versus floating-point histograms (rule 2)
// ---------------------------------------------------------------------------
// Separating test: with RMSE gradients on this fixture, summing a bin's
// gradients in double in row order, in reverse order, or in per-thread
// blocks gives different bits for some bin, so a floating-point histogram
// would make the result depend on the order (threads, atomics); the
// fixed-point sums are the same integers in every order.
TEST(GbdtHistogram, FloatSumsDependOnOrderFixedPointSumsDoNot) {
  const Data D = make_data(60000, 4, GbdtLoss::RMSE, false, 5);
  GbdtModel b = tl::gbdt_borders<float>(cpu(2), tl::MatrixView<const float>(D.X.data(), D.n, D.d), 32,
                                        tl::GbdtNanMode::Min);
  const int nb = b.border_offsets[1] - b.border_offsets[0];
  std::vector<double> g(static_cast<std::size_t>(D.n));
  double mean = 0;
  for (double v : D.y) mean += v / D.n;
  double mx = 0;
  for (std::int64_t i = 0; i < D.n; ++i) {
    g[i] = mean - D.y[i] + 1e-7 * (i % 13);
    mx = std::max(mx, std::fabs(g[i]));
  }
  const double scale = std::ldexp(1.0, tl::gbdt::quant_exponent(mx));
  std::vector<int> bin(static_cast<std::size_t>(D.n));
  for (std::int64_t i = 0; i < D.n; ++i)
    bin[i] = tl::gbdt::bin_of(D.X[i * D.d], b.borders.data(), nb, false);
  int float_differs = 0;
  for (int target = 0; target <= nb; ++target) {
    double fwd = 0, rev = 0, blk[4] = {0, 0, 0, 0};
    std::int64_t qf = 0, qr = 0;
    for (std::int64_t i = 0; i < D.n; ++i)
      if (bin[i] == target) {
        fwd += g[i];
        qf += tl::gbdt::quantize(g[i], scale);
        blk[i * 4 / D.n] += g[i];
      }
    for (std::int64_t i = D.n - 1; i >= 0; --i)
      if (bin[i] == target) {
        rev += g[i];
        qr += tl::gbdt::quantize(g[i], scale);
      }
    const double blocked = (blk[0] + blk[1]) + (blk[2] + blk[3]);
    float_differs += !tltest::same_bits(fwd, rev) || !tltest::same_bits(fwd, blocked);
    EXPECT_EQ(qf, qr);
  }
  EXPECT_GT(float_differs, 0) << "fixture cannot separate floating-point from fixed-point histograms";
}

// ---------------------------------------------------------------------------
// Borders and bins
// ---------------------------------------------------------------------------
TEST(GbdtBorders, FewDistinctValuesGetEveryMidpoint) {
  std::vector<double> X = {3, 1, 2, 2, 1, 3, 3, 10};
  GbdtModel m = tl::gbdt_borders<double>(cpu(1), tl::MatrixView<const double>(X.data(), 8, 1), 128,
                                         tl::GbdtNanMode::Min);
  ASSERT_EQ(m.borders.size(), 3u);
  EXPECT_EQ(m.borders[0], 1.5);
  EXPECT_EQ(m.borders[1], 2.5);
  EXPECT_EQ(m.borders[2], 6.5);
}

TEST(GbdtBorders, QuantilesRespectBorderCountAndTies) {
  std::vector<double> X(10000);
  for (int i = 0; i < 10000; ++i) X[i] = i < 5000 ? 0.0 : i;  // half zeros, then distinct values
  X[17] = -0.0;
  GbdtModel m = tl::gbdt_borders<double>(cpu(2), tl::MatrixView<const double>(X.data(), 10000, 1), 15,
                                         tl::GbdtNanMode::Min);
  ASSERT_GE(m.borders.size(), 7u);
  ASSERT_LE(m.borders.size(), 15u);
  for (std::size_t k = 1; k < m.borders.size(); ++k) EXPECT_LT(m.borders[k - 1], m.borders[k]);
  EXPECT_GT(m.borders[0], 0.0);  // the zero run (with -0) stays in one bin
}

// The sample is sorted by a radix sort on the values' bits (gbdt_cpu_borders.cpp);
// the borders must be those of the plain sorted sample: negative and
// positive values, -0 and +0, subnormals, huge values and many ties.
// Float data are sorted by their float keys, doubles by their double keys:
// both give the plain sort's order (subnormals, ties, -0 beside +0).
template <class T>
void expect_sorted_sample_is_the_plain_sort() {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::int64_t n = 50000;
  const int tiny = std::is_same_v<T, float> ? -140 : -1060, big = std::is_same_v<T, float> ? 100 : 900;
  std::vector<T> X(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = u(gen);
    switch (i % 5) {
      case 0: X[i] = static_cast<T>(v); break;
      case 1: X[i] = static_cast<T>(std::ldexp(v, tiny)); break;  // subnormal
      case 2: X[i] = static_cast<T>(std::ldexp(v, big)); break;
      case 3: X[i] = static_cast<T>(std::round(v * 4.0)); break;  // ties, -0 among them
      default: X[i] = static_cast<T>(static_cast<float>(v)); break;
    }
  }
  X[3] = T(-0.0);
  X[8] = T(0.0);
  for (int count : {5, 128, 254}) {
    GbdtModel m = tl::gbdt_borders<T>(cpu(2), tl::MatrixView<const T>(X.data(), n, 1), count, tl::GbdtNanMode::Min);
    std::vector<double> v(X.size());
    for (std::size_t i = 0; i < X.size(); ++i) v[i] = tl::gbdt::canonical_key(static_cast<double>(X[i]));
    std::sort(v.begin(), v.end());
    std::vector<std::int32_t> bpos;
    for (std::size_t i = 1; i < v.size(); ++i)
      if (v[i - 1] < v[i]) bpos.push_back(static_cast<std::int32_t>(i));
    std::vector<double> ref(static_cast<std::size_t>(count) + 2);
    const int c = tl::gbdt::select_borders(v.data(), static_cast<std::int64_t>(v.size()), bpos.data(),
                                           static_cast<std::int32_t>(bpos.size()), count, ref.data());
    ASSERT_EQ(m.borders.size(), static_cast<std::size_t>(c)) << count;
    for (int k = 0; k < c; ++k) EXPECT_TRUE(tltest::same_bits(m.borders[k], ref[k])) << count << " " << k;
  }
}

TEST(GbdtBorders, SortedSampleIsThePlainSort) {
  expect_sorted_sample_is_the_plain_sort<double>();
  expect_sorted_sample_is_the_plain_sort<float>();
}

TEST(GbdtBorders, NanGetsItsOwnBin) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> X = {1, nan, 2, 3, nan, 4};
  for (auto mode : {tl::GbdtNanMode::Min, tl::GbdtNanMode::Max}) {
    GbdtModel m = tl::gbdt_borders<double>(cpu(1), tl::MatrixView<const double>(X.data(), 6, 1), 128, mode);
    ASSERT_EQ(m.borders.size(), 4u);
    const bool mx = mode == tl::GbdtNanMode::Max;
    EXPECT_TRUE(std::isinf(mx ? m.borders[3] : m.borders[0]));
    const int nb = 4;
    const int nan_bin = tl::gbdt::bin_of(nan, m.borders.data(), nb, mx);
    EXPECT_EQ(nan_bin, mx ? nb : 0);
    for (double v : {1.0, 2.0, 3.0, 4.0}) EXPECT_NE(tl::gbdt::bin_of(v, m.borders.data(), nb, mx), nan_bin);
  }
  EXPECT_THROW(tl::gbdt_borders<double>(cpu(1), tl::MatrixView<const double>(X.data(), 6, 1), 128,
                                        tl::GbdtNanMode::Forbidden),
               tl::ValueError);
}

// The training-time rule (bin > b) and the prediction-time rule (x > border)
// agree for every value, including NaN under both modes.
TEST(GbdtBorders, BinRuleMatchesPredictionRule) {
  const Data D = make_data(3000, 3, GbdtLoss::RMSE, true, 9);
  for (auto mode : {tl::GbdtNanMode::Min, tl::GbdtNanMode::Max}) {
    GbdtModel m = tl::gbdt_borders<float>(cpu(2), tl::MatrixView<const float>(D.X.data(), D.n, D.d), 40, mode);
    const bool mx = mode == tl::GbdtNanMode::Max;
    for (int f = 0; f < 3; ++f) {
      const double* bf = m.borders.data() + m.border_offsets[f];
      const int nb = m.border_offsets[f + 1] - m.border_offsets[f];
      for (std::int64_t i = 0; i < D.n; ++i) {
        const double x = D.X[i * D.d + f];
        const int bin = tl::gbdt::bin_of(x, bf, nb, mx);
        for (int b = 0; b < nb; ++b) ASSERT_EQ(bin > b, tl::gbdt::goes_right(x, bf[b], mx));
      }
    }
  }
}

// The CPU trainer bins with bin_of_padded; it must give bin_of's bin for
// values at, just below and just above every border, between borders, far
// outside them, -0 and +0, and NaN, for every border count up to 255.
TEST(GbdtBorders, PaddedSearchIsBinOf) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 gen(5);
  std::normal_distribution<double> nd;
  for (int nb : {0, 1, 2, 3, 7, 8, 15, 16, 100, 127, 128, 200, 254, 255}) {
    std::vector<double> b(static_cast<std::size_t>(nb));
    for (double& v : b) v = std::round(nd(gen) * 64.0) / 16.0;
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    if (!b.empty() && b[0] == 0.0) b[0] = -0.0;
    const int n = static_cast<int>(b.size());
    int P = 1;
    while (P < n + 1) P *= 2;
    std::vector<double> pb(static_cast<std::size_t>(P), inf);
    std::copy(b.begin(), b.end(), pb.begin());
    std::vector<double> xs = {-1e300, 1e300, -0.0, 0.0, nan};
    for (double v : b) {
      xs.push_back(v);
      xs.push_back(std::nextafter(v, -inf));
      xs.push_back(std::nextafter(v, inf));
    }
    for (int k = 0; k < 200; ++k) xs.push_back(nd(gen) * 8.0);
    for (bool mx : {false, true})
      for (double x : xs)
        ASSERT_EQ(tl::gbdt::bin_of_padded(x, pb.data(), P, mx ? n : 0), tl::gbdt::bin_of(x, b.data(), n, mx))
            << "nb=" << n << " x=" << x << " nan_max=" << mx;
  }
}
