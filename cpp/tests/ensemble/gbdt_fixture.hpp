// Fixtures shared by the gradient-boosted tree tests (test_gbdt_*.cpp): a
// synthetic data set per loss, fit/predict shorthands on float input, bit
// comparisons of models, and the CPU-versus-CUDA identity check.
#pragma once

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

namespace tl_test_gbdt {

using tl::GbdtLoss;
using tl::GbdtModel;
using tl::GbdtParams;

inline tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

inline std::int64_t ulp_distance(double a, double b) {
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

inline Data make_data(std::int64_t n, std::int64_t d, GbdtLoss loss, bool with_nan, std::uint64_t seed, int n_classes = 3) {
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

inline GbdtModel fit(const tl::Context& ctx, const Data& D, const GbdtParams& p, const std::vector<double>* w = nullptr,
              const Data* eval = nullptr, tl::GbdtFitInfo* info = nullptr) {
  tl::GbdtEvalSet<float> ev;
  if (eval) {
    ev.X = tl::MatrixView<const float>(eval->X.data(), eval->n, eval->d);
    ev.y = eval->y.data();
  }
  return tl::gbdt_fit<float>(ctx, tl::MatrixView<const float>(D.X.data(), D.n, D.d), D.y.data(),
                             w ? w->data() : nullptr, p, ev, true, info);
}

inline std::vector<double> predict(const tl::Context& ctx, const GbdtModel& m, const Data& D, tl::GbdtOutput kind) {
  std::vector<double> out(static_cast<std::size_t>(D.n * m.n_outputs));
  tl::gbdt_predict<float>(ctx, m, tl::MatrixView<const float>(D.X.data(), D.n, D.d), -1, kind,
                          tl::MatrixView<double>(out.data(), D.n, m.n_outputs));
  return out;
}

template <class V>
inline bool same_bits_vec(const V& a, const V& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
}

inline void expect_same_model(const GbdtModel& a, const GbdtModel& b) {
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
  EXPECT_EQ(a.leaf_count, b.leaf_count);
}

inline GbdtParams params(GbdtLoss loss, int trees = 20, int depth = 4) {
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

// Fits D (eval set E, weights w or nullptr) on the CPU and on `gpu` and
// expects the same bits: models, per-round losses, and staged predictions
// of trees [2, 5) on E. Returns (CPU model, GPU model).
inline std::pair<GbdtModel, GbdtModel> expect_fits_identical(const tl::Context& gpu, const Data& D, const Data& E,
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

// Staged raw predictions of the first t + 1 trees on E.
inline std::vector<double> staged_raw(const GbdtModel& m, const Data& E, std::int64_t trees) {
  std::vector<double> acc(static_cast<std::size_t>(E.n * m.n_outputs));
  for (std::int64_t i = 0; i < E.n; ++i)
    for (int k = 0; k < m.n_outputs; ++k) acc[i * m.n_outputs + k] = m.base_score[k];
  tl::gbdt_predict_stage<float>(cpu(1), m, tl::MatrixView<const float>(E.X.data(), E.n, E.d), 0, trees, acc.data());
  return acc;
}

struct Recorder {
  std::vector<int> rounds;
  std::vector<double> train, eval_loss, eval_metric;
  std::vector<std::vector<double>> raw;
};

inline tl::GbdtCallback recorder(Recorder& r, std::int64_t m, int D, int stop_after = -1) {
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

}  // namespace tl_test_gbdt
