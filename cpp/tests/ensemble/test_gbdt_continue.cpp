// Gradient-boosted trees: continuing a fit from a fitted model (gbdt_fit's
// init). Fitting n1 trees and continuing with n2 more gives the model of one
// fit of n1 + n2 trees, bit for bit, on the CPU (any thread count) and on
// CUDA (skipped without a GPU).
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

namespace {

struct ContinueCase {
  tl::GbdtGrowPolicy grow;
  GbdtLoss loss;
  tl::GbdtNanMode nan_mode;
};
const ContinueCase kContinueCases[] = {
    {tl::GbdtGrowPolicy::SymmetricTree, GbdtLoss::Logloss, tl::GbdtNanMode::Min},
    {tl::GbdtGrowPolicy::SymmetricTree, GbdtLoss::MultiClass, tl::GbdtNanMode::Max},
    {tl::GbdtGrowPolicy::Depthwise, GbdtLoss::RMSE, tl::GbdtNanMode::Min},
    {tl::GbdtGrowPolicy::Depthwise, GbdtLoss::Quantile, tl::GbdtNanMode::Learned},
    {tl::GbdtGrowPolicy::Lossguide, GbdtLoss::Logloss, tl::GbdtNanMode::Learned},
    {tl::GbdtGrowPolicy::Lossguide, GbdtLoss::MultiClass, tl::GbdtNanMode::Min},
};

std::string case_name(const ContinueCase& c) {
  return std::string(tl::to_string(c.grow)) + " " + tl::to_string(c.loss) + " " + tl::to_string(c.nan_mode);
}

// Bernoulli row sampling and rsm < 1: every tree's draws depend on its index.
GbdtParams continue_params(const ContinueCase& c, int trees) {
  GbdtParams p = params(c.loss, trees, 5);
  p.grow_policy = c.grow;
  p.nan_mode = c.nan_mode;
  p.max_leaves = 12;
  p.bootstrap = tl::GbdtBootstrap::Bernoulli;
  p.subsample = 0.7;
  p.rsm = 0.6;
  p.seed = 23;
  return p;
}

GbdtModel fit_from(const tl::Context& ctx, const Data& D, const GbdtParams& p, const std::vector<double>* w,
                   const Data* E, tl::GbdtFitInfo* info, const GbdtModel* init) {
  tl::GbdtEvalSet<float> ev;
  if (E) {
    ev.X = tl::MatrixView<const float>(E->X.data(), E->n, E->d);
    ev.y = E->y.data();
  }
  return tl::gbdt_fit<float>(ctx, tl::MatrixView<const float>(D.X.data(), D.n, D.d), D.y.data(),
                             w ? w->data() : nullptr, p, ev, true, info, tl::GbdtCallback(), init);
}

std::vector<double> tail(const std::vector<double>& v, std::size_t from) {
  return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())), v.end());
}

// One fit of n1 + n2 trees against n1 trees continued by n2 on ctx: the
// same model, and the continued fit's history is the full one's last n2 rounds.
void expect_continuation_exact(const tl::Context& ctx, const ContinueCase& c, int n1, int n2) {
  const Data D = make_data(6000, 7, c.loss, true, 41);
  const Data E = make_data(1500, 7, c.loss, true, 42);
  std::vector<double> w(static_cast<std::size_t>(D.n));
  for (std::int64_t i = 0; i < D.n; ++i) w[i] = 0.5 + (i % 5) * 0.25;
  tl::GbdtFitInfo full_info, first_info, cont_info;
  const GbdtModel full = fit_from(ctx, D, continue_params(c, n1 + n2), &w, &E, &full_info, nullptr);
  const GbdtModel first = fit_from(ctx, D, continue_params(c, n1), &w, &E, &first_info, nullptr);
  const GbdtModel cont = fit_from(ctx, D, continue_params(c, n2), &w, &E, &cont_info, &first);
  ASSERT_EQ(cont.n_trees(), n1 + n2);
  expect_same_model(full, cont);
  EXPECT_TRUE(same_bits_vec(predict(cpu(2), full, E, tl::GbdtOutput::Raw), predict(cpu(2), cont, E, tl::GbdtOutput::Raw)));
  EXPECT_TRUE(same_bits_vec(tail(full_info.train_loss, n1), cont_info.train_loss));
  EXPECT_TRUE(same_bits_vec(tail(full_info.eval_loss, n1), cont_info.eval_loss));
  EXPECT_EQ(cont_info.eval_loss.size(), static_cast<std::size_t>(n2));
}

}  // namespace

TEST(GbdtContinue, ContinuedFitEqualsOneFit) {
  for (const ContinueCase& c : kContinueCases)
    for (int threads : {1, 3}) {
      SCOPED_TRACE(case_name(c) + " threads=" + std::to_string(threads));
      expect_continuation_exact(cpu(threads), c, 4, 5);
    }
}

// A continuation of a continuation, and a continuation by a single tree.
TEST(GbdtContinue, ChainedContinuations) {
  const ContinueCase c{tl::GbdtGrowPolicy::SymmetricTree, GbdtLoss::RMSE, tl::GbdtNanMode::Min};
  const Data D = make_data(3000, 6, c.loss, true, 5);
  const GbdtModel full = fit_from(cpu(2), D, continue_params(c, 7), nullptr, nullptr, nullptr, nullptr);
  GbdtModel m = fit_from(cpu(2), D, continue_params(c, 2), nullptr, nullptr, nullptr, nullptr);
  for (int more : {1, 3, 1}) m = fit_from(cpu(2), D, continue_params(c, more), nullptr, nullptr, nullptr, &m);
  expect_same_model(full, m);
}

// On other data the continued fit keeps the init model's borders (it does
// not select new ones from the new rows) and its base score.
TEST(GbdtContinue, KeepsTheInitBordersAndBaseScore) {
  const ContinueCase c{tl::GbdtGrowPolicy::Depthwise, GbdtLoss::RMSE, tl::GbdtNanMode::Min};
  const Data D = make_data(3000, 6, c.loss, true, 7);
  Data D2 = make_data(2000, 6, c.loss, true, 8);
  for (float& v : D2.X) v = v * 1.7f + 0.3f;  // other values: fresh borders would differ
  GbdtParams p = continue_params(c, 3);
  const GbdtModel first = fit_from(cpu(2), D, p, nullptr, nullptr, nullptr, nullptr);
  p.border_count = 17;  // not used by a continuation
  const GbdtModel cont = fit_from(cpu(2), D2, p, nullptr, nullptr, nullptr, &first);
  const GbdtModel fresh = tl::gbdt_borders<float>(cpu(2), tl::MatrixView<const float>(D2.X.data(), D2.n, D2.d), 17,
                                                  p.nan_mode);
  EXPECT_FALSE(same_bits_vec(fresh.borders, first.borders));
  EXPECT_TRUE(same_bits_vec(cont.borders, first.borders));
  EXPECT_EQ(cont.border_offsets, first.border_offsets);
  EXPECT_TRUE(same_bits_vec(cont.base_score, first.base_score));
  ASSERT_EQ(cont.n_trees(), 6);
  for (std::size_t s = 0; s < first.split_feature.size(); ++s) {
    EXPECT_EQ(cont.split_feature[s], first.split_feature[s]);
    EXPECT_TRUE(tltest::same_bits(cont.split_border[s], first.split_border[s]));
  }
  cont.validate();
  // The new trees' splits are borders of the init model.
  for (std::size_t s = first.split_feature.size(); s < cont.split_feature.size(); ++s) {
    const int f = cont.split_feature[s];
    if (f < 0) continue;
    EXPECT_TRUE(tltest::same_bits(cont.split_border[s], first.borders[first.border_offsets[f] + cont.split_bin[s]]));
  }
}

TEST(GbdtContinue, RejectsAnIncompatibleInitModel) {
  const ContinueCase c{tl::GbdtGrowPolicy::SymmetricTree, GbdtLoss::Logloss, tl::GbdtNanMode::Min};
  const Data D = make_data(500, 5, c.loss, false, 9);
  const GbdtModel first = fit_from(cpu(1), D, continue_params(c, 2), nullptr, nullptr, nullptr, nullptr);
  auto bad = [&](const GbdtParams& p, const Data& X) {
    EXPECT_THROW(fit_from(cpu(1), X, p, nullptr, nullptr, nullptr, &first), tl::ValueError);
  };
  GbdtParams p = continue_params(c, 2);
  p.loss = GbdtLoss::CrossEntropy;
  bad(p, D);
  p = continue_params(c, 2);
  p.grow_policy = tl::GbdtGrowPolicy::Depthwise;
  bad(p, D);
  p = continue_params(c, 2);
  p.nan_mode = tl::GbdtNanMode::Max;
  bad(p, D);
  bad(continue_params(c, 2), make_data(500, 6, c.loss, false, 9));  // other feature count
  GbdtModel broken = first;
  broken.leaf_values.pop_back();
  EXPECT_THROW(fit_from(cpu(1), D, continue_params(c, 2), nullptr, nullptr, nullptr, &broken), tl::ValueError);
}

TEST(GbdtCuda, ContinuedFitEqualsOneFitAndTheCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (const ContinueCase& c : kContinueCases) {
    SCOPED_TRACE(case_name(c));
    expect_continuation_exact(gpu, c, 4, 5);
    // The GPU's continuation of a GPU model is the CPU's continuation of the CPU model.
    const Data D = make_data(6000, 7, c.loss, true, 41);
    const GbdtModel first_c = fit_from(cpu(3), D, continue_params(c, 4), nullptr, nullptr, nullptr, nullptr);
    const GbdtModel first_g = fit_from(gpu, D, continue_params(c, 4), nullptr, nullptr, nullptr, nullptr);
    const GbdtModel cont_c = fit_from(cpu(3), D, continue_params(c, 5), nullptr, nullptr, nullptr, &first_c);
    const GbdtModel cont_g = fit_from(gpu, D, continue_params(c, 5), nullptr, nullptr, nullptr, &first_g);
    expect_same_model(cont_c, cont_g);
  }
}
