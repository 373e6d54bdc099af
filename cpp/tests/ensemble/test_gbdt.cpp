// Gradient-boosted trees: shared math, borders, fixed-point histograms, fits
// on the CPU backend, and CPU-versus-CUDA identity (skipped without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../test_util.hpp"
#include "ensemble/gbdt/gbdt_cpu.hpp"
#include "ensemble/gbdt/gbdt_driver.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

namespace {

using tl::GbdtLoss;
using tl::GbdtModel;
using tl::GbdtParams;

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

std::int64_t ulp_distance(double a, double b) {
  std::int64_t ia, ib;
  std::memcpy(&ia, &a, 8);
  std::memcpy(&ib, &b, 8);
  if (ia < 0) ia = std::numeric_limits<std::int64_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<std::int64_t>::min() - ib;
  return ia > ib ? ia - ib : ib - ia;
}

// A classification / regression fixture: n x d, a nonlinear signal, NaN in
// feature 1 (when with_nan), a constant feature, heavy ties in feature 2.
struct Data {
  std::int64_t n, d;
  std::vector<float> X;
  std::vector<double> y;
};

Data make_data(std::int64_t n, std::int64_t d, GbdtLoss loss, bool with_nan, std::uint64_t seed, int n_classes = 3) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  Data D{n, d, std::vector<float>(static_cast<std::size_t>(n * d)), std::vector<double>(static_cast<std::size_t>(n))};
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < d; ++j) D.X[i * d + j] = static_cast<float>(nd(rng) * (1 + j));
    if (d > 2) D.X[i * d + 2] = static_cast<float>(std::floor(D.X[i * d + 2]));  // ties
    if (d > 3) D.X[i * d + 3] = 1.5f;                                             // constant
    const double s = D.X[i * d] * D.X[i * d] * 0.5 - D.X[i * d + 1] + 0.3 * std::sin(3 * D.X[i * d]) + nd(rng) * 0.5;
    if (loss == GbdtLoss::Logloss) D.y[i] = s > 0.3 ? 1.0 : 0.0;
    if (loss == GbdtLoss::CrossEntropy) D.y[i] = 1.0 / (1.0 + std::exp(-2.0 * s));
    if (loss == GbdtLoss::RMSE) D.y[i] = 100 * s + 1e4;
    if (loss == GbdtLoss::Huber) D.y[i] = 100 * s + 1e4 + (rng() % 20 == 0 ? 5e3 : 0.0);
    if (loss == GbdtLoss::MAE || loss == GbdtLoss::Quantile)  // heteroscedastic, unit scale
      D.y[i] = s + (0.3 + 0.3 * std::fabs(D.X[i * d])) * nd(rng);
    if (loss == GbdtLoss::MultiClass || loss == GbdtLoss::MultiClassOneVsAll)
      D.y[i] = static_cast<double>((s > -0.5) + (s > 1.0) + (n_classes > 3 && s > 2.0));
    if (loss == GbdtLoss::Poisson)
      D.y[i] = static_cast<double>(std::poisson_distribution<int>(std::exp(std::min(s, 3.0) * 0.7))(rng));
    if (loss == GbdtLoss::Tweedie)
      D.y[i] = s < 0 ? 0.0 : std::gamma_distribution<double>(2.0, std::exp(std::min(s, 3.0) * 0.5))(rng);
    if (with_nan && rng() % 11 == 0) D.X[i * d + 1] = std::numeric_limits<float>::quiet_NaN();
  }
  return D;
}

GbdtModel fit(const tl::Context& ctx, const Data& D, const GbdtParams& p, const std::vector<double>* w = nullptr,
              const Data* eval = nullptr, tl::GbdtFitInfo* info = nullptr) {
  tl::GbdtEvalSet<float> ev;
  if (eval) {
    ev.X = tl::MatrixView<const float>(eval->X.data(), eval->n, eval->d);
    ev.y = eval->y.data();
  }
  return tl::gbdt_fit<float>(ctx, tl::MatrixView<const float>(D.X.data(), D.n, D.d), D.y.data(),
                             w ? w->data() : nullptr, p, ev, true, info);
}

std::vector<float> predict(const tl::Context& ctx, const GbdtModel& m, const Data& D, tl::GbdtOutput kind) {
  std::vector<float> out(static_cast<std::size_t>(D.n * m.n_outputs));
  tl::gbdt_predict<float>(ctx, m, tl::MatrixView<const float>(D.X.data(), D.n, D.d), -1, kind,
                          tl::MatrixView<float>(out.data(), D.n, m.n_outputs));
  return out;
}

template <class V>
bool same_bits_vec(const V& a, const V& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
}

void expect_same_model(const GbdtModel& a, const GbdtModel& b) {
  EXPECT_TRUE(same_bits_vec(a.borders, b.borders));
  EXPECT_EQ(a.border_offsets, b.border_offsets);
  EXPECT_EQ(a.tree_depth, b.tree_depth);
  EXPECT_EQ(a.split_feature, b.split_feature);
  EXPECT_EQ(a.split_bin, b.split_bin);
  EXPECT_TRUE(same_bits_vec(a.split_border, b.split_border));
  EXPECT_TRUE(same_bits_vec(a.split_gain, b.split_gain));
  EXPECT_EQ(a.split_nan_right, b.split_nan_right);
  EXPECT_TRUE(same_bits_vec(a.leaf_values, b.leaf_values));
  EXPECT_TRUE(same_bits_vec(a.base_score, b.base_score));
}

GbdtParams params(GbdtLoss loss, int trees = 20, int depth = 4) {
  GbdtParams p;
  p.loss = loss;
  p.n_estimators = trees;
  p.max_depth = depth;
  p.learning_rate = 0.2;
  p.border_count = 64;
  p.n_classes = 3;
  p.boost_from_average = loss != GbdtLoss::MultiClass;
  if (loss == GbdtLoss::Tweedie) p.loss_param = 1.5;
  if (loss == GbdtLoss::Huber) p.loss_param = 30.0;
  if (loss == GbdtLoss::Quantile) p.loss_param = 0.8;
  return p;
}

}  // namespace

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

// The sample is sorted by a radix sort on the values' bits (gbdt_cpu.cpp);
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

// ---------------------------------------------------------------------------
// Fitting on the CPU
// ---------------------------------------------------------------------------
const GbdtLoss kAllLosses[] = {GbdtLoss::Logloss,     GbdtLoss::RMSE,    GbdtLoss::MultiClass,
                               GbdtLoss::CrossEntropy, GbdtLoss::MultiClassOneVsAll,
                               GbdtLoss::Poisson,     GbdtLoss::Tweedie, GbdtLoss::Huber,
                               GbdtLoss::MAE,         GbdtLoss::Quantile};

TEST(GbdtFit, LearnsAndLossDecreases) {
  for (GbdtLoss loss : kAllLosses) {
    const Data D = make_data(4000, 5, loss, true, 3);
    tl::GbdtFitInfo info;
    GbdtModel m = fit(cpu(2), D, params(loss, 30, 5), nullptr, nullptr, &info);
    m.validate();
    ASSERT_EQ(info.train_loss.size(), 30u);
    // Poisson's and Tweedie's losses omit label-only constants, so their
    // scale says less: ask them for a smaller relative improvement.
    const double first = info.train_loss.front(), last = info.train_loss.back();
    const double need = (loss == GbdtLoss::Poisson || loss == GbdtLoss::Tweedie) ? 0.1 : 0.3;
    EXPECT_LT(last, first - need * std::fabs(first)) << tl::to_string(loss);
    EXPECT_EQ(m.n_trees(), 30);
    for (int f : m.split_feature) EXPECT_NE(f, 3) << "the constant feature cannot split";
  }
}

// Rule 1: the same model, bit for bit, for any thread count (7 threads on 5
// features also takes the per-row-block partial histograms).
TEST(GbdtFit, BitsDoNotDependOnThreadCount) {
  for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::RMSE, GbdtLoss::MultiClass}) {
    const Data D = make_data(70000, 5, loss, true, 4);
    const GbdtModel ref = fit(cpu(1), D, params(loss, 6, 6));
    for (int t : {2, 7}) {
      SCOPED_TRACE(t);
      expect_same_model(ref, fit(cpu(t), D, params(loss, 6, 6)));
    }
  }
}

// The CPU trainer's gradients (Logloss and CrossEntropy four rows at a
// time in the AVX2 build, the other losses row by row) are
// gbdt::row_gradients row by row, bit for bit, in every build: raw
// predictions across exp's reduction range and past its overflow and
// underflow bounds, at them, +-0, subnormal, infinite and NaN; weights
// of 0, 1 and others; a row count that leaves a tail.
TEST(GbdtFit, VectorGradientsAreTheScalarOnes) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> f = {0.0, -0.0, 1e-310, -1e-310, 709.782712893384, -709.782712893384, 745.1332191019412,
                           -745.1332191019412, 709.79, -709.79, 745.14, -745.14, 708.4, -708.4, 744.4, -744.4, 800,
                           -800, inf, -inf, nan, 0.5 * std::log(2.0), -0.5 * std::log(2.0), 1e-20, 37.5, -37.5};
  // exp's argument -f with -f / ln 2 exactly halfway between integers (its
  // rounding to k: halves away from zero, not to even).
  for (int k = -1070; k < 1020; k += 7)
    for (double x = std::nextafter((k + 0.5) * 0.6931471805599453, -inf), m = 0; m < 64; ++m) {
      if (x * 1.4426950408889634 == k + 0.5) f.push_back(-x);
      x = std::nextafter(x, inf);
    }
  const std::size_t halves = f.size();
  while (f.size() < halves + 4003) {
    const double v = u(gen);
    f.push_back(f.size() % 3 == 0 ? v * 40.0 : f.size() % 3 == 1 ? v * 4.0 : v * 760.0);
  }
  const std::int64_t n = static_cast<std::int64_t>(f.size());
  std::vector<double> y(n), w(n);
  for (std::int64_t i = 0; i < n; ++i) {
    y[i] = i % 5 == 0 ? 0.3 : static_cast<double>(i % 2);
    w[i] = i % 7 == 0 ? 0.0 : i % 7 == 1 ? 1.0 : 0.5 + u(gen) * 0.25;
  }
  // The largest weighted |g| four rows (one vector lane) before a NaN: the
  // maximum skips the NaN and keeps it.
  const std::int64_t big = halves + 100;
  f[big] = 20.0;
  y[big] = 0.0;
  w[big] = 3.0;
  f[big + 4] = nan;
  ASSERT_GT(halves, 100u);
  for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::CrossEntropy, GbdtLoss::RMSE, GbdtLoss::Poisson}) {
    for (const char* isa : {"avx512", "avx2", "baseline"}) {
      for (bool weighted : {false, true}) {
        SCOPED_TRACE(std::string(tl::to_string(loss)) + " " + isa + (weighted ? " weighted" : ""));
        setenv("TWINLEARN_CPU_ISA", isa, 1);
        std::vector<double> g(n), h(n);
        double maxg = 0.0, maxh = 0.0;
        tl::detail::gbdt_gradients_cpu(loss, 1, 0.0, f.data(), y.data(), weighted ? w.data() : nullptr, n, g.data(),
                                       h.data(), &maxg, &maxh);
        unsetenv("TWINLEARN_CPU_ISA");
        double rg = 0.0, rh = 0.0;
        std::int64_t bad = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          double gi = 0.0, hi = 0.0;
          tl::gbdt::row_gradients(loss, 1, &f[i], y[i], weighted ? w[i] : 1.0, 0.0, &gi, &hi);
          bad += !tltest::same_bits(g[i], gi) || !tltest::same_bits(h[i], hi);
          if (bad == 1 && (!tltest::same_bits(g[i], gi) || !tltest::same_bits(h[i], hi)))
            ADD_FAILURE() << "first difference at f = " << f[i] << ": g " << g[i] << " vs " << gi << ", h " << h[i]
                          << " vs " << hi;
          rg = std::fabs(gi) > rg ? std::fabs(gi) : rg;
          rh = std::fabs(hi) > rh ? std::fabs(hi) : rh;
        }
        EXPECT_EQ(bad, 0);
        EXPECT_TRUE(tltest::same_bits(maxg, rg));
        EXPECT_TRUE(tltest::same_bits(maxh, rh));
      }
    }
  }
}

// The first tree of a fit is the search spelled out row by row, without
// histograms: each row's fixed-point (g, h) from the base score, every
// candidate (feature, border) scored as the sum over the level's leaves, in
// leaf order, of its gain from the rows' own sums, the best by
// gbdt::better_candidate; leaf values from the final leaves' row sums. The
// trainer gets the same sums from histograms (built for one child of each
// pair, leaf after leaf, in feature groups and row shares, the sibling by
// subtraction): any row added twice, dropped or put in the wrong leaf or
// bin changes a split or a leaf value. Threads 1, 2 and 7 (5 features: 7
// threads also take per-row-share partial histograms). The RMSE case starts
// from 0 with labels whose fixed-point gradients fall halfway between
// integers (+-0.5, +-2.5 units): gbdt::quantize rounds them away from zero.
TEST(GbdtFit, FirstTreeIsTheRowByRowSearch) {
  for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::RMSE})
  for (int threads : {1, 2, 7}) {
    SCOPED_TRACE(std::string(tl::to_string(loss)) + " " + std::to_string(threads));
    Data D = make_data(70000, 5, GbdtLoss::Logloss, true, 12);
    GbdtParams p = params(loss, 1, 5);
    if (loss == GbdtLoss::RMSE) {
      p.boost_from_average = false;
      for (std::int64_t i = 0; i < D.n; ++i) {
        const double halves[4] = {0.5, -0.5, 2.5, -2.5};
        D.y[i] = i % 3 == 0 ? std::ldexp(halves[i % 4], -30) : 2.0 * D.y[i] - 1.0;  // max |g| = 1: a unit is 2^-30
      }
    }
    const GbdtModel m = fit(cpu(threads), D, p);
    ASSERT_EQ(m.tree_depth[0], p.max_depth);
    const double base = m.base_score[0];
    std::vector<double> g(D.n), h(D.n);
    double maxg = 0.0, maxh = 0.0;
    for (std::int64_t i = 0; i < D.n; ++i) {
      tl::gbdt::row_gradients(p.loss, 1, &base, D.y[i], 1.0, p.loss_param, &g[i], &h[i]);
      maxg = std::max(maxg, std::fabs(g[i]));
      maxh = std::max(maxh, std::fabs(h[i]));
    }
    const int eg = tl::gbdt::quant_exponent(maxg), eh = tl::gbdt::quant_exponent(maxh);
    const double isg = tl::gbdt::pow2(-eg), ish = tl::gbdt::pow2(-eh);
    std::vector<std::int64_t> qg(D.n), qh(D.n), leaf(D.n, 0);
    for (std::int64_t i = 0; i < D.n; ++i) {
      qg[i] = tl::gbdt::quantize(g[i], tl::gbdt::pow2(eg));
      qh[i] = tl::gbdt::quantize(h[i], tl::gbdt::pow2(eh));
    }
    const int F = static_cast<int>(D.d);
    std::vector<int> nb(F);
    std::vector<std::vector<int>> bin(F, std::vector<int>(D.n));
    int maxb = 0;
    for (int f = 0; f < F; ++f) {
      nb[f] = m.border_offsets[f + 1] - m.border_offsets[f];
      maxb = std::max(maxb, nb[f]);
      for (std::int64_t i = 0; i < D.n; ++i)
        bin[f][i] = tl::gbdt::bin_of(D.X[i * F + f], m.borders.data() + m.border_offsets[f], nb[f], false);
    }
    for (int d = 0; d < p.max_depth; ++d) {
      const std::int64_t L = std::int64_t(1) << d;
      std::vector<std::int64_t> Gt(L, 0), Ht(L, 0);
      for (std::int64_t i = 0; i < D.n; ++i) {
        Gt[leaf[i]] += qg[i];
        Ht[leaf[i]] += qh[i];
      }
      double best = 0.0;
      std::int64_t bi = -1;
      for (int f = 0; f < F; ++f) {
        // Left-side sums of every leaf at every border: rows by bin, then prefix sums.
        std::vector<std::int64_t> GB(L * (nb[f] + 1), 0), HB(L * (nb[f] + 1), 0);
        for (std::int64_t i = 0; i < D.n; ++i) {
          GB[leaf[i] * (nb[f] + 1) + bin[f][i]] += qg[i];
          HB[leaf[i] * (nb[f] + 1) + bin[f][i]] += qh[i];
        }
        for (int b = 0; b < nb[f]; ++b) {
          double score = 0.0;
          for (std::int64_t l = 0; l < L; ++l) {
            std::int64_t GL = 0, HL = 0;
            for (int c = 0; c <= b; ++c) {
              GL += GB[l * (nb[f] + 1) + c];
              HL += HB[l * (nb[f] + 1) + c];
            }
            const double gain = tl::gbdt::prefix_gain(GL, HL, Gt[l], Ht[l], tl::gbdt::dequantize(Gt[l], isg),
                                                      tl::gbdt::dequantize(Ht[l], ish), isg, ish, p.l2_leaf_reg,
                                                      p.min_child_weight);
            score = tl::num::add(score, tl::num::add(0.0, gain));
          }
          const std::int64_t idx = static_cast<std::int64_t>(f) * (maxb + 1) + b;
          if (bi < 0 || tl::gbdt::better_candidate(score, idx, best, bi)) {
            best = score;
            bi = idx;
          }
        }
      }
      const int sf = static_cast<int>(bi / (maxb + 1)), sb = static_cast<int>(bi % (maxb + 1));
      ASSERT_EQ(m.split_feature[d], sf) << "level " << d;
      ASSERT_EQ(m.split_bin[d], sb) << "level " << d;
      EXPECT_EQ(ulp_distance(m.split_gain[d], best), 0) << "level " << d;
      for (std::int64_t i = 0; i < D.n; ++i) leaf[i] += static_cast<std::int64_t>(bin[sf][i] > sb) << d;
    }
    const std::int64_t nl = std::int64_t(1) << p.max_depth;
    std::vector<std::int64_t> G(nl, 0), H(nl, 0);
    for (std::int64_t i = 0; i < D.n; ++i) {
      G[leaf[i]] += qg[i];
      H[leaf[i]] += qh[i];
    }
    for (std::int64_t l = 0; l < nl; ++l)
      EXPECT_EQ(ulp_distance(m.leaf_values[l], tl::gbdt::leaf_value(tl::gbdt::dequantize(G[l], isg),
                                                                    tl::gbdt::dequantize(H[l], ish), p.l2_leaf_reg,
                                                                    p.learning_rate)),
                0)
          << "leaf " << l;
  }
}

// The CPU backend computes the losses' gradients in one of two builds of the
// same code, chosen by the CPU (core of gbdt_cpu.cpp: std::fma as one
// instruction where the CPU has FMA, else a library call); both must give
// the same bits, for every loss whose gradients call exp or fma.
TEST(GbdtFit, BitsDoNotDependOnTheFmaBuild) {
  for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::RMSE, GbdtLoss::MultiClass}) {
    SCOPED_TRACE(static_cast<int>(loss));
    const Data D = make_data(20000, 5, loss, true, 4);
    const GbdtModel ref = fit(cpu(2), D, params(loss, 8, 6));
    setenv("TWINLEARN_CPU_ISA", "baseline", 1);
    const GbdtModel plain = fit(cpu(2), D, params(loss, 8, 6));
    unsetenv("TWINLEARN_CPU_ISA");
    expect_same_model(ref, plain);
  }
}

TEST(GbdtFit, StagedPredictionAddsUpToPredict) {
  const Data D = make_data(2000, 4, GbdtLoss::Logloss, true, 6);
  const GbdtModel m = fit(cpu(2), D, params(GbdtLoss::Logloss, 12, 4));
  std::vector<double> acc(static_cast<std::size_t>(D.n), m.base_score[0]);
  for (std::int64_t t = 0; t < m.n_trees(); ++t)
    tl::gbdt_predict_stage<float>(cpu(2), m, tl::MatrixView<const float>(D.X.data(), D.n, D.d), t, t + 1, acc.data());
  std::vector<float> raw(acc.size()), prob(acc.size());
  tl::gbdt_link(m.loss, 1, acc.data(), D.n, tl::GbdtOutput::Raw, raw.data());
  tl::gbdt_link(m.loss, 1, acc.data(), D.n, tl::GbdtOutput::Probability, prob.data());
  EXPECT_TRUE(same_bits_vec(raw, predict(cpu(3), m, D, tl::GbdtOutput::Raw)));
  EXPECT_TRUE(same_bits_vec(prob, predict(cpu(3), m, D, tl::GbdtOutput::Probability)));
}

TEST(GbdtFit, WeightsOfOneChangeNothingAndWeightsMatter) {
  const Data D = make_data(3000, 4, GbdtLoss::Logloss, false, 8);
  std::vector<double> ones(static_cast<std::size_t>(D.n), 1.0), w(static_cast<std::size_t>(D.n));
  for (std::int64_t i = 0; i < D.n; ++i) w[i] = 0.5 + (i % 5);
  const auto p = params(GbdtLoss::Logloss, 5, 4);
  expect_same_model(fit(cpu(2), D, p), fit(cpu(2), D, p, &ones));
  EXPECT_FALSE(same_bits_vec(fit(cpu(2), D, p).leaf_values, fit(cpu(2), D, p, &w).leaf_values));
}

TEST(GbdtFit, EarlyStoppingOnEvalSet) {
  const Data D = make_data(1500, 4, GbdtLoss::Logloss, false, 10);
  const Data E = make_data(1500, 4, GbdtLoss::Logloss, false, 11);
  auto p = params(GbdtLoss::Logloss, 400, 6);
  p.learning_rate = 0.5;
  p.early_stopping_rounds = 5;
  tl::GbdtFitInfo info;
  const GbdtModel m = fit(cpu(2), D, p, nullptr, &E, &info);
  EXPECT_TRUE(info.stopped_early);
  EXPECT_EQ(m.n_trees(), info.best_iteration + 1 + p.early_stopping_rounds);
  EXPECT_EQ(info.eval_loss.size(), static_cast<std::size_t>(m.n_trees()));
  for (std::size_t t = 0; t < info.eval_loss.size(); ++t) EXPECT_GE(info.eval_loss[t], info.eval_loss[info.best_iteration]);
}

TEST(GbdtFit, AllConstantFeaturesGiveDepthZeroTrees) {
  std::vector<double> X(200, 2.0), y(100);
  for (int i = 0; i < 100; ++i) y[i] = i % 3;
  GbdtParams p = params(GbdtLoss::RMSE, 3, 6);
  GbdtModel m = tl::gbdt_fit<double>(cpu(1), tl::MatrixView<const double>(X.data(), 100, 2), y.data(), nullptr, p, {},
                                     false, nullptr);
  EXPECT_EQ(m.tree_depth, std::vector<std::int32_t>({0, 0, 0}));
  EXPECT_EQ(m.leaf_values.size(), 3u);
}

TEST(GbdtFit, RejectsBadParametersAndLabels) {
  const Data D = make_data(100, 4, GbdtLoss::Logloss, false, 12);
  auto bad = [&](GbdtParams p) { EXPECT_THROW(fit(cpu(1), D, p), tl::ValueError); };
  GbdtParams p = params(GbdtLoss::Logloss);
  p.border_count = 256;
  bad(p);
  p = params(GbdtLoss::Logloss);
  p.border_count = 0;
  bad(p);
  p = params(GbdtLoss::Logloss);
  p.max_depth = 17;
  bad(p);
  p = params(GbdtLoss::Logloss);
  p.learning_rate = 0;
  bad(p);
  Data D3 = make_data(100, 4, GbdtLoss::MultiClass, false, 12);
  EXPECT_THROW(fit(cpu(1), D3, params(GbdtLoss::Logloss)), tl::ValueError);  // labels 0..2 under Logloss
  Data Dn = D;
  Dn.y[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(fit(cpu(1), Dn, params(GbdtLoss::RMSE)), tl::ValueError);
  Data Di = D;
  Di.X[7] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(fit(cpu(1), Di, params(GbdtLoss::Logloss)), tl::ValueError);
  Data Dz = D;  // counts that are all 0: the log link has no finite start
  std::fill(Dz.y.begin(), Dz.y.end(), 0.0);
  EXPECT_THROW(fit(cpu(1), Dz, params(GbdtLoss::Poisson)), tl::ValueError);
  EXPECT_THROW(fit(cpu(1), Dz, params(GbdtLoss::Tweedie)), tl::ValueError);
  Dz.y[3] = 1.0;
  EXPECT_NO_THROW(fit(cpu(1), Dz, params(GbdtLoss::Poisson, 2, 2)));
  const GbdtModel m = fit(cpu(1), D, params(GbdtLoss::Logloss, 2, 2));
  std::vector<float> X3(30), out(10);
  EXPECT_THROW(tl::gbdt_predict<float>(cpu(1), m, tl::MatrixView<const float>(X3.data(), 10, 3), -1,
                                       tl::GbdtOutput::Raw, tl::MatrixView<float>(out.data(), 10, 1)),
               tl::ValueError);
}

// ---------------------------------------------------------------------------
// CPU versus CUDA (rule: identical)
// ---------------------------------------------------------------------------
namespace {
// Fits D (eval set E, weights w or nullptr) on the CPU and on `gpu` and
// expects the same bits: models, per-round losses, and staged predictions
// of trees [2, 5) on E. Returns (CPU model, GPU model).
std::pair<GbdtModel, GbdtModel> expect_fits_identical(const tl::Context& gpu, const Data& D, const Data& E,
                                                      const GbdtParams& p, const std::vector<double>* w) {
  tl::GbdtFitInfo ic, ig;
  GbdtModel a = fit(cpu(3), D, p, w, &E, &ic);
  GbdtModel b = fit(gpu, D, p, w, &E, &ig);
  expect_same_model(a, b);
  EXPECT_TRUE(same_bits_vec(ic.train_loss, ig.train_loss));
  EXPECT_TRUE(same_bits_vec(ic.eval_loss, ig.eval_loss));
  std::vector<double> acc_c(static_cast<std::size_t>(E.n * a.n_outputs), 0.5), acc_g = acc_c;
  tl::gbdt_predict_stage<float>(cpu(2), a, tl::MatrixView<const float>(E.X.data(), E.n, E.d), 2, 5, acc_c.data());
  tl::gbdt_predict_stage<float>(gpu, a, tl::MatrixView<const float>(E.X.data(), E.n, E.d), 2, 5, acc_g.data());
  EXPECT_TRUE(same_bits_vec(acc_c, acc_g));
  return {std::move(a), std::move(b)};
}
}  // namespace

TEST(GbdtCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  struct Case {
    GbdtLoss loss;
    std::int64_t n;
    int depth;
    bool nan;
    tl::GbdtNanMode mode;
    bool weighted;
  };
  // Sizes around the shared-memory tile (2^15 rows) and the border sample
  // (200000 rows); depths that take the shared and the global histogram paths.
  for (const Case& c : {Case{GbdtLoss::Logloss, 1000, 6, true, tl::GbdtNanMode::Min, false},
                        Case{GbdtLoss::Logloss, 32769, 3, true, tl::GbdtNanMode::Max, true},
                        Case{GbdtLoss::RMSE, 70001, 6, false, tl::GbdtNanMode::Min, true},
                        Case{GbdtLoss::MultiClass, 5000, 5, true, tl::GbdtNanMode::Min, false},
                        Case{GbdtLoss::Logloss, 250007, 6, true, tl::GbdtNanMode::Min, false},
                        Case{GbdtLoss::RMSE, 3000, 10, true, tl::GbdtNanMode::Max, false},
                        Case{GbdtLoss::CrossEntropy, 4000, 6, true, tl::GbdtNanMode::Min, true},
                        Case{GbdtLoss::MultiClassOneVsAll, 4000, 4, false, tl::GbdtNanMode::Min, false},
                        Case{GbdtLoss::Poisson, 40000, 6, true, tl::GbdtNanMode::Min, true},
                        Case{GbdtLoss::Tweedie, 5000, 5, false, tl::GbdtNanMode::Min, false},
                        Case{GbdtLoss::Huber, 5000, 6, true, tl::GbdtNanMode::Max, false},
                        Case{GbdtLoss::MAE, 33000, 6, true, tl::GbdtNanMode::Min, true},
                        Case{GbdtLoss::Quantile, 5000, 5, true, tl::GbdtNanMode::Max, false}}) {
    SCOPED_TRACE(std::string(tl::to_string(c.loss)) + " n=" + std::to_string(c.n) + " depth=" +
                 std::to_string(c.depth));
    const Data D = make_data(c.n, 6, c.loss, c.nan, 100 + c.n);
    const Data E = make_data(c.n / 3 + 1, 6, c.loss, c.nan, 200 + c.n);
    std::vector<double> w(static_cast<std::size_t>(c.n));
    for (std::int64_t i = 0; i < c.n; ++i) w[i] = 0.25 + (i % 7) * 0.5;
    GbdtParams p = params(c.loss, 8, c.depth);
    p.nan_mode = c.mode;
    p.border_count = c.depth == 10 ? 255 : 128;
    const GbdtModel a = expect_fits_identical(gpu, D, E, p, c.weighted ? &w : nullptr).first;
    const bool log_link = c.loss == GbdtLoss::Poisson || c.loss == GbdtLoss::Tweedie;
    const bool classifier = !log_link && c.loss != GbdtLoss::RMSE && c.loss != GbdtLoss::Huber &&
                            c.loss != GbdtLoss::MAE && c.loss != GbdtLoss::Quantile;
    for (auto kind : {tl::GbdtOutput::Raw, tl::GbdtOutput::Probability, tl::GbdtOutput::Exponent}) {
      if ((kind == tl::GbdtOutput::Probability && !classifier) || (kind == tl::GbdtOutput::Exponent && !log_link))
        continue;
      EXPECT_TRUE(same_bits_vec(predict(cpu(2), a, E, kind), predict(gpu, a, E, kind)));
    }
  }
}

TEST(GbdtCuda, BordersIdenticalToCpuOnDoubles) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (std::int64_t n : {std::int64_t(1), std::int64_t(300), std::int64_t(200001), std::int64_t(450000)}) {
    auto h = tltest::hostile_column(n * 3, 17 + n);
    for (std::int64_t i = 0; i < n * 3; i += 9) h[i] = std::floor(h[i]);
    if (n > 5) h[4] = -0.0, h[5] = std::numeric_limits<double>::quiet_NaN();
    for (int bc : {1, 7, 255}) {
      const auto mv = tl::MatrixView<const double>(h.data(), n, 3);
      const GbdtModel a = tl::gbdt_borders<double>(cpu(2), mv, bc, tl::GbdtNanMode::Min);
      const GbdtModel b = tl::gbdt_borders<double>(gpu, mv, bc, tl::GbdtNanMode::Min);
      EXPECT_TRUE(same_bits_vec(a.borders, b.borders)) << "n=" << n << " border_count=" << bc;
      EXPECT_EQ(a.border_offsets, b.border_offsets);
    }
  }
}

// ---------------------------------------------------------------------------
// Sampling: bootstrap weights and the random subspace (rsm)
// ---------------------------------------------------------------------------
namespace {

GbdtParams sampled(GbdtLoss loss, tl::GbdtBootstrap b, double rsm, std::uint64_t seed, int trees = 8, int depth = 5) {
  GbdtParams p = params(loss, trees, depth);
  p.bootstrap = b;
  if (b == tl::GbdtBootstrap::Bernoulli) p.subsample = 0.7;
  if (b == tl::GbdtBootstrap::Bayesian) p.bagging_temperature = 1.5;
  p.rsm = rsm;
  p.seed = seed;
  return p;
}

struct SamplingCase {
  tl::GbdtBootstrap b;
  double rsm;
};
const SamplingCase kSamplingCases[] = {{tl::GbdtBootstrap::Bernoulli, 1.0},
                                       {tl::GbdtBootstrap::Bayesian, 1.0},
                                       {tl::GbdtBootstrap::No, 0.5},
                                       {tl::GbdtBootstrap::Bernoulli, 0.4},
                                       {tl::GbdtBootstrap::Bayesian, 0.6}};

std::string case_name(const SamplingCase& c) {
  return std::string(tl::to_string(c.b)) + " rsm=" + std::to_string(c.rsm);
}

}  // namespace

TEST(GbdtSampling, BootstrapWeightsFollowTheirLaws) {
  tl::gbdt::RowSampler s;
  s.seed = 77;
  s.stream = tl::gbdt::sampling_stream(tl::gbdt::kStreamBootstrap, 3);
  const std::int64_t n = 200000;
  s.type = tl::GbdtBootstrap::Bernoulli;
  s.subsample = 0.8;
  double kept = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double w = tl::gbdt::bootstrap_weight(s, i);
    ASSERT_TRUE(w == 0.0 || w == 1.0);
    kept += w;
  }
  EXPECT_NEAR(kept / n, 0.8, 0.005);
  s.type = tl::GbdtBootstrap::Bayesian;
  s.temperature = 1.0;  // exponential weights: mean 1, variance 1
  double m1 = 0, m2 = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double w = tl::gbdt::bootstrap_weight(s, i);
    ASSERT_GE(w, 0.0);
    m1 += w;
    m2 += w * w;
  }
  EXPECT_NEAR(m1 / n, 1.0, 0.01);
  EXPECT_NEAR(m2 / n - (m1 / n) * (m1 / n), 1.0, 0.03);
  // Temperature t: (-log u)^t, against libm to 1e-13 relative; t = 0 gives 1.
  for (double u : {1e-300, 1e-9, 0.01, 0.3, 0.5, 0.999, 1.0})
    for (double t : {0.0, 0.5, 1.0, 2.0, 3.7}) {
      const double want = t == 0.0 ? 1.0 : (u == 1.0 ? 0.0 : std::pow(-std::log(u), t));
      const double got = tl::gbdt::bayesian_weight(u, t);
      EXPECT_LE(std::fabs(got - want), 1e-13 * want) << "u=" << u << " t=" << t;
    }
  // The draws depend on the tree (stream) and the seed.
  tl::gbdt::RowSampler s2 = s, s3 = s;
  s2.stream = tl::gbdt::sampling_stream(tl::gbdt::kStreamBootstrap, 4);
  s3.seed = 78;
  int diff2 = 0, diff3 = 0;
  for (std::int64_t i = 0; i < 100; ++i) {
    diff2 += tl::gbdt::bootstrap_weight(s, i) != tl::gbdt::bootstrap_weight(s2, i);
    diff3 += tl::gbdt::bootstrap_weight(s, i) != tl::gbdt::bootstrap_weight(s3, i);
  }
  EXPECT_GT(diff2, 90);
  EXPECT_GT(diff3, 90);
}

// The same bits run to run and for 1 or 4 threads, for every sampling kind.
TEST(GbdtSampling, BitsDoNotDependOnRunOrThreadCount) {
  for (const SamplingCase& c : kSamplingCases)
    for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::MultiClass}) {
      SCOPED_TRACE(case_name(c) + " " + tl::to_string(loss));
      const Data D = make_data(40000, 6, loss, true, 21);
      const GbdtParams p = sampled(loss, c.b, c.rsm, 5, 6, 5);
      const GbdtModel ref = fit(cpu(1), D, p);
      expect_same_model(ref, fit(cpu(1), D, p));
      expect_same_model(ref, fit(cpu(4), D, p));
    }
}

// Neutral settings reproduce the unsampled fit bit for bit (whatever the
// seed); real sampling and another seed change it (the separating arm).
TEST(GbdtSampling, NeutralSettingsEqualNoSamplingAndSeedsMatter) {
  const Data D = make_data(5000, 6, GbdtLoss::Logloss, true, 22);
  const GbdtParams base = params(GbdtLoss::Logloss, 10, 5);
  const GbdtModel ref = fit(cpu(2), D, base);
  GbdtParams p = base;
  p.seed = 12345;
  expect_same_model(ref, fit(cpu(2), D, p));  // No bootstrap, rsm 1: the seed is unused
  p.bootstrap = tl::GbdtBootstrap::Bernoulli;
  p.subsample = 1.0;
  expect_same_model(ref, fit(cpu(2), D, p));
  p.bootstrap = tl::GbdtBootstrap::Bayesian;
  p.bagging_temperature = 0.0;
  expect_same_model(ref, fit(cpu(2), D, p));
  for (const SamplingCase& c : kSamplingCases) {
    SCOPED_TRACE(case_name(c));
    const GbdtModel a = fit(cpu(2), D, sampled(GbdtLoss::Logloss, c.b, c.rsm, 1, 10, 5));
    const GbdtModel b = fit(cpu(2), D, sampled(GbdtLoss::Logloss, c.b, c.rsm, 2, 10, 5));
    EXPECT_FALSE(same_bits_vec(a.leaf_values, ref.leaf_values));
    EXPECT_FALSE(same_bits_vec(a.leaf_values, b.leaf_values));
  }
}

// rsm: every split of tree t uses a feature of gbdt_feature_subset(t), which
// holds max(1, round(rsm * m)) of the m features with borders; the subsets
// change from tree to tree.
TEST(GbdtSampling, RsmSplitsUseOnlyTheTreesSubset) {
  const Data D = make_data(5000, 9, GbdtLoss::RMSE, true, 23);  // feature 3 is constant: m = 8
  for (double rsm : {0.1, 0.3, 0.5}) {
    SCOPED_TRACE(rsm);
    const GbdtParams p = sampled(GbdtLoss::RMSE, tl::GbdtBootstrap::No, rsm, 9, 20, 4);
    const GbdtModel m = fit(cpu(2), D, p);
    const std::int64_t k = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(rsm * 8 + 0.5)));
    std::vector<int> used(9, 0);
    int distinct_subsets = 0;
    std::vector<std::uint8_t> prev;
    for (std::int64_t t = 0; t < m.n_trees(); ++t) {
      const auto sub = tl::gbdt_feature_subset(p, m.border_offsets, t);
      ASSERT_EQ(sub.size(), 9u);
      EXPECT_EQ(std::count(sub.begin(), sub.end(), 1), k);
      EXPECT_EQ(sub[3], 0) << "a feature without borders is never drawn";
      for (int d = 0; d < m.tree_depth[t]; ++d) {
        const int f = m.split_feature[t * m.tree_depth[t] + d];
        EXPECT_EQ(sub[f], 1) << "tree " << t << " splits on feature " << f << " outside its subset";
        used[f] = 1;
      }
      distinct_subsets += sub != prev;
      prev = sub;
    }
    EXPECT_GT(distinct_subsets, 5);
    EXPECT_GT(std::count(used.begin(), used.end(), 1), k) << "the subsets vary across trees";
  }
  // Separating arm: without rsm, the fit splits on features that a drawn subset excludes.
  const GbdtModel full = fit(cpu(2), D, params(GbdtLoss::RMSE, 20, 4));
  const GbdtParams p = sampled(GbdtLoss::RMSE, tl::GbdtBootstrap::No, 0.3, 9, 20, 4);
  int outside = 0;
  for (std::int64_t t = 0; t < full.n_trees(); ++t) {
    const auto sub = tl::gbdt_feature_subset(p, full.border_offsets, t);
    for (int d = 0; d < 4; ++d) outside += sub[full.split_feature[t * 4 + d]] == 0;
  }
  EXPECT_GT(outside, 0);
}

TEST(GbdtSampling, RejectsBadParameters) {
  const Data D = make_data(100, 4, GbdtLoss::Logloss, false, 24);
  auto bad = [&](GbdtParams p) { EXPECT_THROW(fit(cpu(1), D, p), tl::ValueError); };
  for (double v : {0.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    GbdtParams p = sampled(GbdtLoss::Logloss, tl::GbdtBootstrap::Bernoulli, 1.0, 0);
    p.subsample = v;
    bad(p);
    p = sampled(GbdtLoss::Logloss, tl::GbdtBootstrap::No, 1.0, 0);
    p.rsm = v;
    bad(p);
  }
  for (double v : {-1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    GbdtParams p = sampled(GbdtLoss::Logloss, tl::GbdtBootstrap::Bayesian, 1.0, 0);
    p.bagging_temperature = v;
    bad(p);
  }
  EXPECT_THROW(tl::parse_gbdt_bootstrap("MVS"), tl::ValueError);
}

TEST(GbdtCuda, SamplingIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (const SamplingCase& c : kSamplingCases)
    for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::RMSE, GbdtLoss::MultiClass}) {
      SCOPED_TRACE(case_name(c) + " " + tl::to_string(loss));
      const Data D = make_data(40001, 7, loss, true, 31);
      const Data E = make_data(3000, 7, loss, true, 32);
      std::vector<double> w(static_cast<std::size_t>(D.n));
      for (std::int64_t i = 0; i < D.n; ++i) w[i] = 0.25 + (i % 7) * 0.5;
      const GbdtParams p = sampled(loss, c.b, c.rsm, 17, 8, 6);
      tl::GbdtFitInfo ic, ig;
      const GbdtModel a = fit(cpu(3), D, p, &w, &E, &ic);
      const GbdtModel b = fit(gpu, D, p, &w, &E, &ig);
      expect_same_model(a, b);
      EXPECT_TRUE(same_bits_vec(ic.train_loss, ig.train_loss));
      EXPECT_TRUE(same_bits_vec(ic.eval_loss, ig.eval_loss));
      EXPECT_TRUE(same_bits_vec(predict(cpu(2), a, E, tl::GbdtOutput::Raw), predict(gpu, b, E, tl::GbdtOutput::Raw)));
    }
}

// ---------------------------------------------------------------------------
// Pinball losses (MAE, Quantile): gradients, base score, fits
// ---------------------------------------------------------------------------
TEST(GbdtPinball, GradientsAndLossesFollowThePinballLoss) {
  for (double alpha : {0.1, 0.5, 0.8}) {
    for (double f : {-2.0, 0.0, 1.5}) {
      for (double y : {-2.0, 0.0, 3.0}) {
        const double w = 1.75;
        double g, h;
        tl::gbdt::row_gradients(GbdtLoss::Quantile, 1, &f, y, w, alpha, &g, &h);
        EXPECT_EQ(h, w);
        EXPECT_EQ(g, y > f ? -alpha * w : (1 - alpha) * w) << "alpha=" << alpha << " f=" << f << " y=" << y;
        const double loss = tl::gbdt::row_loss(GbdtLoss::Quantile, 1, &f, y, alpha);
        EXPECT_DOUBLE_EQ(loss, y > f ? alpha * (y - f) : (1 - alpha) * (f - y));
        // The gradient is the derivative of the loss away from the kink.
        if (f != y) {
          const double e = 1e-6, fp = f + e, fm = f - e;
          const double num_der = (tl::gbdt::row_loss(GbdtLoss::Quantile, 1, &fp, y, alpha) -
                                  tl::gbdt::row_loss(GbdtLoss::Quantile, 1, &fm, y, alpha)) /
                                 (2 * e);
          EXPECT_NEAR(g / w, num_der, 1e-6);
        }
        // MAE: Quantile(1/2)'s gradients, and twice its loss.
        double gm, hm, g5, h5;
        tl::gbdt::row_gradients(GbdtLoss::MAE, 1, &f, y, w, 123.0, &gm, &hm);
        tl::gbdt::row_gradients(GbdtLoss::Quantile, 1, &f, y, w, 0.5, &g5, &h5);
        EXPECT_EQ(gm, g5);
        EXPECT_EQ(hm, h5);
        EXPECT_EQ(tl::gbdt::row_loss(GbdtLoss::MAE, 1, &f, y, 0.0), std::fabs(y - f));
        EXPECT_EQ(tl::gbdt::row_loss(GbdtLoss::MAE, 1, &f, y, 0.0),
                  2 * tl::gbdt::row_loss(GbdtLoss::Quantile, 1, &f, y, 0.5));
      }
    }
  }
}

// Brute force: the smallest y_i (positive weight) with weight(y <= y_i) >= alpha * total.
double quantile_brute(const std::vector<double>& y, const std::vector<double>* w, double alpha) {
  double total = 0;
  for (std::size_t i = 0; i < y.size(); ++i) total += w ? (*w)[i] : 1.0;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (w && !((*w)[i] > 0)) continue;
    double below = 0;
    for (std::size_t j = 0; j < y.size(); ++j)
      if (y[j] <= y[i]) below += w ? (*w)[j] : 1.0;
    if (below >= alpha * total) best = std::min(best, y[i]);
  }
  return best;
}

TEST(GbdtPinball, WeightedQuantileIsTheSmallestValueReachingAlpha) {
  std::vector<double> y = {5, 1, 3, 2, 4};
  EXPECT_EQ(tl::gbdt::weighted_quantile(y.data(), nullptr, 5, 0.5), 3.0);
  EXPECT_EQ(tl::gbdt::weighted_quantile(y.data(), nullptr, 4, 0.5), 2.0);  // {5,1,3,2}: the lower median
  EXPECT_EQ(tl::gbdt::weighted_quantile(y.data(), nullptr, 5, 0.01), 1.0);
  EXPECT_EQ(tl::gbdt::weighted_quantile(y.data(), nullptr, 5, 0.99), 5.0);
  std::vector<double> w = {0, 1, 1, 1, 10};  // 5 has no weight; 4 carries most
  EXPECT_EQ(tl::gbdt::weighted_quantile(y.data(), w.data(), 5, 0.5), 4.0);
  EXPECT_EQ(tl::gbdt::weighted_quantile(y.data(), w.data(), 5, 0.999), 4.0);
  std::mt19937_64 rng(5);
  for (int rep = 0; rep < 30; ++rep) {
    const std::size_t n = 1 + rng() % 60;
    std::vector<double> yy(n), ww(n);
    for (std::size_t i = 0; i < n; ++i) {
      yy[i] = static_cast<double>(static_cast<int>(rng() % 9) - 4) * 0.5;  // many ties
      ww[i] = (rng() % 4) * 0.25;
    }
    ww[0] = 1.0;
    for (double a : {0.05, 0.25, 0.5, 0.9}) {
      EXPECT_EQ(tl::gbdt::weighted_quantile(yy.data(), nullptr, static_cast<std::int64_t>(n), a),
                quantile_brute(yy, nullptr, a));
      EXPECT_EQ(tl::gbdt::weighted_quantile(yy.data(), ww.data(), static_cast<std::int64_t>(n), a),
                quantile_brute(yy, &ww, a));
    }
  }
}

TEST(GbdtPinball, FitStartsAtTheQuantileAndCoversAlpha) {
  const Data D = make_data(20000, 5, GbdtLoss::Quantile, false, 41);
  for (double alpha : {0.2, 0.5, 0.8}) {
    SCOPED_TRACE(alpha);
    GbdtParams p = params(GbdtLoss::Quantile, 200, 5);
    p.loss_param = alpha;
    p.learning_rate = 0.1;
    tl::GbdtFitInfo info;
    const GbdtModel m = fit(cpu(2), D, p, nullptr, nullptr, &info);
    EXPECT_EQ(m.base_score[0], tl::gbdt::weighted_quantile(D.y.data(), nullptr, D.n, alpha));
    const std::vector<float> pred = predict(cpu(2), m, D, tl::GbdtOutput::Raw);
    double below = 0;
    for (std::int64_t i = 0; i < D.n; ++i) below += D.y[i] <= pred[i];
    EXPECT_NEAR(below / D.n, alpha, 0.03);
    EXPECT_LT(info.train_loss.back(), 0.8 * info.train_loss.front());
  }
}

// MAE is Quantile(1/2): the same model, bit for bit, and exactly twice its loss.
TEST(GbdtPinball, MaeIsQuantileOneHalf) {
  const Data D = make_data(6000, 5, GbdtLoss::MAE, true, 42);
  std::vector<double> w(static_cast<std::size_t>(D.n));
  for (std::int64_t i = 0; i < D.n; ++i) w[i] = 0.5 + (i % 3);
  GbdtParams q = params(GbdtLoss::Quantile, 15, 5);
  q.loss_param = 0.5;
  tl::GbdtFitInfo im, iq;
  const GbdtModel a = fit(cpu(2), D, params(GbdtLoss::MAE, 15, 5), &w, &D, &im);
  const GbdtModel b = fit(cpu(2), D, q, &w, &D, &iq);
  expect_same_model(a, b);
  for (std::size_t t = 0; t < im.train_loss.size(); ++t) {
    EXPECT_EQ(im.train_loss[t], 2 * iq.train_loss[t]);
    EXPECT_EQ(im.eval_loss[t], 2 * iq.eval_loss[t]);
  }
  // Separating arm: another alpha gives other trees.
  q.loss_param = 0.6;
  EXPECT_FALSE(same_bits_vec(a.leaf_values, fit(cpu(2), D, q).leaf_values));
}

TEST(GbdtPinball, RejectsAlphaOutsideTheOpenUnitInterval) {
  const Data D = make_data(100, 4, GbdtLoss::Quantile, false, 43);
  for (double a : {0.0, 1.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    GbdtParams p = params(GbdtLoss::Quantile, 2, 2);
    p.loss_param = a;
    try {
      fit(cpu(1), D, p);
      ADD_FAILURE() << "alpha " << a << " accepted";
    } catch (const tl::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("alpha"), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------------------
// Eval metrics and the per-round callback
// ---------------------------------------------------------------------------
// Brute-force weighted AUC over all (positive, negative) pairs, ties half.
double auc_brute(const std::vector<double>& s, const std::vector<double>& y, const std::vector<double>* w,
                 double tie_credit = 0.5) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = 0; j < s.size(); ++j) {
      if (!(y[i] > 0.5) || y[j] > 0.5) continue;
      const double ww = (w ? (*w)[i] : 1.0) * (w ? (*w)[j] : 1.0);
      den += ww;
      num += ww * (s[i] > s[j] ? 1.0 : (s[i] == s[j] ? tie_credit : 0.0));
    }
  return num / den;
}

TEST(GbdtMetric, AucMatchesPairCountingWithTiesAndWeights) {
  std::mt19937_64 rng(9);
  for (int rep = 0; rep < 20; ++rep) {
    const std::size_t n = 20 + rng() % 200;
    std::vector<double> s(n), y(n), w(n);
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = static_cast<double>(static_cast<int>(rng() % 7)) * 0.25 - 0.5;  // heavy ties
      y[i] = (rng() % 3 == 0) ? 1.0 : 0.0;
      w[i] = 0.5 + (rng() % 4);
    }
    y[0] = 1.0;
    y[1] = 0.0;
    const auto m = static_cast<std::int64_t>(n);
    EXPECT_NEAR(tl::gbdt_metric(tl::GbdtMetric::AUC, GbdtLoss::Logloss, 1, s.data(), y.data(), nullptr, m),
                auc_brute(s, y, nullptr), 1e-12);
    const double got = tl::gbdt_metric(tl::GbdtMetric::AUC, GbdtLoss::Logloss, 1, s.data(), y.data(), w.data(), m);
    EXPECT_NEAR(got, auc_brute(s, y, &w), 1e-12);
    // Separating arm: on this fixture, crediting ties 0 or 1 gives another value.
    EXPECT_GT(std::fabs(auc_brute(s, y, &w, 0.0) - got), 1e-3);
    EXPECT_GT(std::fabs(auc_brute(s, y, &w, 1.0) - got), 1e-3);
    // The order of the rows does not matter (bit for bit).
    std::vector<std::size_t> perm(n);
    for (std::size_t i = 0; i < n; ++i) perm[i] = (i * 7919) % n;
    std::sort(perm.begin(), perm.end());
    std::reverse(perm.begin(), perm.end());
    std::vector<double> s2(n), y2(n), w2(n);
    for (std::size_t i = 0; i < n; ++i) s2[i] = s[perm[i]], y2[i] = y[perm[i]], w2[i] = w[perm[i]];
    const double got2 = tl::gbdt_metric(tl::GbdtMetric::AUC, GbdtLoss::Logloss, 1, s2.data(), y2.data(), w2.data(), m);
    EXPECT_NEAR(got2, got, 1e-12);
  }
  std::vector<double> s = {0.1, 0.2}, y1 = {1, 1};
  EXPECT_THROW(tl::gbdt_metric(tl::GbdtMetric::AUC, GbdtLoss::Logloss, 1, s.data(), y1.data(), nullptr, 2),
               tl::ValueError);
}

TEST(GbdtMetric, AccuracyRmseAndMae) {
  // Binary: class 1 where the margin is > 0.
  std::vector<double> raw = {0.5, -0.5, 0.0, 2.0}, y = {1, 1, 0, 0}, w = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(tl::gbdt_metric(tl::GbdtMetric::Accuracy, GbdtLoss::Logloss, 1, raw.data(), y.data(), nullptr, 4),
                   0.5);
  EXPECT_DOUBLE_EQ(tl::gbdt_metric(tl::GbdtMetric::Accuracy, GbdtLoss::Logloss, 1, raw.data(), y.data(), w.data(), 4),
                   (1.0 + 3.0) / 10.0);
  // MultiClass: the largest margin, the lower class on ties.
  std::vector<double> raw3 = {1, 1, 0, /**/ 0, 2, 1, /**/ 3, 0, 3}, y3 = {0, 2, 2};
  EXPECT_DOUBLE_EQ(
      tl::gbdt_metric(tl::GbdtMetric::Accuracy, GbdtLoss::MultiClass, 3, raw3.data(), y3.data(), nullptr, 3),
      1.0 / 3.0);
  // Regression: on the prediction (exp of the margin under a log link).
  std::vector<double> f = {1, 2, 3}, t = {1, 4, 0};
  EXPECT_DOUBLE_EQ(tl::gbdt_metric(tl::GbdtMetric::RMSE, GbdtLoss::RMSE, 1, f.data(), t.data(), nullptr, 3),
                   std::sqrt((0 + 4 + 9) / 3.0));
  EXPECT_DOUBLE_EQ(tl::gbdt_metric(tl::GbdtMetric::MAE, GbdtLoss::Quantile, 1, f.data(), t.data(), nullptr, 3),
                   (0 + 2 + 3) / 3.0);
  EXPECT_NEAR(tl::gbdt_metric(tl::GbdtMetric::MAE, GbdtLoss::Poisson, 1, f.data(), t.data(), nullptr, 3),
              (std::fabs(std::exp(1) - 1) + std::fabs(std::exp(2) - 4) + std::exp(3)) / 3.0, 1e-12);
  EXPECT_THROW(tl::gbdt_metric(tl::GbdtMetric::RMSE, GbdtLoss::Logloss, 1, f.data(), t.data(), nullptr, 3),
               tl::ValueError);
  EXPECT_THROW(tl::gbdt_metric(tl::GbdtMetric::Accuracy, GbdtLoss::RMSE, 1, f.data(), t.data(), nullptr, 3),
               tl::ValueError);
}

// Staged raw predictions of the first t + 1 trees on E.
std::vector<double> staged_raw(const GbdtModel& m, const Data& E, std::int64_t trees) {
  std::vector<double> acc(static_cast<std::size_t>(E.n * m.n_outputs));
  for (std::int64_t i = 0; i < E.n; ++i)
    for (int k = 0; k < m.n_outputs; ++k) acc[i * m.n_outputs + k] = m.base_score[k];
  tl::gbdt_predict_stage<float>(cpu(1), m, tl::MatrixView<const float>(E.X.data(), E.n, E.d), 0, trees, acc.data());
  return acc;
}

// The per-round metric is gbdt_metric of the eval set's predictions after
// that round; best_iteration and early stopping follow it (higher is better
// for AUC and Accuracy).
TEST(GbdtMetric, EvalMetricDrivesBestIterationAndEarlyStopping) {
  const Data D = make_data(3000, 5, GbdtLoss::Logloss, true, 51);
  const Data E = make_data(2000, 5, GbdtLoss::Logloss, true, 52);
  for (tl::GbdtMetric metric : {tl::GbdtMetric::AUC, tl::GbdtMetric::Accuracy}) {
    SCOPED_TRACE(tl::to_string(metric));
    GbdtParams p = params(GbdtLoss::Logloss, 300, 6);
    p.learning_rate = 0.3;
    p.eval_metric = metric;
    p.early_stopping_rounds = 15;
    tl::GbdtFitInfo info;
    const GbdtModel m = fit(cpu(2), D, p, nullptr, &E, &info);
    ASSERT_EQ(info.eval_metric.size(), info.eval_loss.size());
    ASSERT_EQ(info.eval_metric.size(), static_cast<std::size_t>(m.n_trees()));
    const auto best = std::max_element(info.eval_metric.begin(), info.eval_metric.end());
    EXPECT_EQ(info.best_iteration, best - info.eval_metric.begin());
    EXPECT_TRUE(info.stopped_early);
    EXPECT_EQ(m.n_trees(), info.best_iteration + 1 + p.early_stopping_rounds);
    for (std::int64_t t : {std::int64_t(0), info.best_iteration, m.n_trees() - 1}) {
      const auto raw = staged_raw(m, E, t + 1);
      EXPECT_EQ(info.eval_metric[t], tl::gbdt_metric(metric, GbdtLoss::Logloss, 1, raw.data(), E.y.data(), nullptr, E.n));
    }
    // Separating arm: the loss would pick another best round than the metric.
    const auto lbest = std::min_element(info.eval_loss.begin(), info.eval_loss.end()) - info.eval_loss.begin();
    if (metric == tl::GbdtMetric::AUC) {
      EXPECT_NE(lbest, info.best_iteration);
    }
  }
  // Regression metrics are lower-is-better.
  const Data R = make_data(3000, 5, GbdtLoss::RMSE, true, 53);
  const Data RE = make_data(1000, 5, GbdtLoss::RMSE, true, 54);
  GbdtParams p = params(GbdtLoss::RMSE, 40, 4);
  p.eval_metric = tl::GbdtMetric::MAE;
  tl::GbdtFitInfo info;
  fit(cpu(2), R, p, nullptr, &RE, &info);
  const auto best = std::min_element(info.eval_metric.begin(), info.eval_metric.end());
  EXPECT_EQ(info.best_iteration, best - info.eval_metric.begin());
  // Metric and loss must fit together.
  p = params(GbdtLoss::RMSE, 2, 2);
  p.eval_metric = tl::GbdtMetric::AUC;
  EXPECT_THROW(fit(cpu(1), R, p, nullptr, &RE), tl::ValueError);
  p = params(GbdtLoss::Logloss, 2, 2);
  p.eval_metric = tl::GbdtMetric::RMSE;
  EXPECT_THROW(fit(cpu(1), D, p, nullptr, &E), tl::ValueError);
}

struct Recorder {
  std::vector<int> rounds;
  std::vector<double> train, eval_loss, eval_metric;
  std::vector<std::vector<double>> raw;
};

tl::GbdtCallback recorder(Recorder& r, std::int64_t m, int D, int stop_after = -1) {
  return [&r, m, D, stop_after](tl::GbdtRound& info) {
    r.rounds.push_back(info.round);
    r.train.push_back(info.train_loss());
    EXPECT_EQ(info.train_loss(), r.train.back());  // computed once, cached
    if (info.has_eval) {
      r.eval_loss.push_back(info.eval_loss);
      r.eval_metric.push_back(info.eval_metric);
      const double* p = info.eval_raw();
      r.raw.emplace_back(p, p + m * D);
    }
    return info.round != stop_after;
  };
}

TEST(GbdtCallback, SeesEveryRoundAndCanStopTheFit) {
  const Data D = make_data(3000, 5, GbdtLoss::Logloss, true, 61);
  const Data E = make_data(1000, 5, GbdtLoss::Logloss, true, 62);
  GbdtParams p = params(GbdtLoss::Logloss, 12, 4);
  p.eval_metric = tl::GbdtMetric::AUC;
  Recorder r;
  tl::GbdtFitInfo info;
  tl::GbdtEvalSet<float> ev;
  ev.X = tl::MatrixView<const float>(E.X.data(), E.n, E.d);
  ev.y = E.y.data();
  const auto X = tl::MatrixView<const float>(D.X.data(), D.n, D.d);
  const GbdtModel m = tl::gbdt_fit<float>(cpu(2), X, D.y.data(), nullptr, p, ev, true, &info, recorder(r, E.n, 1));
  ASSERT_EQ(r.rounds.size(), 12u);
  for (int t = 0; t < 12; ++t) {
    EXPECT_EQ(r.rounds[t], t);
    EXPECT_EQ(r.train[t], info.train_loss[t]);
    EXPECT_EQ(r.eval_loss[t], info.eval_loss[t]);
    EXPECT_EQ(r.eval_metric[t], info.eval_metric[t]);
    EXPECT_TRUE(same_bits_vec(r.raw[t], staged_raw(m, E, t + 1)));
  }
  // Returning false after round 4 keeps 5 trees: the first 5 of the full fit.
  Recorder r2;
  tl::GbdtFitInfo info2;
  const GbdtModel m5 = tl::gbdt_fit<float>(cpu(2), X, D.y.data(), nullptr, p, ev, false, &info2, recorder(r2, E.n, 1, 4));
  EXPECT_EQ(m5.n_trees(), 5);
  EXPECT_TRUE(info2.stopped_by_callback);
  EXPECT_FALSE(info2.stopped_early);
  EXPECT_TRUE(same_bits_vec(std::vector<double>(m.leaf_values.begin(), m.leaf_values.begin() + 5 * 16), m5.leaf_values));
  // An exception leaves gbdt_fit.
  auto thrower = [](tl::GbdtRound& info) -> bool {
    if (info.round == 2) throw std::runtime_error("stop here");
    return true;
  };
  EXPECT_THROW(tl::gbdt_fit<float>(cpu(2), X, D.y.data(), nullptr, p, ev, false, nullptr, thrower), std::runtime_error);
}

TEST(GbdtCuda, PinballMetricsAndCallbackIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  struct Case {
    GbdtLoss loss;
    tl::GbdtMetric metric;
  };
  for (const Case& c : {Case{GbdtLoss::Logloss, tl::GbdtMetric::AUC}, Case{GbdtLoss::MultiClass, tl::GbdtMetric::Accuracy},
                        Case{GbdtLoss::Quantile, tl::GbdtMetric::MAE}, Case{GbdtLoss::MAE, tl::GbdtMetric::RMSE},
                        Case{GbdtLoss::Poisson, tl::GbdtMetric::RMSE}}) {
    SCOPED_TRACE(std::string(tl::to_string(c.loss)) + " " + tl::to_string(c.metric));
    const Data D = make_data(40001, 6, c.loss, true, 71);
    const Data E = make_data(5000, 6, c.loss, true, 72);
    std::vector<double> w(static_cast<std::size_t>(D.n));
    for (std::int64_t i = 0; i < D.n; ++i) w[i] = 0.25 + (i % 7) * 0.5;
    GbdtParams p = params(c.loss, 10, 6);
    p.eval_metric = c.metric;
    const int Dout = tl::gbdt_outputs(p.loss, p.n_classes);
    tl::GbdtEvalSet<float> ev;
    ev.X = tl::MatrixView<const float>(E.X.data(), E.n, E.d);
    ev.y = E.y.data();
    const auto X = tl::MatrixView<const float>(D.X.data(), D.n, D.d);
    Recorder rc, rg;
    tl::GbdtFitInfo ic, ig;
    const GbdtModel a = tl::gbdt_fit<float>(cpu(3), X, D.y.data(), w.data(), p, ev, true, &ic, recorder(rc, E.n, Dout));
    const GbdtModel b = tl::gbdt_fit<float>(gpu, X, D.y.data(), w.data(), p, ev, true, &ig, recorder(rg, E.n, Dout));
    expect_same_model(a, b);
    EXPECT_TRUE(same_bits_vec(ic.train_loss, ig.train_loss));
    EXPECT_TRUE(same_bits_vec(ic.eval_loss, ig.eval_loss));
    EXPECT_TRUE(same_bits_vec(ic.eval_metric, ig.eval_metric));
    EXPECT_EQ(ic.best_iteration, ig.best_iteration);
    ASSERT_EQ(rc.raw.size(), rg.raw.size());
    for (std::size_t t = 0; t < rc.raw.size(); ++t) EXPECT_TRUE(same_bits_vec(rc.raw[t], rg.raw[t]));
    EXPECT_TRUE(same_bits_vec(rc.train, rg.train));
  }
}

// ---------------------------------------------------------------------------
// Split constraints: min_child_weight, min_split_gain
// ---------------------------------------------------------------------------
// Rows of D per leaf of tree t (routing the training rows through the model).
std::vector<std::int64_t> leaf_rows(const GbdtModel& m, const Data& D, std::int64_t t) {
  std::vector<std::int64_t> so, lo;
  tl::gbdt::tree_offsets(m, &so, &lo);
  const int depth = m.tree_depth[t];
  std::vector<std::int64_t> count(std::size_t(1) << depth, 0);
  for (std::int64_t i = 0; i < D.n; ++i) {
    std::int64_t leaf = 0;
    for (int d = 0; d < depth; ++d)
      leaf |= static_cast<std::int64_t>(tl::gbdt::goes_right(D.X[i * D.d + m.split_feature[so[t] + d]],
                                                             m.split_border[so[t] + d], m.nan_mode == tl::GbdtNanMode::Max))
              << d;
    ++count[leaf];
  }
  return count;
}

// RMSE without weights: a leaf's hessian sum is its row count, so every
// leaf of every tree holds 0 or >= min_child_weight rows; without the
// constraint some leaf holds fewer (the separating arm).
TEST(GbdtConstraints, MinChildWeightBoundsEveryNonEmptyLeaf) {
  const Data D = make_data(3000, 5, GbdtLoss::RMSE, true, 81);
  const double mcw = 150.0;
  auto small_leaves = [&](const GbdtModel& m) {
    int small = 0;
    for (std::int64_t t = 0; t < m.n_trees(); ++t)
      for (std::int64_t c : leaf_rows(m, D, t)) small += c > 0 && c < mcw;
    return small;
  };
  GbdtParams p = params(GbdtLoss::RMSE, 15, 6);
  const GbdtModel free_fit = fit(cpu(2), D, p);
  EXPECT_GT(small_leaves(free_fit), 0);
  p.min_child_weight = mcw;
  const GbdtModel m = fit(cpu(2), D, p);
  m.validate();
  EXPECT_EQ(small_leaves(m), 0);
  EXPECT_FALSE(same_bits_vec(free_fit.leaf_values, m.leaf_values));
  // (Trees still reach max_depth here: a level can always repeat an earlier
  // split, whose children in every leaf are the leaf itself and an empty one.)
  expect_same_model(m, fit(cpu(1), D, p));
  expect_same_model(m, fit(cpu(5), D, p));
  // A huge value leaves no admissible split: every tree is one leaf.
  p.min_child_weight = 1e9;
  const GbdtModel stump = fit(cpu(2), D, p);
  EXPECT_EQ(stump.tree_depth, std::vector<std::int32_t>(15, 0));
}

// Every kept level scored above min_split_gain; trees stop at the first
// level that does not; without the constraint some levels score lower.
TEST(GbdtConstraints, MinSplitGainStopsTheTree) {
  const Data D = make_data(3000, 5, GbdtLoss::Logloss, true, 82);
  GbdtParams p = params(GbdtLoss::Logloss, 25, 6);
  const GbdtModel free_fit = fit(cpu(2), D, p);
  const double msg = 2.0;
  int low = 0;
  for (double g : free_fit.split_gain) low += !(g > msg);
  EXPECT_GT(low, 0);
  p.min_split_gain = msg;
  tl::GbdtFitInfo info;
  const GbdtModel m = fit(cpu(2), D, p, nullptr, nullptr, &info);
  m.validate();
  for (double g : m.split_gain) EXPECT_GT(g, msg);
  EXPECT_LT(*std::min_element(m.tree_depth.begin(), m.tree_depth.end()), 6);
  EXPECT_FALSE(same_bits_vec(free_fit.leaf_values, m.leaf_values));
  expect_same_model(m, fit(cpu(3), D, p));
  // The recorded training loss still follows the trees (staged predictions agree).
  std::vector<double> acc(static_cast<std::size_t>(D.n), m.base_score[0]);
  tl::gbdt_predict_stage<float>(cpu(2), m, tl::MatrixView<const float>(D.X.data(), D.n, D.d), 0, m.n_trees(),
                                acc.data());
  std::vector<float> raw(acc.size());
  tl::gbdt_link(m.loss, 1, acc.data(), D.n, tl::GbdtOutput::Raw, raw.data());
  EXPECT_TRUE(same_bits_vec(raw, predict(cpu(1), m, D, tl::GbdtOutput::Raw)));
  // min_split_gain 0: only levels of positive score.
  p.min_split_gain = 0.0;
  for (double g : fit(cpu(2), D, p).split_gain) EXPECT_GT(g, 0.0);
  // Defaults are no constraint: the same bits as before the options existed.
  GbdtParams q = params(GbdtLoss::Logloss, 25, 6);
  q.min_split_gain = -std::numeric_limits<double>::infinity();
  q.min_child_weight = 0.0;
  expect_same_model(free_fit, fit(cpu(2), D, q));
}

TEST(GbdtConstraints, RejectsBadValues) {
  const Data D = make_data(100, 4, GbdtLoss::Logloss, false, 83);
  for (double v : {-1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    GbdtParams p = params(GbdtLoss::Logloss, 2, 2);
    p.min_child_weight = v;
    EXPECT_THROW(fit(cpu(1), D, p), tl::ValueError);
  }
  for (double v : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    GbdtParams p = params(GbdtLoss::Logloss, 2, 2);
    p.min_split_gain = v;
    EXPECT_THROW(fit(cpu(1), D, p), tl::ValueError);
  }
}

TEST(GbdtCuda, ConstraintsIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::MultiClass, GbdtLoss::Quantile}) {
    for (int which = 0; which < 3; ++which) {
      SCOPED_TRACE(std::string(tl::to_string(loss)) + " case " + std::to_string(which));
      const Data D = make_data(40001, 6, loss, true, 91);
      const Data E = make_data(3000, 6, loss, true, 92);
      GbdtParams p = params(loss, 10, 6);
      if (which != 1) p.min_child_weight = loss == GbdtLoss::Quantile ? 400.0 : 20.0;
      if (which != 0) {
        // A threshold that stops some levels: the 30% quantile of a free fit's level scores.
        std::vector<double> g = fit(cpu(2), D, params(loss, 10, 6)).split_gain;
        std::sort(g.begin(), g.end());
        p.min_split_gain = g[g.size() * 3 / 10];
      }
      tl::GbdtFitInfo ic, ig;
      const GbdtModel a = fit(cpu(3), D, p, nullptr, &E, &ic);
      const GbdtModel b = fit(gpu, D, p, nullptr, &E, &ig);
      expect_same_model(a, b);
      EXPECT_TRUE(same_bits_vec(ic.train_loss, ig.train_loss));
      EXPECT_TRUE(same_bits_vec(ic.eval_loss, ig.eval_loss));
      EXPECT_TRUE(same_bits_vec(predict(cpu(2), a, E, tl::GbdtOutput::Raw), predict(gpu, b, E, tl::GbdtOutput::Raw)));
      if (which != 0) {
        EXPECT_LT(*std::min_element(a.tree_depth.begin(), a.tree_depth.end()), 6) << "the fixture must stop trees";
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Depthwise trees
// ---------------------------------------------------------------------------
namespace {

// y = x0 > 0 ? x1 > -1 : x2 > 1: x0 splits the root, then its two halves
// want different features, which one oblivious level cannot give them.
Data branching_data(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  Data D{n, 4, std::vector<float>(static_cast<std::size_t>(n * 4)), std::vector<double>(static_cast<std::size_t>(n))};
  for (std::int64_t i = 0; i < n; ++i) {
    for (int j = 0; j < 4; ++j) D.X[i * 4 + j] = static_cast<float>(nd(rng));
    const float* x = D.X.data() + i * 4;
    D.y[i] = (x[0] > 0 ? x[1] > -1.0f : x[2] > 1.0f) ? 1.0 : 0.0;
  }
  return D;
}

GbdtParams depthwise(GbdtParams p) {
  p.grow_policy = tl::GbdtGrowPolicy::Depthwise;
  return p;
}

// The leaf of row i in the per-node tree whose splits start at entry so, by
// walking the model's layout (GbdtModel's comment), written out independently
// of the library's prediction.
std::int64_t row_leaf(const GbdtModel& m, const Data& D, std::int64_t i, std::int64_t so, int depth) {
  std::int64_t node = 0, leaf = 0;  // node: index within the tree, level-major
  for (int l = 0; l < depth; ++l) {
    const int f = m.split_feature[so + node];
    const double x = D.X[i * D.d + (f < 0 ? 0 : f)];
    const bool nan_right = m.nan_mode == tl::GbdtNanMode::Learned ? m.split_nan_right[so + node] != 0
                                                                  : m.nan_mode == tl::GbdtNanMode::Max;
    const bool right = f >= 0 && (std::isnan(x) ? nan_right : x > m.split_border[so + node]);
    if (right) leaf += std::int64_t(1) << l;
    node = ((std::int64_t(2) << l) - 1) + leaf;  // the next level's node of this prefix
  }
  return leaf;
}

// The raw margin of every row of D (per-node trees), by row_leaf.
std::vector<double> walk(const GbdtModel& m, const Data& D) {
  std::vector<double> out(static_cast<std::size_t>(D.n * m.n_outputs));
  for (std::int64_t i = 0; i < D.n; ++i) {
    for (int k = 0; k < m.n_outputs; ++k) out[i * m.n_outputs + k] = m.base_score[k];
    std::int64_t so = 0, lo = 0;
    for (std::int64_t t = 0; t < m.n_trees(); ++t) {
      const int depth = m.tree_depth[t];
      const std::int64_t leaf = row_leaf(m, D, i, so, depth);
      for (int k = 0; k < m.n_outputs; ++k) out[i * m.n_outputs + k] += m.leaf_values[lo + leaf * m.n_outputs + k];
      so += (std::int64_t(1) << depth) - 1;
      lo += (std::int64_t(1) << depth) * m.n_outputs;
    }
  }
  return out;
}

}  // namespace

TEST(GbdtDepthwise, NodesChooseTheirOwnSplits) {
  const Data D = branching_data(20000, 71);
  GbdtParams p = params(GbdtLoss::Logloss, 10, 2);
  p.learning_rate = 0.5;
  tl::GbdtFitInfo id, is;
  const GbdtModel dw = fit(cpu(2), D, depthwise(p), nullptr, nullptr, &id);
  const GbdtModel sym = fit(cpu(2), D, p, nullptr, nullptr, &is);
  dw.validate();
  EXPECT_EQ(dw.grow_policy, tl::GbdtGrowPolicy::Depthwise);
  ASSERT_EQ(dw.tree_depth[0], 2);
  ASSERT_EQ(dw.split_feature.size(), static_cast<std::size_t>(3 * dw.n_trees()));
  // The first tree: the root on x0, its children on x1 (right) and x2 (left).
  EXPECT_EQ(dw.split_feature[0], 0);
  EXPECT_EQ(dw.split_feature[1], 2);
  EXPECT_EQ(dw.split_feature[2], 1);
  EXPECT_LT(id.train_loss.back(), 0.8 * is.train_loss.back());
}

TEST(GbdtDepthwise, PredictionWalksTheNodes) {
  for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::MultiClass}) {
    for (auto mode : {tl::GbdtNanMode::Min, tl::GbdtNanMode::Max, tl::GbdtNanMode::Learned}) {
      SCOPED_TRACE(std::string(tl::to_string(loss)) + " " + tl::to_string(mode));
      const Data D = make_data(5000, 6, loss, true, 73);
      GbdtParams p = depthwise(params(loss, 8, 5));
      p.nan_mode = mode;
      p.min_child_weight = 15.0;  // nodes that do not split
      const GbdtModel m = fit(cpu(2), D, p);
      EXPECT_NE(std::count(m.split_feature.begin(), m.split_feature.end(), -1), 0) << "the fixture needs idle nodes";
      if (mode == tl::GbdtNanMode::Learned) {
        EXPECT_NE(std::count(m.split_nan_right.begin(), m.split_nan_right.end(), 1), 0) << "no NaN sent right";
        EXPECT_NE(std::count(m.split_nan_right.begin(), m.split_nan_right.end(), 0), 0);
      }
      const std::vector<double> ref = walk(m, D);
      std::vector<double> acc(static_cast<std::size_t>(D.n * m.n_outputs));
      for (std::int64_t i = 0; i < D.n; ++i)
        for (int k = 0; k < m.n_outputs; ++k) acc[i * m.n_outputs + k] = m.base_score[k];
      tl::gbdt_predict_stage<float>(cpu(2), m, tl::MatrixView<const float>(D.X.data(), D.n, D.d), 0, m.n_trees(),
                                    acc.data());
      EXPECT_TRUE(same_bits_vec(ref, acc));
    }
  }
}

// Trees are grown to max_depth and cut after their last split: the cut
// model predicts, to the bit, what the fit applied to the eval set.
TEST(GbdtDepthwise, CutTreesPredictWhatTheFitApplied) {
  for (auto mode : {tl::GbdtNanMode::Min, tl::GbdtNanMode::Learned}) {
  SCOPED_TRACE(tl::to_string(mode));
  const Data D = make_data(6000, 5, GbdtLoss::RMSE, true, 75);
  const Data E = make_data(1500, 5, GbdtLoss::RMSE, true, 76);
  GbdtParams p = depthwise(params(GbdtLoss::RMSE, 12, 7));
  p.min_split_gain = 2.0e5;
  p.nan_mode = mode;
  Recorder r;
  tl::GbdtEvalSet<float> ev;
  ev.X = tl::MatrixView<const float>(E.X.data(), E.n, E.d);
  ev.y = E.y.data();
  const GbdtModel m = tl::gbdt_fit<float>(cpu(2), tl::MatrixView<const float>(D.X.data(), D.n, D.d), D.y.data(),
                                          nullptr, p, ev, false, nullptr, recorder(r, E.n, 1));
  m.validate();
  EXPECT_LT(*std::min_element(m.tree_depth.begin(), m.tree_depth.end()), 7) << "the fixture must cut trees";
  EXPECT_GT(*std::max_element(m.tree_depth.begin(), m.tree_depth.end()), 1);
  for (int t = 0; t < 12; ++t) EXPECT_TRUE(same_bits_vec(r.raw[t], staged_raw(m, E, t + 1))) << t;
  for (std::size_t s = 0; s < m.split_feature.size(); ++s)
    EXPECT_TRUE(m.split_feature[s] < 0 || m.split_gain[s] > p.min_split_gain) << s;
  if (mode == tl::GbdtNanMode::Learned) {  // the fit's bins and the prediction's values agree on NaN sent right
    EXPECT_NE(std::count(m.split_nan_right.begin(), m.split_nan_right.end(), 1), 0);
  }
  }
}

// The training rows' leaves (moved level by level from their bins) are the
// leaves the trees' own walk gives them (the eval set's path, here the same
// rows): the training loss of every round equals the eval loss, bit for bit,
// with nodes that do not split (min_split_gain) and NaN sent either way.
TEST(GbdtDepthwise, TrainRowsGoWhereTheTreesSendThem) {
  for (auto mode : {tl::GbdtNanMode::Min, tl::GbdtNanMode::Learned}) {
    SCOPED_TRACE(tl::to_string(mode));
    const Data D = make_data(6000, 5, GbdtLoss::RMSE, true, 75);
    GbdtParams p = depthwise(params(GbdtLoss::RMSE, 12, 7));
    p.min_split_gain = 2.0e5;
    p.nan_mode = mode;
    tl::GbdtFitInfo info;
    const GbdtModel m = fit(cpu(2), D, p, nullptr, &D, &info);
    EXPECT_LT(*std::min_element(m.tree_depth.begin(), m.tree_depth.end()), 7) << "the fixture must cut trees";
    ASSERT_EQ(info.train_loss.size(), 12u);
    ASSERT_EQ(info.eval_loss.size(), 12u);
    for (int t = 0; t < 12; ++t) EXPECT_TRUE(tltest::same_bits(info.train_loss[t], info.eval_loss[t])) << t;
  }
}

TEST(GbdtDepthwise, BitsDoNotDependOnThreadCount) {
  for (GbdtLoss loss : {GbdtLoss::Logloss, GbdtLoss::MultiClass}) {
    for (auto mode : {tl::GbdtNanMode::Min, tl::GbdtNanMode::Learned}) {
      const Data D = make_data(70000, 5, loss, true, 77);
      GbdtParams p = depthwise(params(loss, 5, 6));
      p.nan_mode = mode;
      const GbdtModel ref = fit(cpu(1), D, p);
      for (int t : {2, 7}) {
        SCOPED_TRACE(std::to_string(t) + " " + tl::to_string(mode));
        expect_same_model(ref, fit(cpu(t), D, p));
      }
    }
  }
}

TEST(GbdtDepthwise, ModelValidationKnowsTheLayout) {
  const Data D = make_data(3000, 5, GbdtLoss::Logloss, false, 79);
  GbdtModel m = fit(cpu(2), D, depthwise(params(GbdtLoss::Logloss, 3, 3)));
  m.validate();
  GbdtModel sym = m;
  sym.grow_policy = tl::GbdtGrowPolicy::SymmetricTree;  // the same arrays read as oblivious trees
  EXPECT_THROW(sym.validate(), tl::ValueError);
  GbdtModel bad = m;
  bad.split_bin[0] = 0;
  bad.split_feature[0] = -1;  // an idle node must say so in every array
  EXPECT_THROW(bad.validate(), tl::ValueError);
}

// nan_mode Learned. Feature 0 carries the label (y = x0 > 0) and is NaN on
// 30% of the rows, whose labels follow nan_label (1: NaN rows act like high
// values, 0: like low ones). A stump must send NaN where its rows belong:
// right for 1 (Min cannot), left for 0 (Max cannot), which Learned does.
Data nan_stump_data(std::int64_t n, double nan_label, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  Data D{n, 2, std::vector<float>(static_cast<std::size_t>(n * 2)), std::vector<double>(static_cast<std::size_t>(n))};
  for (std::int64_t i = 0; i < n; ++i) {
    D.X[i * 2] = static_cast<float>(nd(rng));
    D.X[i * 2 + 1] = static_cast<float>(nd(rng));
    D.y[i] = D.X[i * 2] > 0 ? 1.0 : 0.0;
    if (rng() % 10 < 3) {
      D.X[i * 2] = std::numeric_limits<float>::quiet_NaN();
      D.y[i] = rng() % 20 == 0 ? 1.0 - nan_label : nan_label;
    }
  }
  return D;
}

TEST(GbdtNanLearned, EachSplitSendsNanWhereItsRowsBelong) {
  for (double nan_label : {1.0, 0.0}) {
    SCOPED_TRACE(nan_label);
    const Data D = nan_stump_data(20000, nan_label, 81);
    GbdtParams p = depthwise(params(GbdtLoss::Logloss, 3, 1));
    p.learning_rate = 0.5;
    double loss[4] = {0, 0, 0, 0};
    GbdtModel learned;
    for (auto mode : {tl::GbdtNanMode::Min, tl::GbdtNanMode::Max, tl::GbdtNanMode::Learned}) {
      p.nan_mode = mode;
      tl::GbdtFitInfo info;
      GbdtModel m = fit(cpu(2), D, p, nullptr, nullptr, &info);
      m.validate();
      loss[static_cast<int>(mode)] = info.train_loss.back();
      if (mode == tl::GbdtNanMode::Learned) learned = std::move(m);
      else
        EXPECT_TRUE(m.split_nan_right.empty());
    }
    ASSERT_EQ(learned.split_nan_right.size(), learned.split_feature.size());
    EXPECT_EQ(learned.split_feature[0], 0);
    EXPECT_EQ(learned.split_nan_right[0], nan_label == 1.0 ? 1 : 0);
    // The learned direction is as good as the right fixed one, and better than the wrong one.
    const double right = loss[static_cast<int>(nan_label == 1.0 ? tl::GbdtNanMode::Max : tl::GbdtNanMode::Min)];
    const double wrong = loss[static_cast<int>(nan_label == 1.0 ? tl::GbdtNanMode::Min : tl::GbdtNanMode::Max)];
    const double got = loss[static_cast<int>(tl::GbdtNanMode::Learned)];
    EXPECT_LE(got, right * (1 + 1e-12));
    EXPECT_LT(got, 0.8 * wrong);
    // Prediction sends NaN the learned way: the NaN rows' predicted class is nan_label.
    const std::vector<float> pr = predict(cpu(2), learned, D, tl::GbdtOutput::Probability);
    for (std::int64_t i = 0; i < D.n; ++i)
      if (std::isnan(D.X[i * 2])) {
        ASSERT_EQ(pr[i] > 0.5f, nan_label == 1.0) << i;
      }
  }
}

TEST(GbdtNanLearned, RejectsObliviousTreesAndInconsistentModels) {
  const Data D = nan_stump_data(3000, 1.0, 83);
  GbdtParams p = params(GbdtLoss::Logloss, 3, 2);
  p.nan_mode = tl::GbdtNanMode::Learned;
  EXPECT_THROW(fit(cpu(2), D, p), tl::ValueError);  // SymmetricTree
  p.grow_policy = tl::GbdtGrowPolicy::Depthwise;
  const GbdtModel m = fit(cpu(2), D, p);
  m.validate();
  ASSERT_EQ(m.split_nan_right[0], 1);
  GbdtModel bad = m;
  bad.split_nan_right.pop_back();
  EXPECT_THROW(bad.validate(), tl::ValueError);
  bad = m;
  bad.split_nan_right[0] = 2;
  EXPECT_THROW(bad.validate(), tl::ValueError);
  bad = m;
  bad.split_bin[0] = 0;  // border 0 of a feature with NaN separates NaN from every value: NaN stays left
  bad.split_border[0] = bad.borders[bad.border_offsets[bad.split_feature[0]]];
  EXPECT_THROW(bad.validate(), tl::ValueError);
  bad = m;
  bad.nan_mode = tl::GbdtNanMode::Min;  // flags belong to Learned models only
  EXPECT_THROW(bad.validate(), tl::ValueError);
  EXPECT_THROW(tl::parse_gbdt_nan_mode("learned"), tl::ValueError);
  EXPECT_EQ(tl::parse_gbdt_nan_mode("Learned"), tl::GbdtNanMode::Learned);
}

// Per tree, the number of rows of weight > 0 (w nullptr: every row) in each
// leaf, by walking the layout (leaf index j of 2^depth).
std::vector<std::vector<std::int64_t>> leaf_counts(const GbdtModel& m, const Data& D, const std::vector<double>* w) {
  std::vector<std::vector<std::int64_t>> out;
  std::int64_t so = 0;
  for (std::int64_t t = 0; t < m.n_trees(); ++t) {
    const int depth = m.tree_depth[t];
    std::vector<std::int64_t> c(std::size_t(1) << depth, 0);
    for (std::int64_t i = 0; i < D.n; ++i)
      if (!w || (*w)[i] > 0.0) ++c[row_leaf(m, D, i, so, depth)];
    out.push_back(std::move(c));
    so += (std::int64_t(1) << depth) - 1;
  }
  return out;
}

// min_data_in_leaf: every leaf that holds rows of weight > 0 holds at least
// min_data of them (rows of weight 0 do not count), and the bound binds.
TEST(GbdtConstraints, MinDataInLeafBoundsEveryLeaf) {
  const Data D = make_data(6000, 6, GbdtLoss::Logloss, true, 85);
  std::vector<double> w(static_cast<std::size_t>(D.n));
  for (std::int64_t i = 0; i < D.n; ++i) w[i] = i % 4 == 0 ? 0.0 : 1.0 + (i % 3);
  for (auto policy : {tl::GbdtGrowPolicy::Depthwise, tl::GbdtGrowPolicy::Lossguide}) {
    const std::vector<double>* none = nullptr;
    for (const std::vector<double>* wp : {none, static_cast<const std::vector<double>*>(&w)}) {
      SCOPED_TRACE(std::string(tl::to_string(policy)) + (wp ? " weighted" : ""));
      GbdtParams p = params(GbdtLoss::Logloss, 6, 7);
      p.grow_policy = policy;
      p.max_leaves = 40;
      std::int64_t smallest_free = D.n;
      for (const auto& c : leaf_counts(fit(cpu(2), D, p, wp), D, wp))
        for (std::int64_t v : c)
          if (v > 0) smallest_free = std::min(smallest_free, v);
      ASSERT_LT(smallest_free, 60) << "the fixture must have small leaves without the constraint";
      p.min_data_in_leaf = 60;
      const GbdtModel m = fit(cpu(2), D, p, wp);
      m.validate();
      std::int64_t smallest = D.n, splits = 0;
      for (const auto& c : leaf_counts(m, D, wp))
        for (std::int64_t v : c)
          if (v > 0) smallest = std::min(smallest, v);
      for (int f : m.split_feature) splits += f >= 0;
      EXPECT_GE(smallest, 60);
      EXPECT_GT(splits, 6 * 4) << "the constraint must leave trees that split";
      expect_same_model(m, fit(cpu(3), D, p, wp));  // thread counts: the same bits
    }
  }
}

TEST(GbdtConstraints, MinDataInLeafNeedsPerNodeTrees) {
  const Data D = make_data(2000, 5, GbdtLoss::Logloss, false, 87);
  GbdtParams p = params(GbdtLoss::Logloss, 2, 3);
  p.min_data_in_leaf = 5;
  EXPECT_THROW(fit(cpu(2), D, p), tl::ValueError);  // SymmetricTree
  p.grow_policy = tl::GbdtGrowPolicy::Depthwise;
  p.min_data_in_leaf = 0;
  EXPECT_THROW(fit(cpu(2), D, p), tl::ValueError);
  p.min_data_in_leaf = 1;  // the default: the same model as without the count channel
  GbdtParams q = p;
  q.min_data_in_leaf = 2;  // rows are never alone in a leaf here: counting changes nothing
  const GbdtModel a = fit(cpu(2), D, p);
  for (const auto& c : leaf_counts(a, D, nullptr))
    for (std::int64_t v : c) ASSERT_TRUE(v == 0 || v >= 2) << "the fixture needs no single-row leaf";
  expect_same_model(a, fit(cpu(2), D, q));
}

TEST(GbdtCuda, DepthwiseIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  struct Case {
    GbdtLoss loss;
    std::int64_t n;
    int depth;
    double min_child_weight;
    bool gain_threshold;  // min_split_gain at the 30% quantile of a free fit's node gains
    bool weighted;
    bool learned = false;  // nan_mode Learned
    int min_data = 1;      // min_data_in_leaf
  };
  for (const Case& c : {Case{GbdtLoss::Logloss, 40001, 6, 0.0, false, false},
                        Case{GbdtLoss::MultiClass, 5000, 5, 0.0, true, true},
                        Case{GbdtLoss::RMSE, 70001, 8, 0.0, true, true},
                        Case{GbdtLoss::Quantile, 33000, 6, 400.0, false, false},
                        Case{GbdtLoss::Logloss, 3000, 10, 5.0, false, false},
                        Case{GbdtLoss::Logloss, 40001, 6, 0.0, false, true, true},
                        Case{GbdtLoss::MultiClass, 5000, 5, 2.0, true, false, true},
                        Case{GbdtLoss::Logloss, 30001, 7, 0.0, false, true, false, 300},
                        Case{GbdtLoss::RMSE, 20001, 6, 0.0, true, true, true, 150}}) {
    SCOPED_TRACE(std::string(tl::to_string(c.loss)) + " n=" + std::to_string(c.n) + " depth=" +
                 std::to_string(c.depth) + (c.learned ? " Learned" : "") + " min_data=" + std::to_string(c.min_data));
    const Data D = make_data(c.n, 6, c.loss, true, 300 + c.n);
    const Data E = make_data(c.n / 3 + 1, 6, c.loss, true, 400 + c.n);
    std::vector<double> w(static_cast<std::size_t>(c.n));
    for (std::int64_t i = 0; i < c.n; ++i) w[i] = 0.25 + (i % 7) * 0.5;
    GbdtParams p = depthwise(params(c.loss, 8, c.depth));
    p.min_child_weight = c.min_child_weight;
    if (c.learned) p.nan_mode = tl::GbdtNanMode::Learned;
    p.min_data_in_leaf = c.min_data;
    if (c.gain_threshold) {
      std::vector<double> g;
      for (double v : fit(cpu(2), D, p).split_gain)
        if (v > 0.0) g.push_back(v);
      std::sort(g.begin(), g.end());
      p.min_split_gain = g[g.size() * 3 / 10];
    }
    const auto [a, b] = expect_fits_identical(gpu, D, E, p, c.weighted ? &w : nullptr);
    EXPECT_EQ(b.grow_policy, tl::GbdtGrowPolicy::Depthwise);
    if (c.learned) {
      EXPECT_NE(std::count(a.split_nan_right.begin(), a.split_nan_right.end(), 1), 0);
    }
    if (c.gain_threshold || c.min_child_weight > 0.0) {
      EXPECT_NE(std::count(a.split_feature.begin(), a.split_feature.end(), -1), 0) << "the fixture needs idle nodes";
    }
    EXPECT_TRUE(same_bits_vec(predict(cpu(2), a, E, tl::GbdtOutput::Raw), predict(gpu, a, E, tl::GbdtOutput::Raw)));
  }
}

// Lossguide's choice on a grown depth-3 tree. Slots: 0 the root; 1, 2 level 1
// (prefix 0, 1); 3..6 level 2 (prefix 0..3): node (1, p)'s children are
// (2, p) and (2, p + 2). Node 4 does not split.
TEST(GbdtLossguide, KeepsTheBestFirstSplits) {
  const std::int32_t sf[7] = {0, 1, 1, 2, -1, 2, 0};
  const double sg[7] = {10, 3, 5, 1, 0, 4, 4};
  std::vector<std::uint8_t> keep;
  std::vector<std::int64_t> map;
  // Root (10), then node 2 (5), then node 6 (4, above node 1's 3).
  tl::gbdt_lossguide_keep(sf, sg, 3, 4, keep, map);
  EXPECT_EQ(keep, (std::vector<std::uint8_t>{1, 0, 1, 0, 0, 0, 1}));
  // Leaf j (bit l: right at level l) stops at its first node without a kept split.
  EXPECT_EQ(map, (std::vector<std::int64_t>{0, 1, 0, 3, 0, 1, 0, 7}));
  tl::gbdt_lossguide_keep(sf, sg, 3, 5, keep, map);
  EXPECT_EQ(keep, (std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 1}));
  // No limit: every node reachable through splits that can split; never node 4.
  tl::gbdt_lossguide_keep(sf, sg, 3, 0, keep, map);
  EXPECT_EQ(keep, (std::vector<std::uint8_t>{1, 1, 1, 1, 0, 1, 1}));
  EXPECT_EQ(map, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 1, 6, 7}));
  // Equal gains: the lower slot first.
  const double tie[7] = {10, 5, 5, 1, 0, 4, 4};
  tl::gbdt_lossguide_keep(sf, tie, 3, 3, keep, map);
  EXPECT_EQ(keep, (std::vector<std::uint8_t>{1, 1, 0, 0, 0, 0, 0}));
  // A root that cannot split: one leaf.
  const std::int32_t none[3] = {-1, 0, 0};
  tl::gbdt_lossguide_keep(none, sg, 2, 8, keep, map);
  EXPECT_EQ(keep, (std::vector<std::uint8_t>{0, 0, 0}));
  EXPECT_EQ(map, (std::vector<std::int64_t>{0, 0, 0, 0}));
}

// Lossguide fits on both backends: the same cut trees (splits, gains, leaf
// values), predictions and eval losses, bit for bit. Evaluated on every
// tree: the fit moves rows by the host's leaf map on both backends.
TEST(GbdtCuda, LossguideIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  struct Case {
    GbdtLoss loss;
    std::int64_t n;
    int depth, max_leaves;
    bool weighted;
    bool learned = false;  // nan_mode Learned
    int min_data = 1;      // min_data_in_leaf
  };
  for (const Case& c : {Case{GbdtLoss::Logloss, 40001, 6, 31, false}, Case{GbdtLoss::MultiClass, 5000, 5, 6, true},
                        Case{GbdtLoss::RMSE, 70001, 8, 12, true}, Case{GbdtLoss::Logloss, 3000, 10, 2, false},
                        Case{GbdtLoss::RMSE, 50001, 7, 20, true, true},
                        Case{GbdtLoss::MultiClass, 12000, 6, 15, true, false, 200}}) {
    SCOPED_TRACE(std::string(tl::to_string(c.loss)) + " n=" + std::to_string(c.n) + " depth=" +
                 std::to_string(c.depth) + " max_leaves=" + std::to_string(c.max_leaves) +
                 (c.learned ? " Learned" : "") + " min_data=" + std::to_string(c.min_data));
    const Data D = make_data(c.n, 6, c.loss, true, 500 + c.n);
    const Data E = make_data(c.n / 3 + 1, 6, c.loss, true, 600 + c.n);
    std::vector<double> w(static_cast<std::size_t>(c.n));
    for (std::int64_t i = 0; i < c.n; ++i) w[i] = 0.25 + (i % 5) * 0.5;
    GbdtParams p = params(c.loss, 8, c.depth);
    p.grow_policy = tl::GbdtGrowPolicy::Lossguide;
    p.max_leaves = c.max_leaves;
    if (c.learned) p.nan_mode = tl::GbdtNanMode::Learned;
    p.min_data_in_leaf = c.min_data;
    const auto [a, b] = expect_fits_identical(gpu, D, E, p, c.weighted ? &w : nullptr);
    EXPECT_EQ(b.grow_policy, tl::GbdtGrowPolicy::Lossguide);
    if (c.learned) {
      EXPECT_NE(std::count(a.split_nan_right.begin(), a.split_nan_right.end(), 1), 0);
    }
    // Every tree at most max_leaves leaves, and the limit binds.
    std::vector<std::int64_t> so, lo;
    tl::gbdt::tree_offsets(a, &so, &lo);
    bool binds = false;
    for (std::int64_t t = 0; t < a.n_trees(); ++t) {
      std::int64_t splits = 0;
      for (std::int64_t k = so[t]; k < so[t + 1]; ++k) splits += a.split_feature[k] >= 0;
      EXPECT_LE(splits + 1, c.max_leaves);
      binds = binds || splits + 1 == c.max_leaves;
    }
    EXPECT_TRUE(binds);
    EXPECT_TRUE(same_bits_vec(predict(cpu(2), a, E, tl::GbdtOutput::Raw), predict(gpu, a, E, tl::GbdtOutput::Raw)));
  }
}
