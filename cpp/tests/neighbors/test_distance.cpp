#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "core/distance/distance_common.hpp"
#include "core/distance/distance_cpu.hpp"
#include "filter_test_util.hpp"
#include "twinlearn/neighbors/distance.hpp"

namespace {

tl::Context ctx_on(tl::Device dev, int threads = 0) { return tl::Context(dev, threads, tl::NumericMode::Identical, 0); }
tl::Context cpu(int threads = 0) { return ctx_on(tl::Device{}, threads); }
tl::Context gpu() { return ctx_on(tl::Device{tl::DeviceKind::CUDA, 0}); }

template <class T>
std::vector<T> random_matrix(std::int64_t n, std::int64_t d, std::uint64_t seed, double offset = 0.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<T> v(static_cast<std::size_t>(n * d));
  for (auto& x : v) x = static_cast<T>(nd(rng) * (rng() % 5 == 0 ? 30.0 : 1.0) + offset);
  return v;
}

// The spelled-out definition of distance.hpp, one pair at a time.
template <class T>
T reference_distance(const T* x, const T* y, std::int64_t d, tl::Metric m) {
  using namespace tl::dist;
  const T p = static_cast<T>(m.p);
  switch (family_of(m)) {
    case Family::Dot: {
      const T acc = accumulate<T, Family::Dot>(x, y, d, p);
      return output_value(m.kind, rank_value(m.kind, acc, sqnorm(x, d), sqnorm(y, d)), p);
    }
    case Family::L2: return output_value(m.kind, accumulate<T, Family::L2>(x, y, d, p), p);
    case Family::L1: return output_value(m.kind, accumulate<T, Family::L1>(x, y, d, p), p);
    case Family::Linf: return output_value(m.kind, accumulate<T, Family::Linf>(x, y, d, p), p);
    case Family::Lp: return output_value(m.kind, accumulate<T, Family::Lp>(x, y, d, p), p);
  }
  return T(0);
}

std::vector<tl::Metric> all_metrics() {
  std::vector<tl::Metric> ms;
  for (const char* n : {"euclidean", "sqeuclidean", "manhattan", "cosine", "chebyshev"}) ms.push_back(tl::parse_metric(n, 2));
  ms.push_back(tl::parse_metric("minkowski", 3.0));
  tl::Metric direct = tl::parse_metric("euclidean", 2);
  direct.direct = true;
  ms.push_back(direct);
  return ms;
}

// Every build of the CPU tiles (TWINLEARN_CPU_ISA: the AVX-512 one runs
// where the CPU has it), against panels of full tiles (301 rows: two panels)
// and of half tiles and single columns (20 rows: one panel 24 wide).
template <class T>
void expect_pairwise_matches_reference() {
  const std::int64_t m = 45, d = 37;
  for (const char* isa : {"avx2", "avx512"}) {
    setenv("TWINLEARN_CPU_ISA", isa, 1);
    for (std::int64_t n : {301, 20}) {
      auto X = random_matrix<T>(m, d, 1), Y = random_matrix<T>(n, d, 2);
      for (const tl::Metric& mt : all_metrics()) {
        std::vector<T> out(static_cast<std::size_t>(m * n));
        tl::pairwise_distances<T>(cpu(3), tl::MatrixView<const T>(X.data(), m, d),
                                  tl::MatrixView<const T>(Y.data(), n, d), mt, tl::MatrixView<T>(out.data(), m, n));
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            ASSERT_TRUE(tltest::same_bits(out[i * n + j], reference_distance(&X[i * d], &Y[j * d], d, mt)))
                << isa << " " << tl::to_string(mt.kind) << " direct=" << mt.direct << " n=" << n << " (" << i
                << ", " << j << ")";
      }
    }
  }
  unsetenv("TWINLEARN_CPU_ISA");
}

}  // namespace

TEST(Distance, PairwiseIsTheSpelledOutChainFloat) { expect_pairwise_matches_reference<float>(); }
TEST(Distance, PairwiseIsTheSpelledOutChainDouble) { expect_pairwise_matches_reference<double>(); }

// Separating arm for the test above: on its fixture a dot product spelled as
// separate multiply and add (what a contracting compiler would not produce,
// and a reordered sum would not either) gives other bits than the fma chain.
TEST(Distance, FmaChainDiffersFromMulAddOnFixture) {
  const std::int64_t d = 37;
  auto X = random_matrix<float>(45, d, 1), Y = random_matrix<float>(301, d, 2);
  int differ = 0;
  for (std::int64_t i = 0; i < 45; ++i)
    for (std::int64_t j = 0; j < 301; ++j) {
      float chain = 0.f, muladd = 0.f, reversed = 0.f;
      for (std::int64_t f = 0; f < d; ++f) {
        chain = std::fma(X[i * d + f], Y[j * d + f], chain);
        muladd = muladd + X[i * d + f] * Y[j * d + f];
      }
      for (std::int64_t f = d - 1; f >= 0; --f) reversed = std::fma(X[i * d + f], Y[j * d + f], reversed);
      differ += !tltest::same_bits(chain, muladd) && !tltest::same_bits(chain, reversed);
    }
  EXPECT_GT(differ, 100);
}

template <class T>
void expect_knn_is_sorted_reference(tl::Metric mt, std::int64_t k) {
  const std::int64_t n = 700, m = 33, d = 6;
  auto Y = random_matrix<T>(n, d, 3);
  for (std::int64_t i = 0; i < 100; ++i)  // duplicates: ties broken by index
    std::copy(&Y[i * d], &Y[i * d] + d, &Y[(n - 1 - i) * d]);
  auto Q = random_matrix<T>(m, d, 4);
  std::copy(&Y[5 * d], &Y[5 * d] + d, &Q[0]);
  std::vector<T> dist(static_cast<std::size_t>(m * k));
  std::vector<std::int64_t> ind(static_cast<std::size_t>(m * k));
  tl::knn_search<T>(cpu(2), tl::MatrixView<const T>(Y.data(), n, d), tl::MatrixView<const T>(Q.data(), m, d), mt, k,
                    dist.data(), ind.data());
  const T p = static_cast<T>(mt.p);
  for (std::int64_t q = 0; q < m; ++q) {
    std::vector<std::pair<T, std::int64_t>> all;
    for (std::int64_t j = 0; j < n; ++j) {
      using tl::dist::Family;
      const T *x = &Q[q * d], *y = &Y[j * d];
      T r = T(0);
      switch (tl::dist::family_of(mt)) {
        case Family::Dot:
          r = tl::dist::rank_value(mt.kind, tl::dist::accumulate<T, Family::Dot>(x, y, d, p), tl::dist::sqnorm(x, d),
                                   tl::dist::sqnorm(y, d));
          break;
        case Family::L2: r = tl::dist::accumulate<T, Family::L2>(x, y, d, p); break;
        case Family::L1: r = tl::dist::accumulate<T, Family::L1>(x, y, d, p); break;
        case Family::Linf: r = tl::dist::accumulate<T, Family::Linf>(x, y, d, p); break;
        case Family::Lp: r = tl::dist::accumulate<T, Family::Lp>(x, y, d, p); break;
      }
      all.push_back({r, j});
    }
    std::sort(all.begin(), all.end());
    for (std::int64_t t = 0; t < k; ++t) {
      ASSERT_EQ(ind[q * k + t], all[t].second) << "query " << q << " rank " << t;
      ASSERT_TRUE(tltest::same_bits(dist[q * k + t], tl::dist::output_value(mt.kind, all[t].first, p)));
    }
  }
}

// The CPU's vectorized distances and ranking keys (KMeans assignment) are
// dist::sq_from_dot and the scalar rank_key bit for bit, on values that
// exercise every branch of both: negative differences clamped to +0, -0
// kept, NaN (inf - inf) and its keys, infinities, subnormals; rank_keys
// gives the same keys from the values; first_key is the scan for the first
// position of a key.
template <class T>
void expect_keys_match_scalar() {
  using K = tl::detail::RankKey<T>;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T sub = std::numeric_limits<T>::denorm_min(), big = std::numeric_limits<T>::max();
  const std::vector<T> pool = {T(0), -T(0), T(1), T(2), T(0.5), T(3), sub, -sub, big, -big, inf, -inf, nan, T(1e-3)};
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t nc = 1 + static_cast<std::int64_t>(rng() % 70);
    std::vector<T> yn(static_cast<std::size_t>(nc)), dot(static_cast<std::size_t>(nc)), v(static_cast<std::size_t>(nc));
    std::vector<K> key(static_cast<std::size_t>(nc));
    const T xn = pool[rng() % pool.size()];
    for (std::int64_t j = 0; j < nc; ++j) {
      yn[j] = (rng() % 3) ? pool[rng() % pool.size()] : static_cast<T>(std::ldexp(double(rng() % 1000), -6));
      dot[j] = (rng() % 3) ? pool[rng() % pool.size()] : static_cast<T>(std::ldexp(double(rng() % 1000), -7));
    }
    const K kmin = tl::detail::sq_distances_and_keys<T>(xn, yn.data(), dot.data(), nc, v.data(), key.data());
    K want_min = tl::detail::kNanRankKey<T>;
    for (std::int64_t j = 0; j < nc; ++j) {
      const T want = tl::dist::sq_from_dot(xn, yn[j], dot[j]);
      ASSERT_TRUE(tltest::same_bits(v[j], want)) << trial << "," << j << ": " << v[j] << " vs " << want;
      ASSERT_EQ(key[j], tl::detail::rank_key(want)) << trial << "," << j;
      want_min = std::min(want_min, key[j]);
    }
    ASSERT_EQ(kmin, want_min);
    const std::int64_t first = std::find(key.begin(), key.end(), kmin) - key.begin();
    ASSERT_EQ((tl::detail::first_key<T>(key.data(), nc, kmin)), first);
    ASSERT_EQ((tl::detail::first_key<T>(key.data(), nc, K(-1))), nc);  // keys are >= 0: absent
    std::vector<K> key2(static_cast<std::size_t>(nc));
    ASSERT_EQ(tl::detail::rank_keys<T>(v.data(), nc, key2.data()), kmin);
    ASSERT_EQ(key2, key);
  }
}
TEST(Distance, VectorizedKeysAreTheScalarOnesFloat) { expect_keys_match_scalar<float>(); }
TEST(Distance, VectorizedKeysAreTheScalarOnesDouble) { expect_keys_match_scalar<double>(); }

TEST(Knn, CpuIsTheSortedReferenceWithIndexTies) {
  expect_knn_is_sorted_reference<double>(tl::parse_metric("euclidean", 2), 9);
  expect_knn_is_sorted_reference<float>(tl::parse_metric("sqeuclidean", 2), 40);
  expect_knn_is_sorted_reference<float>(tl::parse_metric("manhattan", 2), 300);
  expect_knn_is_sorted_reference<double>(tl::parse_metric("chebyshev", 2), 5);
  expect_knn_is_sorted_reference<float>(tl::parse_metric("minkowski", 3.0), 20);
  expect_knn_is_sorted_reference<float>(tl::parse_metric("cosine", 2), 7);
  tl::Metric direct = tl::parse_metric("euclidean", 2);
  direct.direct = true;
  expect_knn_is_sorted_reference<double>(direct, 11);
  expect_knn_is_sorted_reference<float>(tl::parse_metric("sqeuclidean", 2), 1);
}

TEST(Knn, BitsDoNotDependOnThreadCount) {
  const std::int64_t n = 5000, m = 300, d = 17, k = 12;
  auto Y = random_matrix<float>(n, d, 8), Q = random_matrix<float>(m, d, 9);
  std::vector<float> d1(m * k), d2(m * k);
  std::vector<std::int64_t> i1(m * k), i2(m * k);
  tl::knn_search<float>(cpu(1), {Y.data(), n, d}, {Q.data(), m, d}, tl::parse_metric("cosine", 2), k, d1.data(), i1.data());
  tl::knn_search<float>(cpu(5), {Y.data(), n, d}, {Q.data(), m, d}, tl::parse_metric("cosine", 2), k, d2.data(), i2.data());
  EXPECT_EQ(0, std::memcmp(d1.data(), d2.data(), d1.size() * sizeof(float)));
  EXPECT_EQ(i1, i2);
}

TEST(Knn, RejectsBadK) {
  std::vector<double> Y(10 * 2, 1.0), Q(2, 1.0), dd(11);
  std::vector<std::int64_t> ii(11);
  EXPECT_THROW(tl::knn_search<double>(cpu(), {Y.data(), 10, 2}, {Q.data(), 1, 2}, tl::parse_metric("euclidean", 2), 11,
                                      dd.data(), ii.data()),
               tl::ValueError);
  EXPECT_THROW(tl::parse_metric("hamming", 2), tl::ValueError);
  EXPECT_THROW(tl::parse_metric("minkowski", 0.5), tl::ValueError);
}

// ---------------------------------------------------------------------------
// CPU versus CUDA: the same bits (run by the CUDA test binary on a GPU).
// ---------------------------------------------------------------------------
template <class T>
void expect_cpu_gpu_pairwise_identical(std::int64_t m, std::int64_t n, std::int64_t d) {
  auto X = random_matrix<T>(m, d, 11, 3.0), Y = random_matrix<T>(n, d, 12);
  for (const tl::Metric& mt : all_metrics()) {
    std::vector<T> a(static_cast<std::size_t>(m * n)), b(static_cast<std::size_t>(m * n));
    tl::pairwise_distances<T>(cpu(), {X.data(), m, d}, {Y.data(), n, d}, mt, {a.data(), m, n});
    tl::pairwise_distances<T>(gpu(), {X.data(), m, d}, {Y.data(), n, d}, mt, {b.data(), m, n});
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(T))) << tl::to_string(mt.kind);
  }
}

TEST(DistanceCuda, PairwiseIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  expect_cpu_gpu_pairwise_identical<float>(300, 517, 37);
  expect_cpu_gpu_pairwise_identical<double>(129, 65, 70);
  expect_cpu_gpu_pairwise_identical<float>(1, 1, 1);
}

template <class T>
void expect_cpu_gpu_knn_identical(std::int64_t n, std::int64_t m, std::int64_t d, std::int64_t k) {
  auto Y = random_matrix<T>(n, d, 21), Q = random_matrix<T>(m, d, 22);
  for (std::int64_t i = 0; i < n / 10; ++i) std::copy(&Y[i * d], &Y[i * d] + d, &Y[(n - 1 - i) * d]);
  for (const tl::Metric& mt : all_metrics()) {
    if (mt.direct) continue;
    std::vector<T> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(m * k));
    std::vector<std::int64_t> ia(static_cast<std::size_t>(m * k)), ib(static_cast<std::size_t>(m * k));
    tl::knn_search<T>(cpu(), {Y.data(), n, d}, {Q.data(), m, d}, mt, k, a.data(), ia.data());
    tl::knn_search<T>(gpu(), {Y.data(), n, d}, {Q.data(), m, d}, mt, k, b.data(), ib.data());
    EXPECT_EQ(ia, ib) << tl::to_string(mt.kind) << " k=" << k;
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(T))) << tl::to_string(mt.kind);
  }
}

TEST(KnnCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  expect_cpu_gpu_knn_identical<float>(20011, 300, 64, 10);
  expect_cpu_gpu_knn_identical<float>(5000, 129, 13, 256);
  expect_cpu_gpu_knn_identical<double>(3001, 70, 9, 300);
  expect_cpu_gpu_knn_identical<float>(2000, 40, 5, 1024);
  expect_cpu_gpu_knn_identical<float>(10, 3, 2, 10);
}

// The certified nearest-neighbour search's rule (distance_common.hpp:
// knn_list_certified), against the canonical k nearest of the CPU's chains:
// filter values anywhere within the bound E of the canonical values, here
// placed the worst way (the canonical k nearest E above, every other row E
// below, each rounded to float and clamped at 0 as the filter's are; and at
// random within E). A query the rule certifies must have the canonical k
// nearest in its filter list of kl, and they must be the list's k nearest by
// canonical value. Queries of several kinds: uniform (most certified, so the
// test is not empty), clusters a rounding apart (ties decided by the last
// bits), queries on index rows (distances clamped at 0), duplicated rows,
// a shell (queries at the origin, 10 rows at one distance and 40 spread just
// beyond it, within 2E: where a rule with E for 2E certifies lists that miss
// one of the k nearest), and scales past the bound's range (never certified).
TEST(KnnCertify, ListHoldsTheCanonicalNearest) {
  const std::int64_t d = 12, n = 2000, m = 300, k = 10, kl = 26;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> ud(-1.0, 1.0);
  enum Kind { Uniform, Clusters, OnRows, Duplicates, Shell, Huge };
  for (int kind = Uniform; kind <= Huge; ++kind) {
    const double scale = kind == Huge ? 0x1p60 : 1.0;
    std::vector<float> Y(static_cast<std::size_t>(n * d)), Q(static_cast<std::size_t>(m * d));
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t f = 0; f < d; ++f) {
        double v = ud(rng) * scale;
        if (kind == Clusters && i % 8) v = Y[(i - i % 8) * d + f] * (1.0 + 1e-7 * ud(rng));
        if (kind == Duplicates && i >= n / 2) v = Y[(i - n / 2) * d + f];
        Y[i * d + f] = static_cast<float>(v);
      }
      if (kind == Shell) {
        // Squared norm 1 for rows 0-9, 1 + (0 .. 2E) for rows 10-49 (E for
        // the largest squared norm, 4), 4 for the rest.
        const double e = tl::dist::kFilterSlack * 4.0;
        const double target = i < 10 ? 1.0 : i < 50 ? 1.0 + 2.0 * e * static_cast<double>(i - 9) / 41.0 : 4.0;
        double s = 0.0;
        for (std::int64_t f = 0; f < d; ++f) s += static_cast<double>(Y[i * d + f]) * Y[i * d + f];
        for (std::int64_t f = 0; f < d; ++f) Y[i * d + f] = static_cast<float>(Y[i * d + f] * std::sqrt(target / s));
      }
    }
    for (std::int64_t q = 0; q < m; ++q)
      for (std::int64_t f = 0; f < d; ++f)
        Q[q * d + f] = kind == OnRows ? Y[(q * 7 % n) * d + f] : kind == Shell ? 0.0f : static_cast<float>(ud(rng) * scale);
    std::vector<float> yn;
    const float yn_max = tltest::row_sqnorms(Y, d, yn);
    std::int64_t certified = 0;
    std::vector<float> val, unclamped;
    for (int mode = 0; mode < 2; ++mode) {
      for (std::int64_t q = 0; q < m; ++q) {
        const float* x = &Q[q * d];
        const float xq = tl::dist::sqnorm(x, d);
        tltest::canonical_sq_rows(x, xq, Y, yn, d, val, unclamped);
        auto by = [](const std::vector<float>& v) {
          return [&v](std::int64_t a, std::int64_t b) { return tl::dist::nearer(v[a], a, v[b], b); };
        };
        std::vector<std::int64_t> canon(n);
        std::iota(canon.begin(), canon.end(), std::int64_t(0));
        std::sort(canon.begin(), canon.end(), by(val));
        std::vector<char> top(static_cast<std::size_t>(n), 0);
        for (std::int64_t t = 0; t < k; ++t) top[canon[t]] = 1;
        const double e = tltest::placed_slack(xq, yn_max);
        std::vector<float> fv(n);
        for (std::int64_t i = 0; i < n; ++i) {
          const double off = mode == 0 ? (top[i] ? e : -e) : e * ud(rng);
          fv[i] = std::max(static_cast<float>(static_cast<double>(unclamped[i]) + off), 0.0f);
        }
        std::vector<std::int64_t> list(n);
        std::iota(list.begin(), list.end(), std::int64_t(0));
        std::partial_sort(list.begin(), list.begin() + kl, list.end(), by(fv));
        if (!tl::dist::knn_list_certified(fv[list[k - 1]], fv[list[kl - 1]], xq, yn_max)) continue;
        ++certified;
        list.resize(kl);
        std::sort(list.begin(), list.end(), by(val));
        for (std::int64_t t = 0; t < k; ++t) ASSERT_EQ(list[t], canon[t]) << "kind " << kind << " query " << q;
      }
    }
    if (kind == Uniform) {
      EXPECT_GT(certified, m);  // most queries of both modes
    }
    if (kind == Huge) {
      EXPECT_EQ(certified, 0);
    }
  }
}
