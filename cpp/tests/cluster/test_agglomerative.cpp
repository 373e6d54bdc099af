#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "../test_util.hpp"
#include "cluster/agglomerative/agglomerative_common.hpp"
#include "twinlearn/cluster/agglomerative.hpp"

namespace {

tl::Context cpu(int threads = 0) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }
tl::Context gpu() { return tl::Context(tl::Device{tl::DeviceKind::CUDA, 0}, 0, tl::NumericMode::Identical, 0); }

struct Tree {
  std::vector<std::int64_t> children;
  std::vector<double> distances;
  bool operator==(const Tree& o) const { return children == o.children && distances == o.distances; }
};

Tree tree_of(const tl::Context& ctx, const std::vector<double>& x, std::int64_t n, std::int64_t d, tl::MetricKind k,
             tl::Linkage linkage) {
  Tree t;
  t.children.resize(static_cast<std::size_t>(2 * (n - 1)));
  t.distances.resize(static_cast<std::size_t>(n - 1));
  tl::Metric m;
  m.kind = k;
  tl::agglomerative_tree(ctx, tl::MatrixView<const double>(x.data(), n, d), m, linkage, t.children.data(),
                         t.distances.data());
  return t;
}

std::vector<double> grid(std::int64_t n, std::int64_t d, int side, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> x(static_cast<std::size_t>(n * d));
  for (auto& v : x) v = static_cast<double>(rng() % side);
  return x;
}

}  // namespace

// Four points on a line at 0, 1, 2, 3: every gap ties. Prim takes the lowest
// index of the nearest; the edges keep their order in the stable sort.
TEST(Agglomerative, SingleLinkageTiesOnALine) {
  const std::vector<double> x{0, 1, 2, 3};
  const Tree t = tree_of(cpu(), x, 4, 1, tl::MetricKind::Euclidean, tl::Linkage::Single);
  EXPECT_EQ(t.children, (std::vector<std::int64_t>{0, 1, 4, 2, 5, 3}));
  EXPECT_EQ(t.distances, (std::vector<double>{1, 1, 1}));
}

// The chain prefers its previous element on a tie. Points 0, 7, 20, 3, 5:
// the chain runs 0 -> 3 -> 4, and 4's nearest ties between 3 (the previous
// element) and 1 (a lower index): SciPy merges 3 and 4 first (a plain
// lowest-index scan would merge 1 and 4).
TEST(Agglomerative, ChainKeepsThePreviousElementOnATie) {
  const std::vector<double> x{0, 7, 20, 3, 5};
  const Tree t = tree_of(cpu(), x, 5, 1, tl::MetricKind::Euclidean, tl::Linkage::Complete);
  EXPECT_EQ(t.children, (std::vector<std::int64_t>{3, 4, 1, 5, 0, 6, 2, 7}));  // scikit-learn's children_
}

TEST(Agglomerative, ThreadCountsGiveTheSameTree) {
  const std::int64_t n = 5000, d = 2;
  const std::vector<double> x = grid(n, d, 20, 1);
  for (tl::Linkage lk : {tl::Linkage::Single, tl::Linkage::Average, tl::Linkage::Ward}) {
    const Tree one = tree_of(cpu(1), x, n, d, tl::MetricKind::Euclidean, lk);
    EXPECT_TRUE(one == tree_of(cpu(3), x, n, d, tl::MetricKind::Euclidean, lk));
  }
}

TEST(Agglomerative, CutOfOneAndOfAllLeaves) {
  const std::vector<std::int64_t> children{0, 1, 2, 3, 4, 5};  // ((0 1) (2 3))
  std::vector<std::int64_t> lab(4);
  tl::agglomerative_cut(1, 4, children.data(), lab.data());
  EXPECT_EQ(lab, (std::vector<std::int64_t>{0, 0, 0, 0}));
  tl::agglomerative_cut(2, 4, children.data(), lab.data());
  EXPECT_EQ(lab, (std::vector<std::int64_t>{1, 1, 0, 0}));  // heap [-5, -4]: node 5 first
  EXPECT_THROW(tl::agglomerative_cut(5, 4, children.data(), lab.data()), tl::ValueError);
}

TEST(Agglomerative, BadInput) {
  const std::vector<double> x{0, 1, 2, 3};
  std::vector<std::int64_t> ch(6);
  std::vector<double> dd(3);
  tl::Metric m;
  m.kind = tl::MetricKind::Manhattan;
  EXPECT_THROW(tl::agglomerative_tree(cpu(), tl::MatrixView<const double>(x.data(), 4, 1), m, tl::Linkage::Ward,
                                      ch.data(), dd.data()),
               tl::ValueError);
  EXPECT_THROW(tl::agglomerative_tree(cpu(), tl::MatrixView<const double>(x.data(), 1, 4), m, tl::Linkage::Single,
                                      ch.data(), dd.data()),
               tl::ValueError);
  EXPECT_THROW(tl::parse_linkage("centroid"), tl::ValueError);
}

TEST(AgglomerativeCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const std::int64_t n = 3000, d = 3;
    const std::vector<double> x = grid(n, d, 6, seed);  // tie-heavy
    for (tl::MetricKind k : {tl::MetricKind::Euclidean, tl::MetricKind::Manhattan, tl::MetricKind::Cosine})
      for (tl::Linkage lk : {tl::Linkage::Single, tl::Linkage::Complete, tl::Linkage::Average, tl::Linkage::Ward}) {
        if (lk == tl::Linkage::Ward && k != tl::MetricKind::Euclidean) continue;
        EXPECT_TRUE(tree_of(cpu(), x, n, d, k, lk) == tree_of(gpu(), x, n, d, k, lk));
      }
  }
}
