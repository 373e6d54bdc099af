#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/lane_reduce.hpp"
#include "twinlearn/core/reduce.hpp"
#include "twinlearn/core/tree.hpp"
#include "twinlearn/naive_bayes/gaussian_nb.hpp"

namespace {

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

std::vector<std::int64_t> labels_for(std::int64_t rows, std::int64_t n_classes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> y(static_cast<std::size_t>(rows));
  for (auto& v : y) v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n_classes));
  return y;
}

template <class T>
std::vector<tl::ColStat> class_stats(const tl::Context& ctx, const std::vector<T>& x, std::int64_t rows,
                                     std::int64_t cols, const std::vector<std::int64_t>& y, std::int64_t n_classes,
                                     const std::vector<T>* w) {
  std::vector<tl::ColStat> out(static_cast<std::size_t>(n_classes * cols));
  tl::VectorView<const T> wv;
  if (w) wv = tl::VectorView<const T>(w->data(), rows);
  tl::class_column_stats<T>(ctx, tl::MatrixView<const T>(x.data(), rows, cols), wv, y.data(), n_classes, out.data());
  return out;
}

void expect_same(const tl::ColStat& a, const tl::ColStat& b, const char* what) {
  EXPECT_TRUE(tltest::same_bits(a.w, b.w)) << what;
  EXPECT_TRUE(tltest::same_bits(a.mean, b.mean)) << what;
  EXPECT_TRUE(tltest::same_bits(a.m2, b.m2)) << what;
  EXPECT_EQ(a.n, b.n) << what;
}

}  // namespace

// The per-class statistics are column_stats over each class's rows gathered
// in row order, bit for bit, with and without weights; an empty class gives
// the empty statistic.
TEST(GaussianNBClassStats, EqualColumnStatsOfGatheredRows) {
  const std::int64_t rows = 9000, cols = 3, C = 4;
  auto base = tltest::hostile_column(rows * cols, 61);
  std::vector<double> x(base.begin(), base.end()), w(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) w[i] = 0.25 + (i % 5) * 0.5;
  auto y = labels_for(rows, C - 1, 62);  // class C - 1 stays empty
  for (bool weighted : {false, true}) {
    auto got = class_stats(cpu(3), x, rows, cols, y, C, weighted ? &w : nullptr);
    for (std::int64_t c = 0; c < C; ++c) {
      std::vector<double> xc, wc;
      for (std::int64_t i = 0; i < rows; ++i)
        if (y[i] == c) {
          xc.insert(xc.end(), x.begin() + i * cols, x.begin() + (i + 1) * cols);
          wc.push_back(w[i]);
        }
      const std::int64_t nc = static_cast<std::int64_t>(wc.size());
      std::vector<tl::ColStat> ref(static_cast<std::size_t>(cols));
      tl::VectorView<const double> wv;
      if (weighted) wv = tl::VectorView<const double>(wc.data(), nc);
      tl::column_stats<double>(cpu(1), tl::MatrixView<const double>(xc.data(), nc, cols), wv, ref.data());
      for (std::int64_t j = 0; j < cols; ++j) expect_same(got[c * cols + j], ref[j], "class vs gathered");
    }
    EXPECT_EQ(got[(C - 1) * cols].n, 0);
    EXPECT_EQ(got[(C - 1) * cols].w, 0.0);
  }
}

// Separating test: chunks are cut within each class. Cutting the chunks over
// the rows of X and skipping other classes' rows (the wrong spelling) gives
// different bits on this fixture.
TEST(GaussianNBClassStats, ChunksAreCutWithinEachClass) {
  const std::int64_t rows = 20000, C = 2;
  auto x = tltest::hostile_column(rows, 63);
  auto y = labels_for(rows, C, 64);
  auto got = class_stats<double>(cpu(2), x, rows, 1, y, C, nullptr);
  // Wrong spelling: global chunks of X, class-0 rows only within each.
  std::vector<tl::ColStat> parts;
  for (std::int64_t r0 = 0; r0 < rows; r0 += tl::kColStatsChunk) {
    tl::colstats_detail::ChunkAcc acc;
    for (std::int64_t i = r0; i < std::min(rows, r0 + tl::kColStatsChunk); ++i)
      if (y[i] == 0) tl::colstats_detail::push(acc, x[i], 1.0);
    parts.push_back(tl::colstats_detail::finish(acc));
  }
  tl::tree_reduce_inplace(parts.data(), static_cast<std::int64_t>(parts.size()), 1,
                          [](const tl::ColStat& a, const tl::ColStat& b) { return tl::colstats_detail::merge(a, b); });
  EXPECT_FALSE(tltest::same_bits(parts[0].mean, got[0].mean) && tltest::same_bits(parts[0].m2, got[0].m2))
      << "fixture cannot separate per-class chunks from global chunks";
}

TEST(GaussianNBClassStats, RejectsBadLabels) {
  std::vector<double> x = {1, 2, 3};
  std::vector<tl::ColStat> out(2);
  std::vector<std::int64_t> y = {0, 2, 1};
  EXPECT_THROW(
      tl::class_column_stats<double>(cpu(1), tl::MatrixView<const double>(x.data(), 3, 1), {}, y.data(), 2, out.data()),
      tl::ValueError);
}

TEST(GaussianNBJll, MatchesLaneOrderReference) {
  const std::int64_t rows = 50, cols = 70, C = 3;
  auto base = tltest::hostile_column(rows * cols, 65);
  std::vector<float> x(base.begin(), base.end());
  std::vector<double> theta(C * cols), var(C * cols), joint(C), nconst(C);
  for (std::int64_t e = 0; e < C * cols; ++e) {
    theta[e] = 0.1 * (e % 17);
    var[e] = 0.5 + (e % 11);
  }
  for (std::int64_t c = 0; c < C; ++c) {
    joint[c] = -1.0 - c;
    nconst[c] = -3.0 * c;
  }
  std::vector<double> out(rows * C);
  tl::gaussian_nb_jll<float>(cpu(2), tl::MatrixView<const float>(x.data(), rows, cols), theta.data(), var.data(),
                             joint.data(), nconst.data(), C, out.data());
  int differs_from_sequential = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t c = 0; c < C; ++c) {
      double lanes[32] = {}, seq = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        const double d = static_cast<double>(x[i * cols + j]) - theta[c * cols + j];
        const double t = d * d / var[c * cols + j];
        lanes[j % 32] += t;
        seq += t;
      }
      for (int off = 16; off > 0; off /= 2)
        for (int l = 0; l < off; ++l) lanes[l] += lanes[l + off];
      const double want = joint[c] + (nconst[c] - 0.5 * lanes[0]);
      EXPECT_TRUE(tltest::same_bits(out[i * C + c], want)) << i << "," << c;
      differs_from_sequential += !tltest::same_bits(want, joint[c] + (nconst[c] - 0.5 * seq));
    }
  EXPECT_GT(differs_from_sequential, 0) << "fixture cannot separate the lane order from the sequential one";
}

TEST(GaussianNBCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (auto [rows, cols, C] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {1, 1, 1}, {10, 3, 2}, {5000, 7, 3}, {30000, 40, 5}, {2100, 2, 9}}) {
    auto base = tltest::hostile_column(rows * cols, 70 + rows);
    std::vector<double> x(base.begin(), base.end());
    std::vector<float> xf(x.begin(), x.end());
    std::vector<double> w(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) w[i] = 0.5 + (i % 3);
    std::vector<float> wf(w.begin(), w.end());
    auto y = labels_for(rows, C, 71);
    for (bool weighted : {false, true}) {
      auto a = class_stats(cpu(3), x, rows, cols, y, C, weighted ? &w : nullptr);
      auto b = class_stats(gpu, x, rows, cols, y, C, weighted ? &w : nullptr);
      auto af = class_stats(cpu(3), xf, rows, cols, y, C, weighted ? &wf : nullptr);
      auto bf = class_stats(gpu, xf, rows, cols, y, C, weighted ? &wf : nullptr);
      for (std::size_t e = 0; e < a.size(); ++e) {
        expect_same(a[e], b[e], "double");
        expect_same(af[e], bf[e], "float");
      }
    }
    std::vector<double> theta(C * cols), var(C * cols), joint(C), nconst(C);
    for (std::int64_t e = 0; e < C * cols; ++e) {
      theta[e] = 0.3 * (e % 13) - 1;
      var[e] = 0.25 + (e % 7);
    }
    for (std::int64_t c = 0; c < C; ++c) {
      joint[c] = -0.7 * c;
      nconst[c] = -2.0 - c;
    }
    std::vector<double> ja(rows * C), jb(rows * C);
    tl::gaussian_nb_jll<float>(cpu(3), tl::MatrixView<const float>(xf.data(), rows, cols), theta.data(), var.data(),
                               joint.data(), nconst.data(), C, ja.data());
    tl::gaussian_nb_jll<float>(gpu, tl::MatrixView<const float>(xf.data(), rows, cols), theta.data(), var.data(),
                               joint.data(), nconst.data(), C, jb.data());
    for (std::size_t e = 0; e < ja.size(); ++e) ASSERT_TRUE(tltest::same_bits(ja[e], jb[e])) << e;
  }
}
