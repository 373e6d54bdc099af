// Exact column order statistics: the k-th smallest value under the key
// order (NaN last, -0 below +0), identical on the CPU and the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/select.hpp"

namespace {

template <class T>
std::vector<T> select(const tl::Context& ctx, const std::vector<T>& x, std::int64_t rows, std::int64_t cols,
                      const std::vector<std::int64_t>& ranks) {
  const std::int64_t k = static_cast<std::int64_t>(ranks.size()) / cols;
  std::vector<T> out(ranks.size());
  tl::column_select<T>(ctx, tl::MatrixView<const T>(x.data(), rows, cols), ranks.data(), k, out.data());
  return out;
}

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

// Ranks 0, rows/3, rows/2, rows - 1 and -1 for every column.
std::vector<std::int64_t> some_ranks(std::int64_t rows, std::int64_t cols) {
  std::vector<std::int64_t> r;
  for (std::int64_t q : {std::int64_t(0), rows / 3, rows / 2, rows - 1, std::int64_t(-1)})
    for (std::int64_t j = 0; j < cols; ++j) r.push_back(q);
  return r;
}

template <class T>
std::vector<T> with_specials(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  auto base = tltest::hostile_column(rows * cols, seed);
  std::vector<T> x(base.begin(), base.end());
  for (std::size_t i = 0; i < x.size(); i += 9) x[i] = T(0) * T((i / 9) % 2 ? 1 : -1);  // +0 / -0
  for (std::size_t i = 4; i < x.size(); i += 13) x[i] = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t i = 6; i < x.size(); i += 29) x[i] = -std::numeric_limits<T>::quiet_NaN();      // negative NaN
  for (std::size_t i = 8; i < x.size(); i += 31) x[i] = T(std::round(static_cast<double>(x[i])));  // ties
  return x;
}

}  // namespace

TEST(ColumnSelect, KeyOrderIsTotalWithNanLast) {
  using tl::select_detail::to_key;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_LT(to_key(-inf), to_key(-1.0));
  EXPECT_LT(to_key(-1.0), to_key(-0.0));
  EXPECT_LT(to_key(-0.0), to_key(0.0));
  EXPECT_LT(to_key(0.0), to_key(std::numeric_limits<double>::denorm_min()));
  EXPECT_LT(to_key(1.0), to_key(inf));
  EXPECT_LT(to_key(inf), to_key(nan));
  EXPECT_EQ(to_key(nan), to_key(-nan));
  for (double v : {-3.5, -0.0, 0.0, 2.0, inf})
    EXPECT_TRUE(tltest::same_bits(tl::select_detail::from_key<double>(to_key(v)), v));
  EXPECT_TRUE(std::isnan(tl::select_detail::from_key<float>(to_key(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(ColumnSelect, MatchesSortedReference) {
  const std::int64_t rows = 301, cols = 4;
  auto x = with_specials<double>(rows, cols, 3);
  auto ranks = some_ranks(rows, cols);
  auto got = select(cpu(2), x, rows, cols, ranks);
  for (std::int64_t j = 0; j < cols; ++j) {
    std::vector<std::uint64_t> keys;
    for (std::int64_t i = 0; i < rows; ++i) keys.push_back(tl::select_detail::to_key(x[i * cols + j]));
    std::sort(keys.begin(), keys.end());
    for (std::size_t r = 0; r < ranks.size() / cols; ++r) {
      const std::int64_t q = ranks[r * cols + j];
      const double want =
          q >= 0 ? tl::select_detail::from_key<double>(keys[q]) : std::numeric_limits<double>::quiet_NaN();
      const double have = got[r * cols + j];
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(have));
      else
        EXPECT_TRUE(tltest::same_bits(want, have)) << "col " << j << " rank " << q;
    }
  }
}

TEST(ColumnSelect, NegativeZeroSortsBelowPositiveZero) {
  std::vector<float> x = {0.0f, -0.0f, 0.0f, -0.0f};
  auto got = select(cpu(1), x, 4, 1, {0, 1, 2, 3});
  EXPECT_TRUE(std::signbit(got[0]) && std::signbit(got[1]));
  EXPECT_FALSE(std::signbit(got[2]) || std::signbit(got[3]));
}

TEST(ColumnSelect, RejectsRanksOutOfRange) {
  std::vector<double> x = {1, 2, 3};
  std::vector<double> out(1);
  std::vector<std::int64_t> bad = {3};
  EXPECT_THROW(
      tl::column_select<double>(cpu(1), tl::MatrixView<const double>(x.data(), 3, 1), bad.data(), 1, out.data()),
      tl::ValueError);
  bad = {-2};
  EXPECT_THROW(
      tl::column_select<double>(cpu(1), tl::MatrixView<const double>(x.data(), 3, 1), bad.data(), 1, out.data()),
      tl::ValueError);
}

TEST(ColumnSelect, BitsDoNotDependOnThreadCount) {
  const std::int64_t rows = 4001, cols = 6;
  auto x = with_specials<float>(rows, cols, 9);
  auto ranks = some_ranks(rows, cols);
  auto ref = select(cpu(1), x, rows, cols, ranks);
  for (int t : {2, 5}) {
    auto got = select(cpu(t), x, rows, cols, ranks);
    for (std::size_t e = 0; e < ref.size(); ++e) EXPECT_TRUE(tltest::same_bits(ref[e], got[e])) << e;
  }
}

// Both GPU paths: columns sorted one by one (rows >= 2^15 or one column) and
// the segmented sort of many short columns.
TEST(ColumnSelectCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {2, 3}, {1000, 1}, {1000, 70}, {40000, 3}, {32768, 2}, {5, 600}}) {
    auto ranks = some_ranks(rows, cols);
    auto xd = with_specials<double>(rows, cols, 100 + rows);
    auto xf = with_specials<float>(rows, cols, 200 + rows);
    auto a = select(cpu(3), xd, rows, cols, ranks), b = select(gpu, xd, rows, cols, ranks);
    auto af = select(cpu(3), xf, rows, cols, ranks), bf = select(gpu, xf, rows, cols, ranks);
    for (std::size_t e = 0; e < a.size(); ++e) {
      EXPECT_TRUE(tltest::same_bits(a[e], b[e])) << rows << "x" << cols << " entry " << e;
      EXPECT_TRUE(tltest::same_bits(af[e], bf[e])) << rows << "x" << cols << " entry " << e;
    }
  }
}
