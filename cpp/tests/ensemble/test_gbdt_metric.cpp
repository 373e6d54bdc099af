// Gradient-boosted trees: pinball losses (MAE, Quantile), eval metrics and the
// per-round callback, on the CPU and against CUDA (skipped without a GPU).
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

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
    const std::vector<double> pred = predict(cpu(2), m, D, tl::GbdtOutput::Raw);
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
