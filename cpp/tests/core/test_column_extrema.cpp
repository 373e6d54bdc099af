// Column extrema: NaN skipped, -0 below +0 whatever the order, and the same
// bits on the CPU (any thread count) and the GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/extrema.hpp"

namespace {

template <class T>
std::vector<tl::ColExtrema> extrema(const tl::Context& ctx, const std::vector<T>& x, std::int64_t rows,
                                    std::int64_t cols) {
  std::vector<tl::ColExtrema> out(static_cast<std::size_t>(cols));
  tl::column_extrema<T>(ctx, tl::MatrixView<const T>(x.data(), rows, cols), out.data());
  return out;
}

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(ColumnExtrema, MatchesReferenceAndSkipsNan) {
  // Column 0: values and NaN; column 1: all NaN; column 2: infinities.
  std::vector<double> x = {3, kNan, 1, -2, kNan, kInf, 7, kNan, -kInf, -9, kNan, 4};
  auto e = extrema(cpu(2), x, 4, 3);
  EXPECT_EQ(e[0].min, -9.0);
  EXPECT_EQ(e[0].max, 7.0);
  EXPECT_EQ(e[0].max_abs, 9.0);
  EXPECT_EQ(e[0].n, 4);
  EXPECT_TRUE(std::isnan(e[1].min) && std::isnan(e[1].max) && std::isnan(e[1].max_abs));
  EXPECT_EQ(e[1].n, 0);
  EXPECT_EQ(e[2].min, -kInf);
  EXPECT_EQ(e[2].max, kInf);
  EXPECT_EQ(e[2].n, 4);
}

// Separating test for the signed-zero rule: a "first occurrence" or a plain
// sequential std::min/std::max would return the sign of whichever zero comes
// first, so the two row orders below would give different bits (shown by the
// reference arm); the rule gives min = -0 and max = +0 for both orders, which
// is what makes the result independent of the reduction order.
TEST(ColumnExtrema, SignedZeroRuleIsOrderFree) {
  for (int order = 0; order < 2; ++order) {
    std::vector<double> x = {order ? -0.0 : 0.0, order ? 0.0 : -0.0};
    auto e = extrema(cpu(1), x, 2, 1);
    EXPECT_TRUE(std::signbit(e[0].min)) << "order " << order;
    EXPECT_FALSE(std::signbit(e[0].max)) << "order " << order;
    EXPECT_FALSE(std::signbit(e[0].max_abs)) << "order " << order;
  }
  // The wrong spelling: sequential std::min keeps the first of two equal
  // values.
  const double a = std::min(0.0, -0.0), b = std::min(-0.0, 0.0);
  EXPECT_NE(std::signbit(a), std::signbit(b)) << "fixture cannot separate the rule from first-occurrence";
}

TEST(ColumnExtrema, EmptyRowsGiveNan) {
  std::vector<float> x;
  auto e = extrema(cpu(1), x, 0, 2);
  EXPECT_TRUE(std::isnan(e[0].min));
  EXPECT_EQ(e[1].n, 0);
}

TEST(ColumnExtrema, BitsDoNotDependOnThreadCount) {
  const std::int64_t rows = 50003, cols = 3;
  auto base = tltest::hostile_column(rows * cols, 17);
  std::vector<float> x(base.begin(), base.end());
  for (std::size_t i = 0; i < x.size(); i += 7) x[i] = (i % 2) ? 0.0f : -0.0f;
  auto ref = extrema(cpu(1), x, rows, cols);
  for (int t : {2, 3, 8}) {
    auto e = extrema(cpu(t), x, rows, cols);
    for (std::int64_t j = 0; j < cols; ++j) {
      EXPECT_TRUE(tltest::same_bits(e[j].min, ref[j].min)) << "threads=" << t;
      EXPECT_TRUE(tltest::same_bits(e[j].max, ref[j].max)) << "threads=" << t;
      EXPECT_TRUE(tltest::same_bits(e[j].max_abs, ref[j].max_abs)) << "threads=" << t;
    }
  }
}

// The CPU backend ranks contiguous rows by order-preserving integer keys:
// its result must be push()'s on every entry, for NaN of either sign, -0,
// +0, infinities, subnormals and values of both signs, in float and double,
// with columns that hold only NaN or only zeros. Strided rows take the
// push() loop itself: the same results again.
template <class T>
void check_keys_match_push() {
  const std::int64_t rows = 3000, cols = 9;
  std::mt19937_64 gen(23);
  std::normal_distribution<double> nd;
  std::vector<T> x(static_cast<std::size_t>(rows * cols));
  const T nan = std::numeric_limits<T>::quiet_NaN(), tiny = std::numeric_limits<T>::denorm_min();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      T v = static_cast<T>(nd(gen) * (j + 1));
      switch (gen() % 11) {
        case 0: v = nan; break;
        case 1: v = -nan; break;
        case 2: v = T(-0.0); break;
        case 3: v = T(0.0); break;
        case 4: v = static_cast<T>(gen() % 2 ? 7 : -7) * tiny; break;
        case 5: v = j == 4 ? std::numeric_limits<T>::infinity() : v; break;
        default: break;
      }
      if (j == 6) v = nan;                                   // only NaN
      if (j == 7) v = (i % 2) ? T(0.0) : T(-0.0);            // only zeros
      if (j == 8) v = -std::fabs(v);                         // negative values
      x[static_cast<std::size_t>(i * cols + j)] = v;
    }
  std::vector<tl::ColExtrema> ref(static_cast<std::size_t>(cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      tl::extrema_detail::push(ref[j], static_cast<double>(x[static_cast<std::size_t>(i * cols + j)]));
  for (auto& e : ref) e = tl::extrema_detail::finish(e);
  auto got = extrema(cpu(2), x, rows, cols);
  // The same matrix as a strided view of a wider one (the push() loop).
  std::vector<T> wide(static_cast<std::size_t>(rows * cols * 2));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) wide[static_cast<std::size_t>(i * 2 * cols + 2 * j)] = x[i * cols + j];
  std::vector<tl::ColExtrema> strided(static_cast<std::size_t>(cols));
  tl::column_extrema<T>(cpu(2), tl::MatrixView<const T>(wide.data(), rows, cols, 2 * cols, 2, tl::Device{}), strided.data());
  for (std::int64_t j = 0; j < cols; ++j)
    for (const auto* e : {&got[j], &strided[j]}) {
      EXPECT_TRUE(tltest::same_bits(e->min, ref[j].min)) << "column " << j;
      EXPECT_TRUE(tltest::same_bits(e->max, ref[j].max)) << "column " << j;
      EXPECT_TRUE(tltest::same_bits(e->max_abs, ref[j].max_abs)) << "column " << j;
      EXPECT_EQ(e->n, ref[j].n) << "column " << j;
    }
}

TEST(ColumnExtrema, IntegerKeysMatchPushOnHostileData) {
  check_keys_match_push<float>();
  check_keys_match_push<double>();
}

TEST(ColumnExtremaCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  // 300001 rows: more chunks (294) than the merge kernel has threads.
  for (std::int64_t rows : {1, 7, 1024, 1025, 70001, 300001}) {
    for (std::int64_t cols : {1, 5, 33}) {
      if (rows > 100000 && cols > 5) continue;
      auto base = tltest::hostile_column(rows * cols, 5 + rows);
      std::vector<double> x(base.begin(), base.end());
      // Signed zeros in both orders, NaN (one column entirely), denormals.
      for (std::size_t i = 0; i < x.size(); i += 5) x[i] = (i / 5) % 2 ? 0.0 : -0.0;
      for (std::size_t i = 3; i < x.size(); i += 11) x[i] = kNan;
      for (std::int64_t i = 0; i < rows && cols > 2; ++i) x[i * cols + 2] = kNan;
      if (x.size() > 2) x[2] = std::numeric_limits<double>::denorm_min();
      std::vector<float> xf(x.begin(), x.end());
      auto a = extrema(cpu(3), x, rows, cols), b = extrema(gpu, x, rows, cols);
      auto af = extrema(cpu(3), xf, rows, cols), bf = extrema(gpu, xf, rows, cols);
      for (std::int64_t j = 0; j < cols; ++j) {
        EXPECT_TRUE(tltest::same_bits(a[j].min, b[j].min)) << rows << "x" << cols << " col " << j;
        EXPECT_TRUE(tltest::same_bits(a[j].max, b[j].max)) << rows << "x" << cols << " col " << j;
        EXPECT_TRUE(tltest::same_bits(a[j].max_abs, b[j].max_abs)) << rows << "x" << cols << " col " << j;
        EXPECT_EQ(a[j].n, b[j].n);
        EXPECT_TRUE(tltest::same_bits(af[j].min, bf[j].min)) << rows << "x" << cols << " col " << j;
        EXPECT_TRUE(tltest::same_bits(af[j].max, bf[j].max)) << rows << "x" << cols << " col " << j;
        EXPECT_TRUE(tltest::same_bits(af[j].max_abs, bf[j].max_abs)) << rows << "x" << cols << " col " << j;
      }
    }
  }
}
