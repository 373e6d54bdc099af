#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "../test_util.hpp"
#include "cluster/dbscan/dbscan_common.hpp"
#include "twinlearn/cluster/dbscan.hpp"

namespace {

tl::Context cpu(int threads = 0) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }
tl::Context gpu() { return tl::Context(tl::Device{tl::DeviceKind::CUDA, 0}, 0, tl::NumericMode::Identical, 0); }

struct Graph {
  std::vector<std::int64_t> off{0}, ind;
  void row(std::initializer_list<std::int64_t> js) {
    for (auto j : js) ind.push_back(j);
    off.push_back(static_cast<std::int64_t>(ind.size()));
  }
  std::int64_t n() const { return static_cast<std::int64_t>(off.size()) - 1; }
};

std::vector<std::int64_t> labels_of(const tl::Context& ctx, const Graph& g, std::int64_t min_samples,
                                    const double* w = nullptr, std::vector<std::uint8_t>* core = nullptr) {
  std::vector<std::int64_t> lab(static_cast<std::size_t>(g.n()));
  std::vector<std::uint8_t> c(static_cast<std::size_t>(g.n()));
  tl::DbscanParams p;
  p.eps = 1.0;
  p.min_samples = min_samples;
  tl::dbscan_from_graph(ctx, g.n(), g.off.data(), g.ind.data(), w, p, lab.data(), c.data());
  if (core) *core = c;
  return lab;
}

// Reference: scikit-learn's sequential expansion.
std::vector<std::int64_t> expanded(const Graph& g, const std::vector<std::uint8_t>& core) {
  std::vector<std::int64_t> lab(static_cast<std::size_t>(g.n()));
  tl::detail::dbscan_expand_host(g.n(), g.off.data(), g.ind.data(), core.data(), lab.data());
  return lab;
}

// A random symmetric graph of points on a line (j in N(i) when |x_i - x_j| <= 1).
Graph line_graph(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, n / 3.0);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = std::floor(u(rng) * 4) / 4;
  Graph g;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j)
      if (std::abs(x[i] - x[j]) <= 1.0) g.ind.push_back(j);
    g.off.push_back(static_cast<std::int64_t>(g.ind.size()));
  }
  return g;
}

}  // namespace

TEST(Dbscan, BorderJoinsTheLowestClusterId) {
  // 0 is a border sample of the clusters {1, 2, 3, 4} (id 0) and {5, 6, 7, 8} (id 1).
  Graph g;
  g.row({0, 1, 5});
  g.row({0, 1, 2, 3, 4});
  for (int i = 0; i < 3; ++i) g.row({1, 2, 3, 4});
  g.row({0, 5, 6, 7, 8});
  for (int i = 0; i < 3; ++i) g.row({5, 6, 7, 8});
  std::vector<std::uint8_t> core;
  const auto lab = labels_of(cpu(), g, 4, nullptr, &core);
  EXPECT_EQ(core[0], 0);
  EXPECT_EQ(lab, (std::vector<std::int64_t>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(Dbscan, MatchesTheSequentialExpansionOnRandomGraphs) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Graph g = line_graph(300, seed);
    for (std::int64_t ms : {1, 3, 5, 8}) {
      std::vector<std::uint8_t> core;
      const auto lab = labels_of(cpu(4), g, ms, nullptr, &core);
      EXPECT_EQ(lab, expanded(g, core)) << "seed " << seed << " min_samples " << ms;
      EXPECT_EQ(lab, labels_of(cpu(1), g, ms));
    }
  }
}

TEST(Dbscan, AsymmetricGraphsFollowTheSequentialExpansion) {
  // 0 -> 2 and 1 -> 2 only: the expansion from 0 takes 2, then the one from
  // 1 finds 2 taken; components of the undirected graph would join all three.
  Graph g;
  g.row({0, 2});
  g.row({1, 2});
  g.row({2});
  std::vector<std::uint8_t> core;
  const auto lab = labels_of(cpu(), g, 1, nullptr, &core);
  EXPECT_EQ(lab, (std::vector<std::int64_t>{0, 1, 0}));
  EXPECT_EQ(lab, expanded(g, core));
}

TEST(Dbscan, WeightedCountsInIndexOrder) {
  Graph g;
  for (int i = 0; i < 4; ++i) g.row({0, 1, 2, 3});
  const std::vector<double> w{0.1, 0.2, 0.3, 0.4};  // ((0.1+0.2)+0.3)+0.4 == 1, the reverse < 1
  std::vector<std::uint8_t> core;
  labels_of(cpu(), g, 1, w.data(), &core);
  EXPECT_EQ(core, (std::vector<std::uint8_t>{1, 1, 1, 1}));
}

TEST(DbscanCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const Graph g = line_graph(2000, seed);
    std::vector<double> w(static_cast<std::size_t>(g.n()));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-0.5, 2.0);
    for (auto& v : w) v = u(rng);
    for (std::int64_t ms : {1, 4, 9}) {
      EXPECT_EQ(labels_of(cpu(), g, ms), labels_of(gpu(), g, ms));
      EXPECT_EQ(labels_of(cpu(), g, ms, w.data()), labels_of(gpu(), g, ms, w.data()));
    }
  }
}
