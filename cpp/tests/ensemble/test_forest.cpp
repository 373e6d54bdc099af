#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/ensemble/forest.hpp"

namespace {

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

struct Data {
  std::int64_t rows, cols;
  std::vector<double> x;
  std::vector<std::int32_t> y;
  std::vector<double> yr, w;
};

Data make_data(std::int64_t rows, std::int64_t cols, unsigned seed) {
  Data d{rows,
         cols,
         std::vector<double>(rows * cols),
         std::vector<std::int32_t>(rows),
         std::vector<double>(rows),
         std::vector<double>(rows)};
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  for (auto& v : d.x) v = n(g);
  for (std::int64_t i = 0; i < rows; ++i) {
    const double s = d.x[i * cols] + 0.5 * d.x[i * cols + 1] * d.x[i * cols + 2];
    d.y[i] = s > 0.5 ? 2 : (s > -0.5 ? 1 : 0);
    d.yr[i] = s + 0.1 * n(g);
    d.w[i] = 0.5 + static_cast<double>(i % 4);
  }
  return d;
}

tl::ForestParams params(tl::ForestCriterion c, tl::ForestSplitter s, std::int64_t trees, std::int64_t first = 0) {
  tl::ForestParams p;
  p.criterion = c;
  p.splitter = s;
  p.n_trees = trees;
  p.first_tree = first;
  p.max_features = 3;
  p.n_samples_bootstrap = 300;
  p.seed = 11;
  return p;
}

template <class T>
tl::ForestTrees fit(const tl::Context& ctx, const Data& d, const tl::ForestParams& p, bool weighted) {
  std::vector<T> x(d.x.begin(), d.x.end());
  const bool cls = p.criterion == tl::ForestCriterion::Gini || p.criterion == tl::ForestCriterion::Entropy;
  return tl::forest_fit<T>(ctx, tl::MatrixView<const T>(x.data(), d.rows, d.cols), cls ? d.y.data() : nullptr,
                           cls ? nullptr : d.yr.data(), weighted ? d.w.data() : nullptr, cls ? 3 : 0, p);
}

// Two outputs: (y, x1 > 0) with 3 and 2 classes, or (yr, x2 + x3).
template <class T>
tl::ForestTrees fit_two_outputs(const tl::Context& ctx, const Data& d, const tl::ForestParams& p, bool weighted) {
  std::vector<T> x(d.x.begin(), d.x.end());
  std::vector<std::int32_t> yc(2 * d.rows);
  std::vector<double> yr(2 * d.rows);
  for (std::int64_t i = 0; i < d.rows; ++i) {
    yc[2 * i] = d.y[i];
    yc[2 * i + 1] = d.x[i * d.cols + 1] > 0.0 ? 1 : 0;
    yr[2 * i] = d.yr[i];
    yr[2 * i + 1] = d.x[i * d.cols + 2] + d.x[i * d.cols + 3];
  }
  const std::int64_t classes[2] = {3, 2};
  const bool cls = p.criterion == tl::ForestCriterion::Gini || p.criterion == tl::ForestCriterion::Entropy;
  return tl::forest_fit<T>(ctx, tl::MatrixView<const T>(x.data(), d.rows, d.cols), cls ? yc.data() : nullptr,
                           cls ? nullptr : yr.data(), weighted ? d.w.data() : nullptr, 2, cls ? classes : nullptr, p);
}

template <class V>
bool same_bits(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), sizeof(V) * a.size()) == 0);
}

void expect_same(const tl::ForestTrees& a, const tl::ForestTrees& b) {
  EXPECT_TRUE(same_bits(a.offsets, b.offsets));
  EXPECT_TRUE(same_bits(a.children_left, b.children_left));
  EXPECT_TRUE(same_bits(a.children_right, b.children_right));
  EXPECT_TRUE(same_bits(a.feature, b.feature));
  EXPECT_TRUE(same_bits(a.n_node_samples, b.n_node_samples));
  EXPECT_TRUE(same_bits(a.threshold, b.threshold));
  EXPECT_TRUE(same_bits(a.impurity, b.impurity));
  EXPECT_TRUE(same_bits(a.weighted_n_node_samples, b.weighted_n_node_samples));
  EXPECT_TRUE(same_bits(a.value, b.value));
}

const tl::ForestCriterion kCriteria[] = {tl::ForestCriterion::Gini, tl::ForestCriterion::Entropy,
                                         tl::ForestCriterion::SquaredError, tl::ForestCriterion::AbsoluteError};
const tl::ForestSplitter kSplitters[] = {tl::ForestSplitter::Best, tl::ForestSplitter::Random};

}  // namespace

TEST(Forest, SameTreesForAnyThreadCount) {
  const Data d = make_data(400, 6, 1);
  for (auto c : kCriteria)
    for (auto s : kSplitters)
      for (bool weighted : {false, true}) {
        const auto p = params(c, s, 6);
        const auto ref = fit<double>(cpu(1), d, p, weighted);
        for (int threads : {2, 3, 7}) expect_same(ref, fit<double>(cpu(threads), d, p, weighted));
      }
}

TEST(Forest, TwoOutputsSameTreesForAnyThreadCount) {
  const Data d = make_data(300, 6, 5);
  for (auto c : kCriteria)
    for (auto s : kSplitters) {
      auto p = params(c, s, 4);
      p.balanced_subsample = c == tl::ForestCriterion::Gini;
      const auto ref = fit_two_outputs<double>(cpu(1), d, p, true);
      EXPECT_EQ(ref.n_values, c == tl::ForestCriterion::Gini || c == tl::ForestCriterion::Entropy ? 6 : 2);
      for (int threads : {2, 5}) expect_same(ref, fit_two_outputs<double>(cpu(threads), d, p, true));
    }
}

TEST(Forest, TreeDependsOnItsGlobalIndexOnly) {
  const Data d = make_data(300, 5, 2);
  const auto all = fit<float>(cpu(2), d, params(tl::ForestCriterion::Gini, tl::ForestSplitter::Best, 5), false);
  const auto tail = fit<float>(cpu(2), d, params(tl::ForestCriterion::Gini, tl::ForestSplitter::Best, 2, 3), false);
  const std::int64_t o = all.offsets[3];
  ASSERT_EQ(tail.offsets[2], all.offsets[5] - o);
  for (std::int64_t k = 0; k < tail.offsets[2]; ++k) {
    EXPECT_EQ(tail.feature[k], all.feature[o + k]);
    EXPECT_EQ(tail.threshold[k], all.threshold[o + k]);
  }
}

TEST(Forest, ApplyReachesLeaves) {
  const Data d = make_data(200, 4, 3);
  const auto f = fit<double>(cpu(2), d, params(tl::ForestCriterion::SquaredError, tl::ForestSplitter::Best, 3), false);
  std::vector<std::int64_t> leaves(200 * 3);
  tl::forest_apply<double>(cpu(2), tl::MatrixView<const double>(d.x.data(), 200, 4), 3, f.offsets.data(),
                           f.children_left.data(), f.children_right.data(), f.feature.data(), f.threshold.data(),
                           leaves.data());
  for (std::int64_t i = 0; i < 200; ++i)
    for (std::int64_t t = 0; t < 3; ++t) EXPECT_LT(f.children_left[f.offsets[t] + leaves[i * 3 + t]], 0);
}

TEST(ForestCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  const Data d = make_data(700, 6, 4);
  for (auto c : kCriteria)
    for (auto s : kSplitters)
      for (bool weighted : {false, true}) {
        auto p = params(c, s, 5);
        p.balanced_subsample = (c == tl::ForestCriterion::Gini || c == tl::ForestCriterion::Entropy) && weighted;
        expect_same(fit<double>(cpu(3), d, p, weighted), fit<double>(gpu, d, p, weighted));
        expect_same(fit<float>(cpu(3), d, p, weighted), fit<float>(gpu, d, p, weighted));
        expect_same(fit_two_outputs<double>(cpu(3), d, p, weighted), fit_two_outputs<double>(gpu, d, p, weighted));
        expect_same(fit_two_outputs<float>(cpu(3), d, p, weighted), fit_two_outputs<float>(gpu, d, p, weighted));
      }
}
