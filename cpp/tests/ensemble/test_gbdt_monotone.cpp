// Gradient-boosted trees: monotonic and interaction constraints of per-node
// trees (gbdt_constraints.hpp): the shared arithmetic against the
// unconstrained functions, the constrained fits on the CPU (monotone
// predictions, paths within groups, thread counts) and against CUDA (skipped
// without a GPU).
#include "ensemble/gbdt/gbdt_constraints.hpp"
#include "gbdt_fixture.hpp"

using namespace tl_test_gbdt;

namespace {
const double kInf = std::numeric_limits<double>::infinity();

// Raw predictions along feature f (values v0 + k * step) from rows of D.
std::vector<std::vector<double>> along(const GbdtModel& m, const Data& D, int f, int rows, int steps) {
  std::vector<std::vector<double>> out;
  for (int r = 0; r < rows; ++r) {
    Data G{steps, D.d, {}, {}};
    for (int k = 0; k < steps; ++k)
      for (std::int64_t j = 0; j < D.d; ++j) {
        const float x = D.X[(r * 37) * D.d + j];
        G.X.push_back(j == f ? -3.0f + 6.0f * k / (steps - 1) : (std::isnan(x) ? 0.0f : x));
      }
    out.push_back(predict(cpu(1), m, G, tl::GbdtOutput::Raw));
  }
  return out;
}
}  // namespace

TEST(GbdtMonotone, UnboundedArithmeticIsTheUnconstrainedBits) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> nd;
  for (int i = 0; i < 2000; ++i) {
    const double GL = nd(rng), HL = std::abs(nd(rng)), GR = nd(rng), HR = std::abs(nd(rng));
    const double G = GL + GR, H = HL + HR, lambda = i % 3 == 0 ? 0.0 : 1.5;
    const double a = tl::gbdt::constrained_gain(GL, HL, GR, HR, G, H, lambda, 0.0);
    const double b = tl::gbdt::monotone_gain(GL, HL, GR, HR, G, H, lambda, 0.0, -kInf, kInf, 0);
    ASSERT_EQ(tl::num::to_bits(a), tl::num::to_bits(b));
    ASSERT_EQ(tl::num::to_bits(tl::gbdt::leaf_value(G, H, lambda, 0.1)),
              tl::num::to_bits(tl::gbdt::bounded_leaf_value(G, H, lambda, 0.1, -kInf, kInf)));
  }
  // Left value 1 above right value -1: rejected under +1, kept under -1; a clipped child scores -G * clip(v).
  EXPECT_EQ(tl::gbdt::monotone_gain(-1.0, 1.0, 1.0, 1.0, 0.0, 2.0, 0.0, 0.0, -kInf, kInf, 1), -kInf);
  EXPECT_GT(tl::gbdt::monotone_gain(-1.0, 1.0, 1.0, 1.0, 0.0, 2.0, 0.0, 0.0, -kInf, kInf, -1), 0.0);
  EXPECT_EQ(tl::gbdt::bounded_term(-2.0, 1.0, 0.0, -kInf, 1.5), 2.0 * 1.5);
  double b[4];
  tl::gbdt::child_bounds(-kInf, kInf, -1.0, 3.0, 1, b);
  EXPECT_EQ(b[1], 1.0);
  EXPECT_EQ(b[2], 1.0);
  tl::gbdt::child_bounds(-kInf, kInf, 3.0, -1.0, -1, b);
  EXPECT_EQ(b[0], 1.0);
  EXPECT_EQ(b[3], 1.0);
}

TEST(GbdtMonotone, PredictionsAreMonotoneAndThreadCountsAgree) {
  Data D = make_data(6000, 5, GbdtLoss::RMSE, true, 41);
  for (std::int64_t i = 0; i < D.n; ++i) {
    const float x = std::isnan(D.X[i * D.d]) ? 0.0f : D.X[i * D.d];
    D.y[i] += 2.0 * std::sin(4.0 * x);  // not monotone in feature 0
  }
  for (auto g : {tl::GbdtGrowPolicy::Depthwise, tl::GbdtGrowPolicy::Lossguide})
    for (int sign : {1, -1}) {
      GbdtParams p = params(GbdtLoss::RMSE, 20, 5);
      p.grow_policy = g;
      p.max_leaves = 12;
      p.nan_mode = tl::GbdtNanMode::Learned;
      const GbdtModel free = fit(cpu(1), D, p);
      p.monotone_constraints = {sign, 0, 0, 0, 0};
      const GbdtModel held = fit(cpu(1), D, p);
      expect_same_model(held, fit(cpu(4), D, p));
      double worst_free = 0.0, worst_held = 0.0;
      for (const auto& row : along(free, D, 0, 20, 80))
        for (std::size_t k = 1; k < row.size(); ++k) worst_free = std::min(worst_free, sign * (row[k] - row[k - 1]));
      for (const auto& row : along(held, D, 0, 20, 80))
        for (std::size_t k = 1; k < row.size(); ++k) worst_held = std::min(worst_held, sign * (row[k] - row[k - 1]));
      EXPECT_LT(worst_free, -1e-3);  // separating arm
      EXPECT_EQ(worst_held, 0.0);
    }
}

TEST(GbdtMonotone, InteractionGroupsBoundEveryPath) {
  const Data D = make_data(5000, 6, GbdtLoss::Logloss, true, 43);
  GbdtParams p = params(GbdtLoss::Logloss, 10, 5);
  p.grow_policy = tl::GbdtGrowPolicy::Depthwise;
  p.interaction_constraints = {{0, 1}, {2, 3}};  // 4, 5: one more group
  const GbdtModel m = fit(cpu(1), D, p);
  expect_same_model(m, fit(cpu(3), D, p));
  std::vector<std::int64_t> so, lo;
  tl::gbdt::tree_offsets(m, &so, &lo);
  const auto group = [](int f) { return f / 2; };
  for (std::int64_t t = 0; t < m.n_trees(); ++t) {
    const int depth = m.tree_depth[t];
    for (std::int64_t leaf = 0; leaf < (std::int64_t(1) << depth); ++leaf) {
      int g = -1;
      for (int l = 0; l < depth; ++l) {
        const int f = m.split_feature[so[t] + ((std::int64_t(1) << l) - 1) + (leaf & ((std::int64_t(1) << l) - 1))];
        if (f < 0) break;
        if (g < 0) g = group(f);
        EXPECT_EQ(group(f), g);
      }
    }
  }
}

TEST(GbdtCuda, MonotoneInteractionIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (auto g : {tl::GbdtGrowPolicy::Depthwise, tl::GbdtGrowPolicy::Lossguide})
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(std::string(tl::to_string(g)) + " variant " + std::to_string(variant));
      const GbdtLoss loss = variant == 2 ? GbdtLoss::MultiClass : GbdtLoss::RMSE;
      const Data D = make_data(tltest::rows(30001), 6, loss, true, 700 + variant);
      const Data E = make_data(tltest::rows(5001), 6, loss, true, 800 + variant);
      GbdtParams p = params(loss, 8, 6);
      p.grow_policy = g;
      p.max_leaves = 17;
      if (variant != 2) p.monotone_constraints = {1, 0, -1, 0, 0, 1};
      if (variant >= 1) p.interaction_constraints = {{0, 1, 2}, {2, 3}};
      if (variant == 1) {
        p.nan_mode = tl::GbdtNanMode::Learned;
        p.min_data_in_leaf = 20;
      }
      expect_fits_identical(gpu, D, E, p, nullptr);
    }
}
