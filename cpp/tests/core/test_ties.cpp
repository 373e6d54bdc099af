// Tie rules and value order (rule 6), with the separating arms: a flipped tie
// rule, a naive NaN-blind comparison and IEEE totalOrder each give another
// answer on the fixtures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/ties.hpp"

namespace ties = tl::ties;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Wrong spellings the fixtures must tell apart from the rule.
std::int64_t argmin_last_index_wins(const std::vector<double>& x) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < std::int64_t(x.size()); ++i)
    if (!ties::value_less(x[best], x[i])) best = i;
  return best;
}
std::int64_t argmin_naive(const std::vector<double>& x) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < std::int64_t(x.size()); ++i)
    if (x[i] < x[best]) best = i;
  return best;
}
std::int64_t argmin_total_order(const std::vector<double>& x) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < std::int64_t(x.size()); ++i)
    if (ties::total_order_key(x[i]) < ties::total_order_key(x[best])) best = i;
  return best;
}
}  // namespace

TEST(Ties, LowestIndexWins) {
  const std::vector<double> x = {3.0, 1.0, 2.0, 1.0, 3.0};
  EXPECT_EQ(ties::argmin(x.data(), 5), 1);
  EXPECT_EQ(ties::argmax(x.data(), 5), 0);
  EXPECT_EQ(argmin_last_index_wins(x), 3);  // separating: the flipped rule answers otherwise
  EXPECT_EQ(ties::argmin(x.data(), 0), -1);
}

TEST(Ties, NaNIsLargest) {
  const std::vector<double> x = {kNaN, 2.0, kInf, 1.0, kNaN};
  EXPECT_EQ(ties::argmin(x.data(), 5), 3);
  EXPECT_EQ(ties::argmax(x.data(), 5), 0);  // first NaN
  EXPECT_EQ(argmin_naive(x), 0);            // separating: a NaN-blind loop keeps the leading NaN
  const std::vector<double> all_nan = {kNaN, kNaN};
  EXPECT_EQ(ties::argmin(all_nan.data(), 2), 0);
  EXPECT_TRUE(ties::value_less(kInf, kNaN));
  EXPECT_FALSE(ties::value_less(kNaN, kInf));
  EXPECT_TRUE(ties::value_equal(kNaN, -kNaN));
}

TEST(Ties, SignedZerosAreEqual) {
  const std::vector<double> x = {0.0, -0.0, 1.0};
  EXPECT_EQ(ties::argmin(x.data(), 3), 0);
  EXPECT_EQ(argmin_total_order(x), 1);  // separating: totalOrder puts -0 first
  EXPECT_EQ(ties::sort_key(-0.0), ties::sort_key(0.0));
  EXPECT_LT(ties::total_order_key(-0.0), ties::total_order_key(0.0));
  EXPECT_EQ(ties::sort_key(-0.0f), ties::sort_key(0.0f));
}

TEST(Ties, SortKeysFollowValueOrder) {
  const std::vector<float> v = {-std::numeric_limits<float>::infinity(), -3.5f, -1e-45f, -0.0f, 0.0f, 1e-45f, 2.0f,
                                std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = 0; j < v.size(); ++j) {
      EXPECT_EQ(ties::value_less(v[i], v[j]), ties::sort_key(v[i]) < ties::sort_key(v[j])) << i << " " << j;
    }
  EXPECT_EQ(ties::sort_key(-std::numeric_limits<float>::quiet_NaN()),
            ties::sort_key(std::numeric_limits<float>::quiet_NaN()));
}

TEST(Ties, StableArgsortAndTopK) {
  const std::vector<double> x = {2.0, kNaN, 1.0, 2.0, -0.0, 0.0, 1.0};
  EXPECT_EQ(ties::stable_argsort(x.data(), 7), (std::vector<std::int64_t>{4, 5, 2, 6, 0, 3, 1}));
  EXPECT_EQ(ties::stable_argsort(x.data(), 7, true), (std::vector<std::int64_t>{1, 0, 3, 2, 6, 4, 5}));
  EXPECT_EQ(ties::top_k(x.data(), 7, 3, true), (std::vector<std::int64_t>{1, 0, 3}));
  EXPECT_EQ(ties::top_k(x.data(), 7, 3, false), (std::vector<std::int64_t>{4, 5, 2}));
  // top_k is the head of the stable sort on random data with many ties.
  std::mt19937 g(1);
  std::vector<float> r(1000);
  for (auto& v : r) v = float(g() % 20) - 10.0f;
  for (bool largest : {true, false}) {
    const auto s = ties::stable_argsort(r.data(), 1000, largest);
    const auto t = ties::top_k(r.data(), 1000, 100, largest);
    EXPECT_TRUE(std::equal(t.begin(), t.end(), s.begin()));
  }
}

// (value, index) pairs are totally ordered, so the merge gives one winner
// whatever the reduction order.
TEST(Ties, ArgminMergeIsOrderIndependent) {
  std::mt19937 g(3);
  std::vector<ties::ValueIndex<double>> items;
  for (int i = 0; i < 257; ++i) items.push_back({double(g() % 5) + (i % 31 == 0 ? kNaN : 0.0), i});
  auto reduce = [&](std::vector<ties::ValueIndex<double>> v) {
    while (v.size() > 1) {
      std::vector<ties::ValueIndex<double>> next;
      for (std::size_t i = 0; i + 1 < v.size(); i += 2) next.push_back(ties::argmin_merge(v[i], v[i + 1]));
      if (v.size() % 2) next.push_back(v.back());
      v = next;
    }
    return v[0];
  };
  const auto a = reduce(items);
  for (int s = 0; s < 5; ++s) {
    auto shuffled = items;
    std::shuffle(shuffled.begin(), shuffled.end(), g);
    const auto b = reduce(shuffled);
    EXPECT_EQ(a.index, b.index);
  }
  std::vector<double> vals;
  for (auto& it : items) vals.push_back(it.value);
  EXPECT_EQ(a.index, ties::argmin(vals.data(), std::int64_t(vals.size())));
}
