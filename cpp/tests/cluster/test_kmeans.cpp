#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "../neighbors/filter_test_util.hpp"
#include "../test_util.hpp"
#include "cluster/kmeans/kmeans_common.hpp"
#include "twinlearn/cluster/kmeans.hpp"

namespace {

tl::Context cpu(int threads = 0) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }
tl::Context gpu() { return tl::Context(tl::Device{tl::DeviceKind::CUDA, 0}, 0, tl::NumericMode::Identical, 0); }

template <class T>
std::vector<T> blobs(std::int64_t n, std::int64_t d, int centers, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<double> c(static_cast<std::size_t>(centers * d));
  for (auto& v : c) v = nd(rng) * 10;
  std::vector<T> X(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t b = static_cast<std::int64_t>(rng() % centers);
    for (std::int64_t f = 0; f < d; ++f) X[i * d + f] = static_cast<T>(c[b * d + f] + nd(rng));
  }
  return X;
}

template <class T>
struct Fit {
  std::vector<T> centers;
  std::vector<std::int32_t> labels;
  tl::KMeansResult r;
};

template <class T>
Fit<T> fit(const tl::Context& ctx, const std::vector<T>& X, std::int64_t n, std::int64_t d, const std::vector<T>* w,
           tl::KMeansParams p, const std::vector<double>* mean = nullptr) {
  Fit<T> f;
  f.centers.resize(static_cast<std::size_t>(p.n_clusters * d));
  f.labels.resize(static_cast<std::size_t>(n));
  tl::VectorView<const T> wv;
  if (w) wv = tl::VectorView<const T>(w->data(), n);
  f.r = tl::kmeans_fit<T>(ctx, tl::MatrixView<const T>(X.data(), n, d), wv, mean ? mean->data() : nullptr, nullptr, p,
                          f.centers.data(), f.labels.data());
  return f;
}

template <class T>
void expect_same(const Fit<T>& a, const Fit<T>& b) {
  EXPECT_EQ(0, std::memcmp(a.centers.data(), b.centers.data(), a.centers.size() * sizeof(T)));
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_TRUE(tltest::same_bits(a.r.inertia, b.r.inertia));
  EXPECT_EQ(a.r.n_iter, b.r.n_iter);
}

}  // namespace

TEST(KMeans, FindsSeparatedBlobs) {
  const std::int64_t n = 3000, d = 4;
  auto X = blobs<double>(n, d, 5, 1);
  tl::KMeansParams p;
  p.n_clusters = 5;
  p.n_init = 3;
  p.seed = 7;
  auto f = fit<double>(cpu(), X, n, d, nullptr, p);
  EXPECT_LT(f.r.inertia / n, 6.0);  // unit-variance blobs: about d per point
  EXPECT_GE(f.r.n_iter, 1);
}

TEST(KMeans, BitsDoNotDependOnThreadCount) {
  const std::int64_t n = 30011, d = 9;
  auto X = blobs<float>(n, d, 11, 2);
  std::vector<float> w(n);
  std::mt19937 rng(3);
  for (auto& v : w) v = 0.5f + (rng() % 100) / 50.0f;
  tl::KMeansParams p;
  p.n_clusters = 11;
  p.seed = 5;
  p.n_init = 2;
  auto ref = fit(cpu(1), X, n, d, &w, p);
  for (int t : {2, 3, 8}) expect_same(ref, fit(cpu(t), X, n, d, &w, p));
  p.init = tl::KMeansInit::Random;
  auto r1 = fit<float>(cpu(1), X, n, d, nullptr, p);
  expect_same(r1, fit<float>(cpu(4), X, n, d, nullptr, p));
}

TEST(KMeans, RejectsBadInput) {
  std::vector<double> X(6, 1.0);
  std::vector<double> c(8);
  std::vector<std::int32_t> l(3);
  tl::KMeansParams p;
  p.n_clusters = 4;
  EXPECT_THROW(tl::kmeans_fit<double>(cpu(), {X.data(), 3, 2}, {}, nullptr, nullptr, p, c.data(), l.data()),
               tl::ValueError);
  p.n_clusters = 0;
  EXPECT_THROW(tl::kmeans_fit<double>(cpu(), {X.data(), 3, 2}, {}, nullptr, nullptr, p, c.data(), l.data()),
               tl::ValueError);
}

TEST(KMeansCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t k : {3, 130, 300}) {
    const std::int64_t n = tltest::rows(20000) + k, d = 21;
    auto X = blobs<float>(n, d, 17, 10 + k);
    std::vector<float> w(n);
    for (std::int64_t i = 0; i < n; ++i) w[i] = 0.25f + static_cast<float>(i % 7);
    std::vector<double> mean(d, 0.0);
    for (std::int64_t f = 0; f < d; ++f) mean[f] = 0.1 * f;
    tl::KMeansParams p;
    p.n_clusters = k;
    p.seed = 99;
    p.max_iter = 25;
    p.n_init = 2;
    expect_same(fit(cpu(), X, n, d, &w, p, &mean), fit(gpu(), X, n, d, &w, p, &mean));
    p.init = tl::KMeansInit::Random;
    expect_same(fit<float>(cpu(), X, n, d, nullptr, p), fit<float>(gpu(), X, n, d, nullptr, p));
    const std::int64_t nd = tltest::rows(5000);
    auto Xd = blobs<double>(nd, 7, 4, 3);
    p.init = tl::KMeansInit::KMeansPlusPlus;
    p.n_clusters = std::min<std::int64_t>(k, 50);
    expect_same(fit<double>(cpu(), Xd, nd, 7, nullptr, p), fit<double>(gpu(), Xd, nd, 7, nullptr, p));
  }
}

// The certified assignment's rule (kmeans_common.hpp: certify_threshold),
// against the canonical nearest center of the CPU's chains: filter values
// xn + v(c) anywhere within the bound E of the canonical value q(c), here
// placed the worst way (the canonical nearest center E above, every other
// center E below, each rounded to float; and at random within E). A row the
// rule certifies must get the canonical nearest center. Rows of several
// kinds: blobs (most rows certified, so the test is not empty), rows close to
// ties (rounding decides), rows on a center (q clamped at 0), duplicated
// centers (never certified), and scales past the bound's range (never).
TEST(KMeansCertify, ThresholdKeepsTheCanonicalNearest) {
  const std::int64_t d = 16, k = 24, n = 3000;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(-1.0, 1.0);
  enum Kind { Blobs, NearTies, OnCenters, Duplicates, Tiny, Huge };
  for (int kind = Blobs; kind <= Huge; ++kind) {
    const double scale = kind == Tiny ? 0x1p-40 : kind == Huge ? 0x1p60 : 1.0;
    std::vector<float> C(static_cast<std::size_t>(k * d)), X(static_cast<std::size_t>(n * d));
    for (auto& v : C) v = static_cast<float>(nd(rng) * 4 * scale);
    if (kind == Duplicates)
      for (std::int64_t c = 1; c < k; c += 2) std::copy_n(&C[(c - 1) * d], d, &C[c * d]);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t c = static_cast<std::int64_t>(rng() % k), c2 = (c + 1) % k;
      for (std::int64_t f = 0; f < d; ++f) {
        double v = C[c * d + f] + nd(rng) * scale;
        if (kind == NearTies) v = 0.5 * (C[c * d + f] + C[c2 * d + f]) + 1e-7 * ud(rng) * scale;
        if (kind == OnCenters) v = C[c * d + f];
        X[i * d + f] = static_cast<float>(v);
      }
    }
    std::vector<float> cn;
    const float cn_max = tltest::row_sqnorms(C, d, cn);
    std::int64_t certified = 0;
    std::vector<float> q, qu;
    for (int mode = 0; mode < 2; ++mode) {
      for (std::int64_t i = 0; i < n; ++i) {
        const float* x = &X[i * d];
        const float xn = tl::dist::sqnorm(x, d);
        tltest::canonical_sq_rows(x, xn, C, cn, d, q, qu);
        std::int64_t best = 0;
        for (std::int64_t c = 1; c < k; ++c)
          if (tl::dist::nearer(q[c], c, q[best], best)) best = c;
        const double e = tltest::placed_slack(xn, cn_max);
        std::vector<float> v(k);
        for (std::int64_t c = 0; c < k; ++c) {
          const double off = mode == 0 ? (c == best ? e : -e) : e * ud(rng);
          v[c] = static_cast<float>(static_cast<double>(qu[c]) - xn + off);
        }
        std::int64_t a = 0;
        for (std::int64_t c = 1; c < k; ++c)
          if (v[c] < v[a]) a = c;
        float second = INFINITY;
        for (std::int64_t c = 0; c < k; ++c)
          if (c != a) second = std::min(second, v[c]);
        if (second > tl::detail::certify_threshold(v[a], xn, cn_max)) {
          ++certified;
          ASSERT_EQ(a, best) << "kind " << kind << " mode " << mode << " row " << i;
        }
      }
    }
    if (kind == Blobs) {
      EXPECT_GT(certified, n);  // most rows of both modes
    }
    if (kind == Duplicates || kind == Tiny || kind == Huge) {
      EXPECT_EQ(certified, 0) << "kind " << kind;
    }
  }
  // Two centers whose canonical values are both below 0 (so both clamp to 0
  // and the lower center, 0, is the canonical nearest), the filter placing
  // center 1 far below: the threshold's floor (-E - xn) keeps center 0 in
  // reach, so the row is not certified for center 1.
  const float xn = 1000.0f, cn_max = 1000.0f;
  const float e = tl::dist::kFilterSlack * (xn + cn_max);
  const float v0 = -0.5f - xn + e, v1 = -2.5f - xn - e;  // q = -0.5 and -2.5, each off by E
  EXPECT_FALSE(v0 > tl::detail::certify_threshold(v1, xn, cn_max));
}
