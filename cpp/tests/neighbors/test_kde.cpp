#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "neighbors/kde/kde_common.hpp"
#include "twinlearn/core/tree.hpp"
#include "twinlearn/neighbors/kde.hpp"

namespace {

tl::Context ctx_on(tl::Device dev, int threads = 0) { return tl::Context(dev, threads, tl::NumericMode::Identical, 0); }
tl::Context cpu(int threads = 0) { return ctx_on(tl::Device{}, threads); }
tl::Context gpu() { return ctx_on(tl::Device{tl::DeviceKind::CUDA, 0}); }

template <class T>
std::vector<T> random_values(std::int64_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

const tl::KdeKernel kKernels[] = {tl::KdeKernel::Gaussian, tl::KdeKernel::Tophat, tl::KdeKernel::Epanechnikov,
                                  tl::KdeKernel::Exponential, tl::KdeKernel::Linear, tl::KdeKernel::Cosine};

std::vector<tl::Metric> kde_metrics() {
  return {tl::parse_metric("euclidean", 2), tl::parse_metric("manhattan", 1), tl::parse_metric("chebyshev", 2),
          tl::parse_metric("minkowski", 3.0)};
}

// The definition of kde.hpp, spelled out one query at a time: every term by
// kde::term from the metric's chain, in the canonical order of reduce.hpp.
template <class T>
T reference_log_sum(const T* x, const T* Y, const T* w, std::int64_t n, std::int64_t d, tl::Metric mt,
                    tl::KdeKernel k, double h) {
  using namespace tl;
  kde::Params<T> c{k, mt.kind, static_cast<T>(mt.p), static_cast<T>(h), num::mul(static_cast<T>(h), static_cast<T>(h))};
  auto acc_of = [&](std::int64_t j) {
    const T* y = Y + j * d;
    switch (kde::family_of(mt.kind)) {
      case dist::Family::L1: return dist::accumulate<T, dist::Family::L1>(x, y, d, c.p);
      case dist::Family::Linf: return dist::accumulate<T, dist::Family::Linf>(x, y, d, c.p);
      case dist::Family::Lp: return dist::accumulate<T, dist::Family::Lp>(x, y, d, c.p);
      default: return dist::accumulate<T, dist::Family::L2>(x, y, d, c.p);
    }
  };
  auto canonical = [&](kde::Pass pass, T shift) {
    std::vector<T> chunks;
    for (std::int64_t c0 = 0; c0 < n; c0 += 2048) {
      std::vector<T> lanes(256, kde::identity<T>(pass));
      for (int s = 0; s < 8; ++s)
        for (int l = 0; l < 256; ++l) {
          const std::int64_t j = c0 + 256 * s + l;
          if (j < n) lanes[l] = kde::merge(pass, lanes[l], kde::term(c, pass, acc_of(j), w != nullptr, w ? w[j] : T(1), shift));
        }
      tree_reduce_inplace(lanes.data(), 256, 1, [pass](T a, T b) { return kde::merge(pass, a, b); });
      chunks.push_back(lanes[0]);
    }
    tree_reduce_inplace(chunks.data(), static_cast<std::int64_t>(chunks.size()), 1,
                        [pass](T a, T b) { return kde::merge(pass, a, b); });
    return chunks[0];
  };
  if (kde_kernel_is_log(k)) {
    const T m = canonical(kde::Pass::Max, T(0));
    if (m == kde::neg_inf<T>()) return m;
    return num::add(m, num::log(canonical(kde::Pass::Sum, m)));
  }
  const T s = canonical(kde::Pass::Sum, T(0));
  return s > T(0) ? num::log(s) : kde::neg_inf<T>();
}

template <class T>
void expect_matches_reference(std::int64_t n, std::int64_t m, std::int64_t d, bool weighted) {
  auto Y = random_values<T>(n * d, 1), Q = random_values<T>(m * d, 2), w = random_values<T>(n, 3, 0.0, 2.0);
  const double h = 0.2 * d;
  for (const tl::Metric& mt : kde_metrics())
    for (tl::KdeKernel k : kKernels) {
      std::vector<T> got(static_cast<std::size_t>(m));
      tl::kde_log_sum<T>(cpu(3), {Y.data(), n, d}, weighted ? w.data() : nullptr, {Q.data(), m, d}, mt, k, h,
                         got.data());
      for (std::int64_t i = 0; i < m; ++i) {
        const T ref = reference_log_sum<T>(Q.data() + i * d, Y.data(), weighted ? w.data() : nullptr, n, d, mt, k, h);
        ASSERT_TRUE(tltest::same_bits(ref, got[i]))
            << tl::to_string(k) << " " << tl::to_string(mt.kind) << " query " << i << ": " << ref << " vs " << got[i];
      }
    }
}

}  // namespace

TEST(Kde, CpuIsTheSpelledOutCanonicalSumFloat) {
  expect_matches_reference<float>(4500, 37, 5, true);
  expect_matches_reference<float>(100, 3, 2, false);
}
TEST(Kde, CpuIsTheSpelledOutCanonicalSumDouble) {
  expect_matches_reference<double>(2049, 33, 7, false);
  expect_matches_reference<double>(5000, 5, 3, true);
}

TEST(Kde, BitsDoNotDependOnThreadCount) {
  const std::int64_t n = 7000, m = 97, d = 6;
  auto Y = random_values<float>(n * d, 4), Q = random_values<float>(m * d, 5);
  std::vector<float> a(m), b(m);
  const tl::Metric mt = tl::parse_metric("euclidean", 2);
  tl::kde_log_sum<float>(cpu(1), {Y.data(), n, d}, nullptr, {Q.data(), m, d}, mt, tl::KdeKernel::Gaussian, 0.3, a.data());
  tl::kde_log_sum<float>(cpu(5), {Y.data(), n, d}, nullptr, {Q.data(), m, d}, mt, tl::KdeKernel::Gaussian, 0.3, b.data());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

TEST(Kde, RejectsBadInput) {
  std::vector<double> Y(10 * 2, 1.0), Q(3, 1.0), out(1);
  const tl::Metric e = tl::parse_metric("euclidean", 2);
  EXPECT_THROW(tl::kde_log_sum<double>(cpu(), {Y.data(), 10, 2}, nullptr, {Q.data(), 1, 2}, e, tl::KdeKernel::Gaussian,
                                       0.0, out.data()),
               tl::ValueError);
  EXPECT_THROW(tl::kde_log_sum<double>(cpu(), {Y.data(), 10, 2}, nullptr, {Q.data(), 1, 3}, e, tl::KdeKernel::Gaussian,
                                       1.0, out.data()),
               tl::ValueError);
  EXPECT_THROW(tl::kde_log_sum<double>(cpu(), {Y.data(), 10, 2}, nullptr, {Q.data(), 1, 2}, tl::parse_metric("cosine", 2),
                                       tl::KdeKernel::Gaussian, 1.0, out.data()),
               tl::ValueError);
  EXPECT_THROW(tl::parse_kde_kernel("triangle"), tl::ValueError);
}

// CPU versus CUDA: the same bits (run by the CUDA test binary on a GPU).
template <class T>
void expect_cpu_gpu_identical(std::int64_t n, std::int64_t m, std::int64_t d) {
  auto Y = random_values<T>(n * d, 6), Q = random_values<T>(m * d, 7), w = random_values<T>(n, 8, 0.0, 2.0);
  for (const tl::Metric& mt : kde_metrics())
    for (tl::KdeKernel k : kKernels)
      for (bool weighted : {false, true}) {
        std::vector<T> a(static_cast<std::size_t>(m)), b(static_cast<std::size_t>(m));
        const T* wp = weighted ? w.data() : nullptr;
        tl::kde_log_sum<T>(cpu(), {Y.data(), n, d}, wp, {Q.data(), m, d}, mt, k, 0.25 * d, a.data());
        tl::kde_log_sum<T>(gpu(), {Y.data(), n, d}, wp, {Q.data(), m, d}, mt, k, 0.25 * d, b.data());
        EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(T)))
            << tl::to_string(k) << " " << tl::to_string(mt.kind) << " weighted=" << weighted;
      }
}

TEST(KdeCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  expect_cpu_gpu_identical<float>(5000, 70, 37);
  expect_cpu_gpu_identical<double>(2049, 33, 16);
  expect_cpu_gpu_identical<float>(1, 1, 1);
  expect_cpu_gpu_identical<double>(300, 17, 3);
}
