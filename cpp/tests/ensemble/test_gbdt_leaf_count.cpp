// Gradient-boosted trees: the training leaf counts of the model
// (GbdtModel::leaf_count) for every grow policy, against the training rows
// routed through the fitted trees; thread counts; continued fits; the cut of
// Depthwise trees (trim_trees); validation; and against CUDA (skipped
// without a GPU).
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

namespace {

// The leaf of row x in the tree of `depth` whose splits start at entry so,
// written out from GbdtModel's layout comment.
std::int64_t leaf_of(const GbdtModel& m, std::int64_t so, int depth, const float* x) {
  const bool per_node = tl::gbdt_per_node(m.grow_policy);
  std::int64_t leaf = 0;
  for (int d = 0; d < depth; ++d) {
    const std::int64_t s = so + (per_node ? ((std::int64_t(1) << d) - 1) + leaf : d);
    const int f = m.split_feature[s];
    if (f < 0) continue;
    const float v = x[f];
    bool right;
    if (std::isnan(v)) {
      right = m.nan_mode == tl::GbdtNanMode::Learned ? m.split_nan_right[s] != 0 : m.nan_mode == tl::GbdtNanMode::Max;
    } else {
      right = v > m.split_border[s];
    }
    leaf |= static_cast<std::int64_t>(right) << d;
  }
  return leaf;
}

// Per tree and leaf, the rows of D whose weight in that tree (sample weight
// times bootstrap weight, gbdt::row_weight) is positive and that reach the leaf.
std::vector<std::int64_t> counted_rows(const GbdtModel& m, const Data& D, const GbdtParams& p,
                                       const std::vector<double>* w) {
  std::vector<std::int64_t> so, lo;
  tl::gbdt::tree_offsets(m, &so, &lo);
  std::vector<std::int64_t> out;
  for (std::int64_t t = 0; t < m.n_trees(); ++t) {
    const int depth = m.tree_depth[t];
    std::vector<std::int64_t> c(std::size_t(1) << depth, 0);
    const tl::gbdt::RowSampler rs = tl::gbdt::row_sampler(p, t);
    for (std::int64_t i = 0; i < D.n; ++i)
      if (tl::gbdt::row_weight(rs, w ? w->data() : nullptr, i) > 0.0) ++c[leaf_of(m, so[t], depth, &D.X[i * D.d])];
    out.insert(out.end(), c.begin(), c.end());
  }
  return out;
}

struct Case {
  tl::GbdtGrowPolicy policy;
  GbdtLoss loss;
  tl::GbdtBootstrap bootstrap;
  bool weighted;  // weights, every seventh row 0
  tl::GbdtNanMode nan_mode = tl::GbdtNanMode::Min;
};

const Case kCases[] = {
    {tl::GbdtGrowPolicy::SymmetricTree, GbdtLoss::Logloss, tl::GbdtBootstrap::No, false},
    {tl::GbdtGrowPolicy::SymmetricTree, GbdtLoss::MultiClass, tl::GbdtBootstrap::Bernoulli, true},
    {tl::GbdtGrowPolicy::Depthwise, GbdtLoss::RMSE, tl::GbdtBootstrap::No, true, tl::GbdtNanMode::Learned},
    {tl::GbdtGrowPolicy::Depthwise, GbdtLoss::Logloss, tl::GbdtBootstrap::Bernoulli, false, tl::GbdtNanMode::Max},
    {tl::GbdtGrowPolicy::Lossguide, GbdtLoss::MultiClass, tl::GbdtBootstrap::No, true},
    {tl::GbdtGrowPolicy::Lossguide, GbdtLoss::RMSE, tl::GbdtBootstrap::Bayesian, true, tl::GbdtNanMode::Learned},
};

GbdtParams case_params(const Case& c) {
  GbdtParams p = params(c.loss, 10, 6);
  p.grow_policy = c.policy;
  p.nan_mode = c.nan_mode;
  p.bootstrap = c.bootstrap;
  if (c.bootstrap == tl::GbdtBootstrap::Bernoulli) p.subsample = 0.6;
  p.seed = 7;
  if (c.policy == tl::GbdtGrowPolicy::Lossguide) p.max_leaves = 9;
  if (c.policy == tl::GbdtGrowPolicy::Depthwise) p.min_split_gain = c.loss == GbdtLoss::RMSE ? 2.0e5 : 30.0;
  return p;
}

std::vector<double> case_weights(std::int64_t n) {
  std::vector<double> w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) w[i] = i % 7 == 0 ? 0.0 : 0.5 + (i % 3) * 0.75;
  return w;
}

std::string name(const Case& c) {
  return std::string(tl::to_string(c.policy)) + " " + tl::to_string(c.loss) + " " + tl::to_string(c.bootstrap) +
         (c.weighted ? " weighted " : " ") + tl::to_string(c.nan_mode);
}

}  // namespace

TEST(GbdtLeafCount, CountsTheTrainingRowsOfEachLeaf) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(name(c));
    const Data D = make_data(7001, 6, c.loss, true, 91);
    const GbdtParams p = case_params(c);
    const std::vector<double> w = case_weights(D.n);
    const GbdtModel m = fit(cpu(1), D, p, c.weighted ? &w : nullptr);
    ASSERT_EQ(m.leaf_count.size() * static_cast<std::size_t>(m.n_outputs), m.leaf_values.size());
    EXPECT_EQ(m.leaf_count, counted_rows(m, D, p, c.weighted ? &w : nullptr));
    std::vector<std::int64_t> so, lo;
    tl::gbdt::tree_offsets(m, &so, &lo);
    std::int64_t all = 0;
    for (std::int64_t t = 0; t < m.n_trees(); ++t) {
      std::int64_t sum = 0;
      for (std::int64_t j = lo[t] / m.n_outputs; j < lo[t + 1] / m.n_outputs; ++j) sum += m.leaf_count[j];
      EXPECT_LE(sum, D.n);
      if (c.weighted || c.bootstrap == tl::GbdtBootstrap::Bernoulli) EXPECT_LT(sum, D.n) << t;  // rows left out
      all += sum;
    }
    EXPECT_GT(all, 0);
    if (c.policy == tl::GbdtGrowPolicy::Depthwise)  // the fixture cuts some tree below max_depth
      EXPECT_LT(*std::min_element(m.tree_depth.begin(), m.tree_depth.end()), p.max_depth);
    expect_same_model(m, fit(cpu(4), D, p, c.weighted ? &w : nullptr));
  }
}

TEST(GbdtLeafCount, TreesStoppedEarlyCountTheirLevel) {
  // SymmetricTree under min_split_gain: trees stop at a level (fewer leaves).
  const Data D = make_data(5000, 5, GbdtLoss::RMSE, true, 92);
  GbdtParams p = params(GbdtLoss::RMSE, 8, 6);
  p.min_split_gain = 4.0e6;
  const GbdtModel m = fit(cpu(2), D, p);
  EXPECT_LT(*std::min_element(m.tree_depth.begin(), m.tree_depth.end()), 6) << "the fixture must stop a tree";
  EXPECT_EQ(m.leaf_count, counted_rows(m, D, p, nullptr));
}

TEST(GbdtLeafCount, ContinuedFitKeepsTheInitCounts) {
  const Data D = make_data(4000, 5, GbdtLoss::Logloss, true, 93);
  for (auto g : {tl::GbdtGrowPolicy::SymmetricTree, tl::GbdtGrowPolicy::Depthwise, tl::GbdtGrowPolicy::Lossguide}) {
    SCOPED_TRACE(tl::to_string(g));
    GbdtParams p = params(GbdtLoss::Logloss, 7, 5);
    p.grow_policy = g;
    p.bootstrap = tl::GbdtBootstrap::Bernoulli;
    p.subsample = 0.7;
    const GbdtModel one = fit(cpu(2), D, p);
    p.n_estimators = 3;
    const GbdtModel init = fit(cpu(2), D, p);
    p.n_estimators = 4;
    const auto cont = [&](const GbdtModel& from) {
      tl::GbdtEvalSet<float> ev;
      return tl::gbdt_fit<float>(cpu(2), tl::MatrixView<const float>(D.X.data(), D.n, D.d), D.y.data(), nullptr, p,
                                 ev, false, nullptr, tl::GbdtCallback(), &from);
    };
    const GbdtModel both = cont(init);
    EXPECT_EQ(both.leaf_count, one.leaf_count);
    EXPECT_EQ(both.leaf_count, counted_rows(both, D, p, nullptr));
    // An init model without counts (an older file): the continued model has none.
    GbdtModel bare = init;
    bare.leaf_count.clear();
    const GbdtModel none = cont(bare);
    EXPECT_TRUE(none.leaf_count.empty());
    EXPECT_TRUE(same_bits_vec(none.leaf_values, one.leaf_values));
  }
}

TEST(GbdtLeafCount, CutDepthwiseTreesSumTheMergedLeaves) {
  // One Depthwise tree of depth 2 whose level 1 does not split: cut to depth
  // 1, leaf j of the grown tree goes to leaf j mod 2.
  GbdtModel m;
  m.loss = GbdtLoss::RMSE;
  m.grow_policy = tl::GbdtGrowPolicy::Depthwise;
  m.n_features = 1;
  m.borders = {0.5};
  m.border_offsets = {0, 1};
  m.base_score = {0.0};
  m.tree_depth = {2};
  m.split_feature = {0, -1, -1};
  m.split_bin = {0, -1, -1};
  m.split_gain = {1.0, 0.0, 0.0};
  m.leaf_values = {1.0, 2.0, 1.0, 2.0};
  m.leaf_count = {3, 4, 1, 2};
  tl::gbdt::trim_trees(m);
  tl::gbdt::fill_split_borders(m);
  m.validate();
  EXPECT_EQ(m.tree_depth, std::vector<std::int32_t>({1}));
  EXPECT_EQ(m.leaf_count, std::vector<std::int64_t>({4, 6}));
  // Without counts the cut model has none.
  m.tree_depth = {2};
  m.split_feature = {0, -1, -1};
  m.split_bin = {0, -1, -1};
  m.split_gain = {1.0, 0.0, 0.0};
  m.leaf_values = {1.0, 2.0, 1.0, 2.0};
  m.leaf_count.clear();
  tl::gbdt::trim_trees(m);
  EXPECT_TRUE(m.leaf_count.empty());
}

TEST(GbdtLeafCount, ValidationChecksSizeAndSign) {
  const Data D = make_data(2000, 5, GbdtLoss::MultiClass, false, 94);
  GbdtModel m = fit(cpu(1), D, params(GbdtLoss::MultiClass, 3, 3));
  m.validate();
  GbdtModel bad = m;
  bad.leaf_count.pop_back();
  EXPECT_THROW(bad.validate(), tl::ValueError);
  bad = m;
  bad.leaf_count.resize(m.leaf_values.size());  // one per leaf and output: too many
  EXPECT_THROW(bad.validate(), tl::ValueError);
  bad = m;
  bad.leaf_count[1] = -1;
  EXPECT_THROW(bad.validate(), tl::ValueError);
  bad = m;
  bad.leaf_count.clear();  // no counts: valid
  bad.validate();
}

TEST(GbdtCuda, LeafCountsIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (const Case& c : kCases) {
    SCOPED_TRACE(name(c));
    const Data D = make_data(30001, 6, c.loss, true, 95);
    const Data E = make_data(3001, 6, c.loss, true, 96);
    const std::vector<double> w = case_weights(D.n);
    const auto [a, b] = expect_fits_identical(gpu, D, E, case_params(c), c.weighted ? &w : nullptr);
    EXPECT_EQ(a.leaf_count, counted_rows(a, D, case_params(c), c.weighted ? &w : nullptr));
  }
  // Deep oblivious trees: more leaves than the kernel's shared table (global atomics).
  const Data D = make_data(40001, 6, GbdtLoss::RMSE, true, 97);
  const Data E = make_data(2001, 6, GbdtLoss::RMSE, true, 98);
  GbdtParams p = params(GbdtLoss::RMSE, 5, 13);  // 5 trees: expect_fits_identical stages trees [2, 5)
  p.bootstrap = tl::GbdtBootstrap::Bernoulli;
  p.subsample = 0.8;
  const auto [a, b] = expect_fits_identical(gpu, D, E, p, nullptr);
  ASSERT_EQ(a.tree_depth[0], 13);
  EXPECT_EQ(b.leaf_count, counted_rows(a, D, p, nullptr));
}
