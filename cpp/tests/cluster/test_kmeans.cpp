#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "../test_util.hpp"
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
    const std::int64_t n = 20000 + k, d = 21;
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
    auto Xd = blobs<double>(5000, 7, 4, 3);
    p.init = tl::KMeansInit::KMeansPlusPlus;
    p.n_clusters = std::min<std::int64_t>(k, 50);
    expect_same(fit<double>(cpu(), Xd, 5000, 7, nullptr, p), fit<double>(gpu(), Xd, 5000, 7, nullptr, p));
  }
}
