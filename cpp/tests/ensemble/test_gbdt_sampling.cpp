// Gradient-boosted trees: bootstrap weights and the random subspace (rsm), on
// the CPU and against CUDA (skipped without a GPU).
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

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
