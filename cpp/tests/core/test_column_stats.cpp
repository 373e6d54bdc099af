#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/colstats.hpp"
#include "twinlearn/core/reduce.hpp"
#include "twinlearn/core/tree.hpp"

namespace {

std::vector<tl::ColStat> stats(const tl::Context& ctx, const std::vector<double>& x, std::int64_t rows,
                               std::int64_t cols, const std::vector<double>* w = nullptr) {
  std::vector<tl::ColStat> out(static_cast<std::size_t>(cols));
  tl::VectorView<const double> wv;
  if (w) wv = tl::VectorView<const double>(w->data(), rows);
  tl::column_stats<double>(ctx, tl::MatrixView<const double>(x.data(), rows, cols), wv, out.data());
  return out;
}

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

}  // namespace

TEST(ColumnStats, MatchesTwoPassReference) {
  const std::int64_t rows = 5000, cols = 3;
  std::vector<double> x(rows * cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) x[i * cols + j] = std::sin(0.1 * i + j) * (j + 1) + 10 * j;
  auto s = stats(cpu(2), x, rows, cols);
  for (std::int64_t j = 0; j < cols; ++j) {
    double m = 0;
    for (std::int64_t i = 0; i < rows; ++i) m += x[i * cols + j];
    m /= rows;
    double v = 0;
    for (std::int64_t i = 0; i < rows; ++i) v += (x[i * cols + j] - m) * (x[i * cols + j] - m);
    EXPECT_NEAR(s[j].mean, m, 1e-12 * (1 + std::abs(m)));
    EXPECT_NEAR(s[j].m2 / s[j].w, v / rows, 1e-10);
    EXPECT_EQ(s[j].n, rows);
  }
}

TEST(ColumnStats, SkipsNanAndCountsInf) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {1, nan, 2, inf, 3, 4};
  auto s = stats(cpu(1), x, 3, 2);
  EXPECT_EQ(s[0].n, 3);
  EXPECT_DOUBLE_EQ(s[0].mean, 2.0);
  EXPECT_EQ(s[1].n, 1);
  EXPECT_EQ(s[1].n_inf, 1);
  EXPECT_DOUBLE_EQ(s[1].mean, 4.0);
}

TEST(ColumnStats, WeightsActLikeRepetition) {
  std::vector<double> x = {1, 2, 3}, w = {1, 2, 3};
  std::vector<double> xr = {1, 2, 2, 3, 3, 3};
  auto a = stats(cpu(1), x, 3, 1, &w);
  auto b = stats(cpu(1), xr, 6, 1);
  EXPECT_DOUBLE_EQ(a[0].w, 6.0);
  EXPECT_NEAR(a[0].mean, b[0].mean, 1e-15);
  EXPECT_NEAR(a[0].m2, b[0].m2, 1e-13);
}

// Rule 1 (fixed order): the same bits for any thread count.
TEST(ColumnStats, BitsDoNotDependOnThreadCount) {
  const std::int64_t rows = 100003, cols = 2;
  auto c0 = tltest::hostile_column(rows * cols, 7);
  auto ref = stats(cpu(1), c0, rows, cols);
  for (int t : {2, 3, 8}) {
    auto s = stats(cpu(t), c0, rows, cols);
    for (std::int64_t j = 0; j < cols; ++j) {
      EXPECT_TRUE(tltest::same_bits(s[j].mean, ref[j].mean)) << "threads=" << t;
      EXPECT_TRUE(tltest::same_bits(s[j].m2, ref[j].m2)) << "threads=" << t;
    }
  }
}

// Separating test for rule 1: on this fixture a plain sequential sum over all
// rows gives different bits from the canonical chunk-then-tree order, so a
// backend that used the sequential order would fail the CPU-vs-GPU identity
// tests, and this test shows the fixture is able to tell them apart.
TEST(ColumnStats, CanonicalOrderDiffersFromSequentialOnFixture) {
  const std::int64_t rows = 100003;
  auto x = tltest::hostile_column(rows, 11);
  auto s = stats(cpu(4), x, rows, 1);
  double k = x[0], s0 = 0, s1 = 0;
  for (double v : x) {
    s0 += 1;
    s1 += v - k;
  }
  const double sequential_mean = k + s1 / s0;
  EXPECT_FALSE(tltest::same_bits(sequential_mean, s[0].mean))
      << "fixture cannot separate the sequential order from the canonical one";
}

namespace {

// colstats.hpp's definition spelled out the plain way: push() per entry in
// row order within each chunk, finish(), then the pairwise tree of merge().
template <class T>
std::vector<tl::ColStat> plain_stats(const std::vector<T>& x, std::int64_t rows, std::int64_t cols,
                                     std::int64_t ld, const std::vector<T>* w) {
  using namespace tl::colstats_detail;
  const std::int64_t nch = tl::colstats_num_chunks(rows);
  std::vector<tl::ColStat> out(static_cast<std::size_t>(cols));
  for (std::int64_t j = 0; j < cols; ++j) {
    std::vector<tl::ColStat> parts(static_cast<std::size_t>(nch));
    for (std::int64_t c = 0; c < nch; ++c) {
      ChunkAcc a;
      for (std::int64_t i = c * tl::kColStatsChunk; i < std::min(rows, (c + 1) * tl::kColStatsChunk); ++i)
        push(a, static_cast<double>(x[i * ld + j]), w ? static_cast<double>((*w)[i]) : 1.0);
      parts[c] = finish(a);
    }
    tl::tree_reduce_inplace(parts.data(), nch, 1, [](const tl::ColStat& a, const tl::ColStat& b) { return merge(a, b); });
    out[j] = parts[0];
  }
  return out;
}

template <class T>
void expect_same_stats(const std::vector<tl::ColStat>& a, const std::vector<tl::ColStat>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t j = 0; j < a.size(); ++j) {
    EXPECT_TRUE(tltest::same_bits(a[j].w, b[j].w) && tltest::same_bits(a[j].mean, b[j].mean) &&
                tltest::same_bits(a[j].m2, b[j].m2) && a[j].n == b[j].n && a[j].n_inf == b[j].n_inf)
        << what << " column " << j << ": mean " << a[j].mean << " vs " << b[j].mean << ", m2 " << a[j].m2 << " vs "
        << b[j].m2 << ", n " << a[j].n << " vs " << b[j].n << ", n_inf " << a[j].n_inf << " vs " << b[j].n_inf;
  }
}

// Hostile columns: wide magnitudes, NaN and infinities (often at a chunk's
// first rows, so the shift is a later row's value), columns without a
// finite entry in some chunks, overflowing differences, zero and -0.0 weights.
template <class T>
std::vector<T> hostile_matrix(std::int64_t rows, std::int64_t ld, std::uint64_t seed) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const auto base = tltest::hostile_column(rows * ld, seed);
  std::vector<T> x(base.begin(), base.end());
  std::mt19937_64 rng(seed + 1);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < ld; ++j) {
      T& v = x[i * ld + j];
      const std::int64_t r = i % tl::kColStatsChunk;
      const unsigned u = static_cast<unsigned>(rng() % 64);
      if (j % 5 == 1 && r < 3) v = (r == 1) ? -inf : nan;  // a chunk's first rows not finite
      else if (j % 7 == 2 && (i / tl::kColStatsChunk) % 2 == 1) v = (u < 32) ? nan : inf;  // no finite entry
      else if (u == 0) v = nan;
      else if (u == 1) v = (rng() % 2) ? inf : -inf;
      else if (u == 2) v = static_cast<T>((rng() % 2) ? 1 : -1) * std::numeric_limits<T>::max();
      else if (u == 3) v = static_cast<T>(0.0) * static_cast<T>(-1);
    }
  return x;
}

}  // namespace

// The CPU loop (all columns side by side, branch-free) gives the bits of
// push() entry by entry, for float and double, with and without weights, on
// contiguous rows and on rows with a stride (a column slice).
TEST(ColumnStats, CpuLoopIsPushEntryByEntry) {
  const std::int64_t rows = 3 * tl::kColStatsChunk + 357;
  for (std::int64_t cols : {1, 3, 17, 64}) {
    const std::int64_t ld = cols + (cols % 2);  // odd column counts: rows with a stride
    const auto xd = hostile_matrix<double>(rows, ld, 100 + cols);
    const auto xf = hostile_matrix<float>(rows, ld, 200 + cols);
    std::vector<double> wd(static_cast<std::size_t>(rows));
    std::mt19937_64 rng(cols);
    for (auto& v : wd) v = (rng() % 9 == 0) ? ((rng() % 2) ? 0.0 : -0.0) : 0.25 + static_cast<double>(rng() % 1000) / 7.0;
    const std::vector<float> wf(wd.begin(), wd.end());
    for (bool weighted : {false, true}) {
      std::vector<tl::ColStat> got(static_cast<std::size_t>(cols));
      tl::column_stats<double>(cpu(2), tl::MatrixView<const double>(xd.data(), rows, cols, ld, 1, tl::Device{}),
                               weighted ? tl::VectorView<const double>(wd.data(), rows) : tl::VectorView<const double>(),
                               got.data());
      expect_same_stats<double>(got, plain_stats(xd, rows, cols, ld, weighted ? &wd : nullptr), "double");
      tl::column_stats<float>(cpu(3), tl::MatrixView<const float>(xf.data(), rows, cols, ld, 1, tl::Device{}),
                              weighted ? tl::VectorView<const float>(wf.data(), rows) : tl::VectorView<const float>(),
                              got.data());
      expect_same_stats<float>(got, plain_stats(xf, rows, cols, ld, weighted ? &wf : nullptr), "float");
    }
  }
}
