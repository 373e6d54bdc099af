// Gradient-boosted trees: tree shapes and split constraints (min_child_weight,
// min_split_gain, min_data_in_leaf), depthwise trees, learned NaN directions,
// lossguide growth, on the CPU and against CUDA (skipped without a GPU).
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

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
  std::vector<double> raw(acc.size());
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
      const Data D = make_data(tltest::rows(40001), 6, loss, true, 91);
      const Data E = make_data(tltest::rows(3000), 6, loss, true, 92);
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
    const std::vector<double> pr = predict(cpu(2), learned, D, tl::GbdtOutput::Probability);
    for (std::int64_t i = 0; i < D.n; ++i)
      if (std::isnan(D.X[i * 2])) {
        ASSERT_EQ(pr[i] > 0.5, nan_label == 1.0) << i;
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
    const std::int64_t n = tltest::rows(c.n);
    const Data D = make_data(n, 6, c.loss, true, 300 + c.n);
    const Data E = make_data(n / 3 + 1, 6, c.loss, true, 400 + c.n);
    std::vector<double> w(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) w[i] = 0.25 + (i % 7) * 0.5;
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
    const std::int64_t n = tltest::rows(c.n);
    const Data D = make_data(n, 6, c.loss, true, 500 + c.n);
    const Data E = make_data(n / 3 + 1, 6, c.loss, true, 600 + c.n);
    std::vector<double> w(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) w[i] = 0.25 + (i % 5) * 0.5;
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
