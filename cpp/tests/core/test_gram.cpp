#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "../test_util.hpp"
#include "core/gram/gram_common.hpp"
#include "gram_test_util.hpp"
#include "twinlearn/core/reduce.hpp"
#include "twinlearn/core/tree.hpp"

namespace {

tl::Context cpu(int threads, tl::NumericMode mode = tl::NumericMode::Identical) {
  return tl::Context(tl::Device{}, threads, mode, 0);
}

template <class T>
std::vector<double> run_gram(const tl::Context& ctx, const tltest::GramFixture<T>& f) {
  const std::int64_t D = f.d + f.t;
  std::vector<double> out(static_cast<std::size_t>(D * D));
  tl::gram<T>(ctx, f.xv(), f.yv(), f.wv(), f.offp(), out.data());
  return out;
}

template <class T>
std::vector<double> run_chunked(const tl::Context& ctx, const tltest::GramFixture<T>& f, std::int64_t chunk) {
  const std::int64_t D = f.d + f.t;
  std::vector<double> out(static_cast<std::size_t>(D * D));
  tl::gram_with_chunk_for_testing<T>(ctx, f.xv(), f.yv(), f.wv(), f.offp(), chunk, out.data());
  return out;
}

}  // namespace

// The streaming tree is the canonical pairwise tree for every leaf count.
TEST(Gram, TreeStackIsTheCanonicalTree) {
  const auto v = tltest::hostile_column(700, 11);
  for (std::int64_t n = 1; n <= 700; ++n) {
    std::vector<double> p(v.begin(), v.begin() + n);
    tl::tree_reduce_inplace(p.data(), n, 1, [](double a, double b) { return a + b; });
    tl::gram_detail::TreeStack st;
    for (std::int64_t i = 0; i < n; ++i) st.push(v[i]);
    ASSERT_TRUE(tltest::same_bits(st.result(), p[0])) << "n=" << n;
  }
}

// The kernel computes exactly the canonical order (bit for bit against the
// plain reference), with weights, offsets and targets, at block edges.
TEST(Gram, MatchesCanonicalReferenceBitwise) {
  for (std::int64_t D : {1, 5, 6, 7, 16, 17, 49}) {
    for (bool weighted : {false, true}) {
      const std::int64_t t = D > 3 ? 2 : 0;
      auto fd = tltest::gram_fixture<double>(9000, D - t, t, weighted, true, 3 + D);
      EXPECT_TRUE(tltest::same_bits_vec(run_gram(cpu(2), fd), tltest::gram_reference(fd, tl::kGramChunk)))
          << "double D=" << D << " weighted=" << weighted;
      auto ff = tltest::gram_fixture<float>(9000, D - t, t, weighted, !weighted, 5 + D);
      EXPECT_TRUE(tltest::same_bits_vec(run_gram(cpu(3), ff), tltest::gram_reference(ff, tl::kGramChunk)))
          << "float D=" << D << " weighted=" << weighted;
    }
  }
}

// Every build of the micro-kernel (portable, AVX2 6 x 8, AVX-512 12 x 8;
// TWINLEARN_CPU_ISA caps the choice, core/cpu/cpu_clones.hpp) computes
// the canonical order, over widths that end inside and on every kernel's
// block edges and over several of a chunk's cache-sized sub-blocks. On a CPU
// without AVX-512 the "avx512" pass runs the AVX2 kernel again.
TEST(Gram, EveryInstructionSetMatchesCanonicalReference) {
  for (const char* isa : {"baseline", "avx2", "avx512"}) {
    setenv("TWINLEARN_CPU_ISA", isa, 1);
    for (std::int64_t D : {1, 8, 12, 13, 24, 25, 64, 70}) {
      const std::int64_t t = D > 3 ? 1 : 0;
      auto fd = tltest::gram_fixture<double>(5000, D - t, t, true, true, 7 + D);
      EXPECT_TRUE(tltest::same_bits_vec(run_gram(cpu(2), fd), tltest::gram_reference(fd, tl::kGramChunk)))
          << isa << " double D=" << D;
      auto ff = tltest::gram_fixture<float>(5000, D - t, t, false, true, 9 + D);
      EXPECT_TRUE(tltest::same_bits_vec(run_gram(cpu(2), ff), tltest::gram_reference(ff, tl::kGramChunk)))
          << isa << " float D=" << D;
    }
  }
  unsetenv("TWINLEARN_CPU_ISA");
}

// Several batches (small chunks so that the chunk count exceeds a batch):
// the batched streaming tree equals the tree over all chunks at once.
TEST(Gram, BatchingDoesNotChangeBits) {
  auto f = tltest::gram_fixture<double>(2 * 256 * 3 + 5, 4, 1, true, true, 17);
  for (std::int64_t chunk : {1, 2, 3}) {
    EXPECT_TRUE(tltest::same_bits_vec(run_chunked(cpu(2), f, chunk), tltest::gram_reference(f, chunk)))
        << "chunk=" << chunk;
  }
}

TEST(Gram, AgreesWithLongDoubleProduct) {
  auto f = tltest::gram_fixture<double>(10000, 6, 1, true, true, 5);
  auto g = run_gram(cpu(2), f);
  const std::int64_t D = 7;
  for (std::int64_t j = 0; j < D; ++j) {
    for (std::int64_t k = 0; k < D; ++k) {
      long double s = 0, a = 0;
      for (std::int64_t i = 0; i < f.n; ++i) {
        const long double zj = ((j < 6 ? f.X[i * 6 + j] : f.Y[i]) - (long double)f.off[j]);
        const long double zk = ((k < 6 ? f.X[i * 6 + k] : f.Y[i]) - (long double)f.off[k]);
        s += f.w[i] * zj * zk;
        a += std::fabs((long double)(f.w[i] * zj * zk));
      }
      EXPECT_NEAR(g[j * D + k], (double)s, 1e-12 * (double)a) << j << "," << k;
    }
  }
}

TEST(Gram, SymmetricAndZeroRows) {
  auto f = tltest::gram_fixture<float>(5000, 20, 3, true, true, 9);
  auto g = run_gram(cpu(2), f);
  for (std::int64_t j = 0; j < 23; ++j)
    for (std::int64_t k = 0; k < 23; ++k) EXPECT_TRUE(tltest::same_bits(g[j * 23 + k], g[k * 23 + j]));
  tltest::GramFixture<double> empty;
  empty.d = 3;
  std::vector<double> out(9, -1.0);
  tl::gram<double>(cpu(1), empty.xv(), empty.yv(), empty.wv(), nullptr, out.data());
  for (double v : out) EXPECT_EQ(v, 0.0);
}

// Rule 1: the same bits for any thread count.
TEST(Gram, BitsDoNotDependOnThreadCount) {
  auto f = tltest::gram_fixture<float>(3 * 4096 + 77, 30, 2, true, true, 21);
  const auto ref = run_gram(cpu(1), f);
  for (int t : {2, 3, 8}) EXPECT_TRUE(tltest::same_bits_vec(run_gram(cpu(t), f), ref)) << "threads=" << t;
}

// Separating test for the chunk geometry: on this fixture a different chunk
// size (2048 rows, or one sequential chain over all rows) gives different
// bits, so a backend that chunked differently would fail the identity tests.
TEST(Gram, OtherChunkingGivesOtherBitsOnFixture) {
  auto f = tltest::gram_fixture<float>(5 * 4096 + 123, 12, 1, true, true, 33);
  const auto canon = run_gram(cpu(2), f);
  EXPECT_TRUE(tltest::same_bits_vec(run_chunked(cpu(2), f, tl::kGramChunk), canon));
  EXPECT_FALSE(tltest::same_bits_vec(run_chunked(cpu(2), f, 2048), canon));
  EXPECT_FALSE(tltest::same_bits_vec(run_chunked(cpu(2), f, f.n), canon));
  EXPECT_TRUE(tltest::same_bits_vec(tltest::gram_reference(f, tl::kGramChunk), canon));
  // For float64 data a separate multiply and add (no fma) changes the bits
  // too. (Products of float32 entries are exact in double, so there the two
  // spellings agree.)
  auto fd = tltest::gram_fixture<double>(5 * 4096 + 123, 12, 1, true, true, 35);
  const auto canon_d = run_gram(cpu(2), fd);
  EXPECT_TRUE(tltest::same_bits_vec(tltest::gram_reference(fd, tl::kGramChunk), canon_d));
  EXPECT_FALSE(tltest::same_bits_vec(tltest::gram_reference(fd, tl::kGramChunk, false), canon_d));
  EXPECT_FALSE(tltest::same_bits_vec(run_chunked(cpu(2), fd, 2048), canon_d));
}

// Separating test for the centring: the data are centred before the product
// (Zᵀ Z of X - offset), not corrected after (XᵀX - n·offset·offsetᵀ). On data
// far from the origin the uncentred float32 sums cancel, so the two
// spellings differ in most entries; PCA relies on the former.
TEST(Gram, CentringBeforeTheProductDiffersFromCorrectingAfterOnFixture) {
  auto f = tltest::gram_fixture<float>(3000, 8, 0, false, true, 41);
  for (auto& v : f.X) v += 1000.0f;
  for (std::int64_t j = 0; j < f.d; ++j) {
    double s = 0;
    for (std::int64_t i = 0; i < f.n; ++i) s += f.X[i * f.d + j];
    f.off[j] = static_cast<float>(s / static_cast<double>(f.n));
  }
  const auto centred = run_gram(cpu(2), f);
  auto raw_f = f;
  raw_f.off.clear();
  const auto raw = run_gram(cpu(2), raw_f);
  const std::int64_t d = f.d;
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < d; ++i)
    for (std::int64_t j = 0; j < d; ++j) {
      const double corrected = raw[i * d + j] - static_cast<double>(f.n) * f.off[i] * f.off[j];
      differ += !tltest::same_bits(corrected, centred[i * d + j]);
    }
  EXPECT_GT(differ, d * d / 2);
}

TEST(Gram, RejectsMismatchedShapes) {
  auto f = tltest::gram_fixture<double>(10, 2, 1, true, false, 1);
  std::vector<double> out(9);
  std::vector<double> y(5);
  EXPECT_THROW(tl::gram<double>(cpu(1), f.xv(), tl::MatrixView<const double>(y.data(), 5, 1), f.wv(), nullptr,
                                out.data()),
               tl::ValueError);
  EXPECT_THROW(tl::gram<double>(cpu(1), f.xv(), f.yv(), tl::VectorView<const double>(f.w.data(), 4), nullptr,
                                out.data()),
               tl::ValueError);
}

namespace {

template <class T>
std::vector<double> run_moments(const tl::Context& ctx, const tltest::GramFixture<T>& f, bool center,
                                std::vector<tl::ColStat>& stats, tl::NumericMode* mode = nullptr) {
  const std::int64_t D = f.d + f.t;
  std::vector<double> out(static_cast<std::size_t>(D * D));
  stats.assign(static_cast<std::size_t>(D), tl::ColStat{});
  const tl::NumericMode m = tl::gram_moments<T>(ctx, f.xv(), f.yv(), center, out.data(), stats.data());
  if (mode) *mode = m;
  return out;
}

}  // namespace

// On the CPU, in every mode, gram_moments is column_stats of X and of Y, then
// gram with the means rounded to T as offsets (or none): the canonical bits.
TEST(GramMoments, CpuIsColumnStatsThenGram) {
  for (bool center : {true, false})
    for (auto mode : {tl::NumericMode::Identical, tl::NumericMode::Fast}) {
      auto f = tltest::gram_fixture<float>(9000, 7, 2, false, false, 5);
      std::vector<tl::ColStat> stats, sx(7), sy(2);
      tl::NumericMode got;
      const auto G = run_moments(cpu(2, mode), f, center, stats, &got);
      EXPECT_EQ(got, tl::NumericMode::Identical);
      tl::column_stats<float>(cpu(1), f.xv(), {}, sx.data());
      tl::column_stats<float>(cpu(1), f.yv(), {}, sy.data());
      for (std::int64_t c = 0; c < 9; ++c) {
        const tl::ColStat& want = c < 7 ? sx[c] : sy[c - 7];
        EXPECT_TRUE(tltest::same_bits(stats[c].mean, want.mean) && tltest::same_bits(stats[c].m2, want.m2) &&
                    stats[c].n == want.n)
            << c;
        if (center) f.off.push_back(static_cast<float>(want.mean));
      }
      EXPECT_TRUE(tltest::same_bits_vec(G, run_gram(cpu(3), f))) << "center=" << center;
    }
}

// The fast path's host step: from the sums of z = X - x0 (and u = Y - y0),
// x0 and y0 the first row, the Gram matrix centred at the means (or not
// centred) and the statistics, checked against sums in long double. The
// data sit 1000 from the origin, so leaving out the s sᵀ / n correction,
// or a term of the uncentred one, or taking the shift for the mean, is far off.
TEST(GramMoments, CentreMomentsIsTheCentredGram) {
  const std::int64_t n = 500, d = 5, t = 2, D = d + t, ldz = 8, w = 1 + t;
  auto f = tltest::gram_fixture<double>(n, d, t, false, false, 9);
  for (auto& v : f.X) v += 1000.0;
  auto at = [&](std::int64_t i, std::int64_t c) { return c < d ? f.X[i * d + c] : f.Y[i * t + c - d]; };
  std::vector<double> x0(D), C(ldz * ldz, 0.0), m(ldz * w + t + t * t, 0.0);
  for (std::int64_t c = 0; c < D; ++c) x0[c] = at(0, c);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < D; ++j) {
      const double zj = at(i, j) - x0[j];
      if (j < d) {
        m[j * w] += zj;
      } else {
        m[ldz * w + (j - d)] += zj;
      }
      for (std::int64_t k = j; k < D; ++k) {
        const double p = zj * (at(i, k) - x0[k]);
        if (k < d) {
          C[j + k * ldz] += p;
        } else if (j < d) {
          m[j * w + 1 + (k - d)] += p;
        } else {
          m[ldz * w + t + (j - d) * t + (k - d)] += p;
        }
      }
    }
  std::vector<long double> mean(D, 0.0L);
  for (std::int64_t c = 0; c < D; ++c) {
    for (std::int64_t i = 0; i < n; ++i) mean[c] += at(i, c);
    mean[c] /= n;
  }
  for (bool center : {true, false}) {
    std::vector<double> G(D * D);
    std::vector<tl::ColStat> st(D);
    ASSERT_TRUE(tl::gram_detail::centre_moments(n, d, t, ldz, C.data(), m.data(), x0.data(), center, G.data(),
                                                st.data()));
    for (std::int64_t c = 0; c < D; ++c) {
      EXPECT_NEAR(st[c].mean, static_cast<double>(mean[c]), 1e-12 * std::fabs(static_cast<double>(mean[c])));
      EXPECT_EQ(st[c].n, n);
    }
    for (std::int64_t j = 0; j < D; ++j)
      for (std::int64_t k = 0; k < D; ++k) {
        long double g = 0.0L, raw = 0.0L;
        for (std::int64_t i = 0; i < n; ++i) {
          g += (at(i, j) - mean[j]) * (at(i, k) - mean[k]);
          raw += static_cast<long double>(at(i, j)) * at(i, k);
        }
        const double want = static_cast<double>(center ? g : raw);
        EXPECT_NEAR(G[j * D + k], want, 1e-9 * std::sqrt(G[j * D + j] * G[k * D + k])) << j << k << center;
        if (j == k) {
          EXPECT_NEAR(st[j].m2, static_cast<double>(g), 1e-9 * static_cast<double>(g));
        }
      }
  }
  std::vector<double> G(D * D);
  std::vector<tl::ColStat> st(D);
  m[0] = std::nan("");
  EXPECT_FALSE(tl::gram_detail::centre_moments(n, d, t, ldz, C.data(), m.data(), x0.data(), true, G.data(),
                                               st.data()));
}
