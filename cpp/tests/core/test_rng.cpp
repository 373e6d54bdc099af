// The counter-based generator: Philox4x32-10 known answers, the exact bit
// construction of derived draws, statistical sanity, thread-count invariance
// and the separating arm of rule 5.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/random.hpp"
#include "twinlearn/core/rng.hpp"

namespace {

tl::Context cpu_ctx(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

template <class T>
std::vector<T> uniform(int threads, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  tl::random_uniform<T>(cpu_ctx(threads), seed, stream, offset, tl::VectorView<T>(v.data(), n));
  return v;
}
template <class T>
std::vector<T> normal(int threads, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  tl::random_normal<T>(cpu_ctx(threads), seed, stream, offset, tl::VectorView<T>(v.data(), n));
  return v;
}
std::vector<std::int64_t> integers(int threads, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                                   std::int64_t high, std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  tl::random_integers(cpu_ctx(threads), seed, stream, offset, high, tl::VectorView<std::int64_t>(v.data(), n));
  return v;
}
std::vector<std::int64_t> permutation(int threads, std::uint64_t seed, std::uint64_t stream, std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  tl::random_permutation(cpu_ctx(threads), seed, stream, tl::VectorView<std::int64_t>(v.data(), n));
  return v;
}

}  // namespace

// Known-answer vectors of the Random123 distribution for philox4x32-10.
TEST(Philox, KnownAnswers) {
  auto b = tl::rng::philox4x32<10>(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(b.w[0], 0x6627e8d5u);
  EXPECT_EQ(b.w[1], 0xe169c58du);
  EXPECT_EQ(b.w[2], 0xbc57ac4cu);
  EXPECT_EQ(b.w[3], 0x9b00dbd8u);
  b = tl::rng::philox4x32<10>(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu);
  EXPECT_EQ(b.w[0], 0x408f276du);
  EXPECT_EQ(b.w[1], 0x41c83b0eu);
  EXPECT_EQ(b.w[2], 0xa20bc7c6u);
  EXPECT_EQ(b.w[3], 0x6d5451fdu);
  b = tl::rng::philox4x32<10>(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(b.w[0], 0xd16cfe09u);
  EXPECT_EQ(b.w[1], 0x94fdccebu);
  EXPECT_EQ(b.w[2], 0x5001e420u);
  EXPECT_EQ(b.w[3], 0x24126ea1u);
}

// The documented layout and bit constructions, spelled out independently.
TEST(Philox, DrawsFollowTheDocumentedLayout) {
  const std::uint64_t seed = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull;
  for (std::uint64_t p : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 12345ull, (1ull << 40) + 7}) {
    const std::uint64_t blk = p >> 2;
    const auto b = tl::rng::philox4x32<10>(std::uint32_t(blk), std::uint32_t(blk >> 32), std::uint32_t(stream),
                                           std::uint32_t(stream >> 32), std::uint32_t(seed),
                                           std::uint32_t(seed >> 32));
    const std::uint32_t w = b.w[p & 3];
    EXPECT_EQ(tl::rng::word32(seed, stream, p), w);
    EXPECT_EQ(tl::rng::uniform<float>(seed, stream, p), static_cast<float>(w >> 8) / 16777216.0f);
    const auto b2 = tl::rng::block(seed, stream, p >> 1);
    const std::uint64_t x = (std::uint64_t(b2.w[2 * (p & 1) + 1]) << 32) | b2.w[2 * (p & 1)];
    EXPECT_EQ(tl::rng::uniform<double>(seed, stream, p), static_cast<double>(x >> 11) / 9007199254740992.0);
  }
  // Retry lanes are distinct counters.
  const auto l0 = tl::rng::block(1, 2, 3, 0), l1 = tl::rng::block(1, 2, 3, 1);
  EXPECT_NE(l0.w[0], l1.w[0]);
}

TEST(Random, OffsetSelectsPositions) {
  const auto a = uniform<double>(2, 9, 4, 0, 1000);
  const auto b = uniform<double>(2, 9, 4, 337, 100);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(tltest::same_bits(a[337 + i], b[i]));
  const auto na = normal<float>(2, 9, 4, 0, 1000);
  const auto nb = normal<float>(2, 9, 4, 501, 100);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(tltest::same_bits(na[501 + i], nb[i]));
  EXPECT_NE(uniform<double>(1, 9, 5, 0, 1)[0], a[0]);  // another stream
  EXPECT_NE(uniform<double>(1, 10, 4, 0, 1)[0], a[0]);  // another seed
}

TEST(Random, UniformAndNormalMoments) {
  const std::int64_t n = 1 << 20;
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<double> u, z;
    if (pass == 0) {
      auto uf = uniform<float>(2, 1, 0, 0, n);
      auto zf = normal<float>(2, 1, 1, 0, n);
      u.assign(uf.begin(), uf.end());
      z.assign(zf.begin(), zf.end());
    } else {
      u = uniform<double>(2, 1, 0, 0, n);
      z = normal<double>(2, 1, 1, 0, n);
    }
    double mu = 0, m2 = 0, zm = 0, z2 = 0, z4 = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      EXPECT_TRUE(u[i] >= 0.0 && u[i] < 1.0);
      mu += u[i];
      m2 += u[i] * u[i];
      zm += z[i];
      z2 += z[i] * z[i];
      z4 += z[i] * z[i] * z[i] * z[i];
    }
    mu /= n;
    const double var = m2 / n - mu * mu;
    EXPECT_NEAR(mu, 0.5, 5 * std::sqrt(1.0 / 12 / n));
    EXPECT_NEAR(var, 1.0 / 12, 5 * std::sqrt(1.0 / 180 / n));
    EXPECT_NEAR(zm / n, 0.0, 5 / std::sqrt(double(n)));
    EXPECT_NEAR(z2 / n, 1.0, 5 * std::sqrt(2.0 / n));
    EXPECT_NEAR(z4 / n, 3.0, 5 * std::sqrt(96.0 / n));
  }
}

TEST(Random, IntegersChiSquare) {
  const std::int64_t n = 1 << 20;
  for (std::int64_t high : {1, 2, 10, 1000}) {
    const auto v = integers(2, 3, 7, 0, high, n);
    std::vector<double> count(static_cast<std::size_t>(high), 0.0);
    for (auto x : v) {
      ASSERT_TRUE(x >= 0 && x < high);
      count[x] += 1;
    }
    double chi2 = 0;
    const double e = double(n) / high;
    for (double c : count) chi2 += (c - e) * (c - e) / e;
    const double dof = double(high - 1);
    // mean dof, sd sqrt(2 dof): 6 sd above the mean fails
    EXPECT_LE(chi2, dof + 6 * std::sqrt(2 * dof) + 1e-9) << "high=" << high;
  }
  // A range that needs the whole 64-bit candidate: the top bits stay uniform.
  const std::int64_t big = (std::int64_t(1) << 62) + 12345;
  const auto v = integers(2, 3, 8, 0, big, 1 << 16);
  std::int64_t upper = 0;
  for (auto x : v) {
    ASSERT_TRUE(x >= 0 && x < big);
    upper += x >= big / 2;
  }
  EXPECT_NEAR(double(upper) / v.size(), 0.5, 5 * 0.5 / std::sqrt(double(v.size())));
}

// Lemire's rejection: with n = 3 * 2^62 the low half of x * n falls below
// the threshold (2^64 - n) mod n = 2^62 for a quarter of candidates, and
// those draws must come from a later candidate.
TEST(Random, IntegersRejectBiasedCandidates) {
  const std::uint64_t n = 3ull << 62;
  const std::uint64_t threshold = (0 - n) % n;
  EXPECT_EQ(threshold, 1ull << 62);
  int retried = 0;
  for (std::uint64_t p = 0; p < 2000; ++p) {
    const auto b = tl::rng::block(5, 6, p);
    const std::uint64_t x = (std::uint64_t(b.w[1]) << 32) | b.w[0];
    const std::uint64_t first = static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * n) >> 64);
    const std::uint64_t lo = x * n;
    const std::uint64_t got = tl::rng::integer(5, 6, p, n);
    EXPECT_LT(got, n);
    if (lo >= threshold) {
      EXPECT_EQ(got, first);
    } else {
      ++retried;
    }
  }
  EXPECT_GT(retried, 300);
}

TEST(Random, ThreadCountInvariant) {
  const std::int64_t n = 200003;
  for (int t : {2, 3, 8}) {
    EXPECT_EQ(uniform<float>(1, 42, 0, 5, n), uniform<float>(t, 42, 0, 5, n));
    EXPECT_EQ(normal<double>(1, 42, 0, 5, n), normal<double>(t, 42, 0, 5, n));
    EXPECT_EQ(integers(1, 42, 0, 5, 77, n), integers(t, 42, 0, 5, 77, n));
    EXPECT_EQ(permutation(1, 42, 0, n), permutation(t, 42, 0, n));
  }
}

// Rule 5, separating arm: generators tied to threads (one std::mt19937 per
// OpenMP thread, seeded by thread number, the usual shortcut) give other
// numbers when the thread count changes; ours do not (test above).
TEST(Random, ThreadTiedGeneratorDependsOnThreadCount) {
  auto thread_tied = [](int threads, std::int64_t n) {
    std::vector<std::uint32_t> out(static_cast<std::size_t>(n));
#pragma omp parallel num_threads(threads)
    {
      std::mt19937 g(1234u + static_cast<unsigned>(omp_get_thread_num()));
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) out[i] = g();
    }
    return out;
  };
  const std::int64_t n = 10000;
  EXPECT_NE(thread_tied(1, n), thread_tied(2, n));
  EXPECT_NE(thread_tied(2, n), thread_tied(3, n));
  EXPECT_EQ(uniform<float>(1, 1234, 0, 0, n), uniform<float>(3, 1234, 0, 0, n));
}

TEST(Random, PermutationIsUniform) {
  // All 24 orders of 4 elements over many streams.
  const int trials = 24 * 2000;
  std::vector<double> count(24, 0.0);
  for (int s = 0; s < trials; ++s) {
    auto p = permutation(1, 11, s, 4);
    std::vector<std::int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted, (std::vector<std::int64_t>{0, 1, 2, 3}));
    int code = 0;  // Lehmer code
    for (int i = 0; i < 4; ++i) {
      int smaller = 0;
      for (int j = i + 1; j < 4; ++j) smaller += p[j] < p[i];
      code = code * (4 - i) + smaller;
    }
    count[code] += 1;
  }
  double chi2 = 0;
  const double e = trials / 24.0;
  for (double c : count) chi2 += (c - e) * (c - e) / e;
  EXPECT_LE(chi2, 23 + 6 * std::sqrt(46.0));
  // A large permutation is a permutation.
  auto big = permutation(2, 1, 2, 100000);
  std::vector<char> seen(big.size(), 0);
  for (auto x : big) seen[x] = 1;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 100000);
}

TEST(Random, ChoiceMatchesDocumentedDefinitions) {
  const auto ctx = cpu_ctx(2);
  std::vector<std::int64_t> out(50), perm(1000);
  tl::random_choice(ctx, 8, 9, 1000, false, tl::VectorView<std::int64_t>(out.data(), 50));
  tl::random_permutation(ctx, 8, 9, tl::VectorView<std::int64_t>(perm.data(), 1000));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), perm.begin()));
  std::set<std::int64_t> distinct(out.begin(), out.end());
  EXPECT_EQ(distinct.size(), 50u);
  tl::random_choice(ctx, 8, 9, 1000, true, tl::VectorView<std::int64_t>(out.data(), 50));
  EXPECT_EQ(out, integers(1, 8, 9, 0, 1000, 50));
  EXPECT_THROW(tl::random_choice(ctx, 8, 9, 10, false, tl::VectorView<std::int64_t>(out.data(), 50)),
               tl::ValueError);
}

TEST(Random, WeightedWithReplacementFollowsWeights) {
  const std::vector<double> w = {1.0, 0.0, 2.0, 3.0, 0.0, 4.0};
  const std::int64_t k = 200000;
  std::vector<std::int64_t> out(k);
  tl::random_weighted_choice<double>(cpu_ctx(2), 3, 3, tl::VectorView<const double>(w.data(), 6), true,
                                     tl::VectorView<std::int64_t>(out.data(), k));
  std::vector<double> count(6, 0.0);
  for (auto x : out) count[x] += 1;
  EXPECT_EQ(count[1], 0.0);
  EXPECT_EQ(count[4], 0.0);
  double chi2 = 0;
  for (int i : {0, 2, 3, 5}) {
    const double e = k * w[i] / 10.0;
    chi2 += (count[i] - e) * (count[i] - e) / e;
  }
  EXPECT_LE(chi2, 3 + 6 * std::sqrt(6.0));
  // The canonical CDF: chunked prefix sums.
  std::vector<double> big(3000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = 1.0 + 1e-3 * double(i % 17);
  std::vector<double> cdf(big.size());
  tl::weighted_cdf(big.data(), std::int64_t(big.size()), cdf.data());
  double o = 0;
  for (std::int64_t c = 0; c * tl::kCdfChunk < std::int64_t(big.size()); ++c) {
    double s = 0;
    for (std::int64_t i = c * tl::kCdfChunk; i < std::min<std::int64_t>(big.size(), (c + 1) * tl::kCdfChunk); ++i) {
      s += big[i];
      EXPECT_TRUE(tltest::same_bits(cdf[i], o + s)) << i;
    }
    o += s;
  }
  EXPECT_THROW(tl::random_weighted_choice<double>(cpu_ctx(1), 1, 1, tl::VectorView<const double>(w.data(), 0), true,
                                                  tl::VectorView<std::int64_t>(out.data(), 1)),
               tl::ValueError);
  const std::vector<double> bad = {1.0, -1.0};
  EXPECT_THROW(tl::random_weighted_choice<double>(cpu_ctx(1), 1, 1, tl::VectorView<const double>(bad.data(), 2), true,
                                                  tl::VectorView<std::int64_t>(out.data(), 1)),
               tl::ValueError);
}

TEST(Random, WeightedWithoutReplacement) {
  const std::vector<float> w = {1.0f, 0.0f, 2.0f, 3.0f, 0.0f, 4.0f};
  // First draw probabilities are proportional to the weights.
  std::vector<double> first(6, 0.0);
  const int trials = 40000;
  for (int s = 0; s < trials; ++s) {
    std::vector<std::int64_t> out(4);
    tl::random_weighted_choice<float>(cpu_ctx(1), 5, s, tl::VectorView<const float>(w.data(), 6), false,
                                      tl::VectorView<std::int64_t>(out.data(), 4));
    std::set<std::int64_t> d(out.begin(), out.end());
    ASSERT_EQ(d.size(), 4u);
    ASSERT_EQ(d.count(1), 0u);
    ASSERT_EQ(d.count(4), 0u);
    first[out[0]] += 1;
  }
  double chi2 = 0;
  for (int i : {0, 2, 3, 5}) {
    const double e = trials * w[i] / 10.0;
    chi2 += (first[i] - e) * (first[i] - e) / e;
  }
  EXPECT_LE(chi2, 3 + 6 * std::sqrt(6.0));
  std::vector<std::int64_t> out(5);
  EXPECT_THROW(tl::random_weighted_choice<float>(cpu_ctx(1), 5, 0, tl::VectorView<const float>(w.data(), 6), false,
                                                 tl::VectorView<std::int64_t>(out.data(), 5)),
               tl::ValueError);
}
