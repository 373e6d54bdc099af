// Gradient-boosted trees: shared math, borders, fixed-point histograms, fits
// on the CPU backend, and CPU-versus-CUDA identity (skipped without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "ensemble/gbdt/gbdt_common.hpp"
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

// The tile split q = hi * 2^16 + lo used by the CUDA shared-memory histograms
// recombines exactly for the extreme values.
TEST(GbdtMath, LoHiSplitRecombinesExactly) {
  const std::int64_t lim = std::int64_t(1) << tl::gbdt::kQuantBits;
  for (std::int64_t q : {-lim, -lim + 1, std::int64_t(-65537), std::int64_t(-1), std::int64_t(0), std::int64_t(1),
                         std::int64_t(65535), std::int64_t(65536), lim - 1, lim}) {
    const unsigned lo = static_cast<unsigned>(q & 0xFFFF);
    const int hi = static_cast<int>(q >> tl::gbdt::kLoBits);
    EXPECT_EQ(static_cast<std::int64_t>(hi) * 65536 + lo, q);
    EXPECT_LE(std::abs(hi), 1 << (tl::gbdt::kQuantBits - tl::gbdt::kLoBits));
  }
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

// ---------------------------------------------------------------------------
// Fitting on the CPU
// ---------------------------------------------------------------------------
const GbdtLoss kAllLosses[] = {GbdtLoss::Logloss,     GbdtLoss::RMSE,    GbdtLoss::MultiClass,
                               GbdtLoss::CrossEntropy, GbdtLoss::MultiClassOneVsAll,
                               GbdtLoss::Poisson,     GbdtLoss::Tweedie, GbdtLoss::Huber};

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
  const GbdtModel m = fit(cpu(1), D, params(GbdtLoss::Logloss, 2, 2));
  std::vector<float> X3(30), out(10);
  EXPECT_THROW(tl::gbdt_predict<float>(cpu(1), m, tl::MatrixView<const float>(X3.data(), 10, 3), -1,
                                       tl::GbdtOutput::Raw, tl::MatrixView<float>(out.data(), 10, 1)),
               tl::ValueError);
}

// ---------------------------------------------------------------------------
// CPU versus CUDA (rule: identical)
// ---------------------------------------------------------------------------
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
                        Case{GbdtLoss::Huber, 5000, 6, true, tl::GbdtNanMode::Max, false}}) {
    SCOPED_TRACE(std::string(tl::to_string(c.loss)) + " n=" + std::to_string(c.n) + " depth=" +
                 std::to_string(c.depth));
    const Data D = make_data(c.n, 6, c.loss, c.nan, 100 + c.n);
    const Data E = make_data(c.n / 3 + 1, 6, c.loss, c.nan, 200 + c.n);
    std::vector<double> w(static_cast<std::size_t>(c.n));
    for (std::int64_t i = 0; i < c.n; ++i) w[i] = 0.25 + (i % 7) * 0.5;
    GbdtParams p = params(c.loss, 8, c.depth);
    p.nan_mode = c.mode;
    p.border_count = c.depth == 10 ? 255 : 128;
    tl::GbdtFitInfo ic, ig;
    const GbdtModel a = fit(cpu(3), D, p, c.weighted ? &w : nullptr, &E, &ic);
    const GbdtModel b = fit(gpu, D, p, c.weighted ? &w : nullptr, &E, &ig);
    expect_same_model(a, b);
    EXPECT_TRUE(same_bits_vec(ic.train_loss, ig.train_loss));
    EXPECT_TRUE(same_bits_vec(ic.eval_loss, ig.eval_loss));
    const bool log_link = c.loss == GbdtLoss::Poisson || c.loss == GbdtLoss::Tweedie;
    const bool classifier = !log_link && c.loss != GbdtLoss::RMSE && c.loss != GbdtLoss::Huber;
    for (auto kind : {tl::GbdtOutput::Raw, tl::GbdtOutput::Probability, tl::GbdtOutput::Exponent}) {
      if ((kind == tl::GbdtOutput::Probability && !classifier) || (kind == tl::GbdtOutput::Exponent && !log_link))
        continue;
      EXPECT_TRUE(same_bits_vec(predict(cpu(2), a, E, kind), predict(gpu, a, E, kind)));
    }
    std::vector<double> acc_c(static_cast<std::size_t>(E.n * a.n_outputs), 0.5), acc_g = acc_c;
    tl::gbdt_predict_stage<float>(cpu(2), a, tl::MatrixView<const float>(E.X.data(), E.n, E.d), 2, 5, acc_c.data());
    tl::gbdt_predict_stage<float>(gpu, a, tl::MatrixView<const float>(E.X.data(), E.n, E.d), 2, 5, acc_g.data());
    EXPECT_TRUE(same_bits_vec(acc_c, acc_g));
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
