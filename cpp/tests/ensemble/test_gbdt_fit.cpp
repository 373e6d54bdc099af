// Gradient-boosted trees: fits on the CPU backend (every loss, thread counts,
// staged prediction, weights, early stopping, parameter checks) and the
// CPU-versus-CUDA identity of fits and borders (skipped without a GPU).
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

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
// same code, chosen by the CPU (gbdt_cpu_gradients.cpp: std::fma as one
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
  std::vector<double> raw(acc.size()), prob(acc.size());
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
  std::vector<float> X3(30);
  std::vector<double> out(10);
  EXPECT_THROW(tl::gbdt_predict<float>(cpu(1), m, tl::MatrixView<const float>(X3.data(), 10, 3), -1,
                                       tl::GbdtOutput::Raw, tl::MatrixView<double>(out.data(), 10, 1)),
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
