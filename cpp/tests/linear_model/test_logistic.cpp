// Logistic regression: thread-count invariance on the CPU, and CPU versus
// CUDA identity of the whole optimisation (skips without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/linear_model/logistic.hpp"

namespace {

template <class T>
struct Problem {
  std::int64_t n, d, K;
  std::vector<T> X, w;
  std::vector<std::int32_t> y;
};

template <class T>
Problem<T> problem(std::int64_t n, std::int64_t d, std::int64_t K, std::uint64_t seed) {
  Problem<T> p{n, d, K, {}, {}, {}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.3, 2.0);
  p.X.resize(static_cast<std::size_t>(n * d));
  p.y.resize(static_cast<std::size_t>(n));
  p.w.resize(static_cast<std::size_t>(n));
  std::vector<double> beta(static_cast<std::size_t>(K * d));
  for (auto& b : beta) b = nd(rng);
  for (std::int64_t i = 0; i < n; ++i) {
    int best = 0;
    double bv = -1e300;
    for (std::int64_t k = 0; k < K; ++k) {
      double z = nd(rng);
      for (std::int64_t j = 0; j < d; ++j) {
        if (k == 0) p.X[i * d + j] = static_cast<T>(nd(rng) * (1.0 + j % 3));
        z += beta[k * d + j] * static_cast<double>(p.X[i * d + j]) * 0.5;
      }
      if (z > bv) {
        bv = z;
        best = static_cast<int>(k);
      }
    }
    p.y[i] = K == 2 ? (best == 1) : best;
    p.w[i] = static_cast<T>(ud(rng));
  }
  return p;
}

template <class T>
std::vector<double> fit(const tl::Context& ctx, const Problem<T>& p, double l1, tl::LogisticResult* r) {
  tl::LogisticOptions opt;
  opt.n_classes = p.K;
  opt.sum_weights = 0;
  for (T v : p.w) opt.sum_weights += static_cast<double>(v);
  opt.l2 = 1.0 / opt.sum_weights;
  opt.l1 = l1 / opt.sum_weights;
  opt.gtol = 1e-6;
  const std::int64_t rows = p.K == 2 ? 1 : p.K;
  std::vector<double> W(static_cast<std::size_t>(rows * (p.d + 1)), 0.0);
  *r = tl::logistic_lbfgs<T>(ctx, tl::MatrixView<const T>(p.X.data(), p.n, p.d),
                             tl::VectorView<const std::int32_t>(p.y.data(), p.n),
                             tl::VectorView<const T>(p.w.data(), p.n), opt, W.data());
  return W;
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!tltest::same_bits(a[i], b[i])) return false;
  return true;
}

}  // namespace

TEST(Logistic, BitsDoNotDependOnThreadCount) {
  auto p = problem<double>(3000, 7, 3, 5);
  tl::LogisticResult r1, r2;
  auto a = fit(tl::Context(tl::Device{}, 1, tl::NumericMode::Identical, 0), p, 0.0, &r1);
  for (int t : {2, 5}) {
    auto b = fit(tl::Context(tl::Device{}, t, tl::NumericMode::Identical, 0), p, 0.0, &r2);
    EXPECT_TRUE(same(a, b)) << "threads=" << t;
    EXPECT_EQ(r1.n_iter, r2.n_iter);
  }
  EXPECT_EQ(r1.status, tl::LogisticStatus::Converged);
  EXPECT_GT(r1.n_iter, 3);
}

TEST(Logistic, RejectsBadInput) {
  auto p = problem<float>(50, 3, 2, 1);
  p.y[3] = 7;
  tl::LogisticResult r;
  EXPECT_THROW(fit(tl::Context(tl::Device{}, 1, tl::NumericMode::Identical, 0), p, 0.0, &r), tl::ValueError);
}

TEST(LogisticCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context cpu(tl::Device{}, 3, tl::NumericMode::Identical, 0);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  for (std::int64_t K : {2, 4}) {
    for (double l1 : {0.0, 2.0}) {
      auto pd = problem<double>(5000 + 77, 40, K, 10 + K);
      tl::LogisticResult r1, r2;
      auto a = fit(cpu, pd, l1, &r1);
      auto b = fit(gpu, pd, l1, &r2);
      EXPECT_TRUE(same(a, b)) << "double K=" << K << " l1=" << l1;
      EXPECT_EQ(r1.n_iter, r2.n_iter);
      EXPECT_EQ(r1.n_evals, r2.n_evals);
      auto pf = problem<float>(3000 + 5, 33, K, 20 + K);
      a = fit(cpu, pf, l1, &r1);
      b = fit(gpu, pf, l1, &r2);
      EXPECT_TRUE(same(a, b)) << "float K=" << K << " l1=" << l1;
    }
  }
}

TEST(LogisticCuda, ProbabilitiesIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context cpu(tl::Device{}, 2, tl::NumericMode::Identical, 0);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  std::mt19937_64 rng(3);
  std::normal_distribution<float> nd;
  for (std::int64_t cols : {1, 5}) {
    const std::int64_t n = 1000, out_cols = cols == 1 ? 2 : cols;
    std::vector<float> s(static_cast<std::size_t>(n * cols));
    for (auto& v : s) v = nd(rng) * 20.0f;
    for (bool lg : {false, true}) {
      std::vector<float> a(static_cast<std::size_t>(n * out_cols)), b(a.size());
      tl::logistic_proba<float>(cpu, tl::MatrixView<const float>(s.data(), n, cols), lg,
                                tl::MatrixView<float>(a.data(), n, out_cols));
      tl::logistic_proba<float>(gpu, tl::MatrixView<const float>(s.data(), n, cols), lg,
                                tl::MatrixView<float>(b.data(), n, out_cols));
      for (std::size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(tltest::same_bits(a[i], b[i]));
    }
  }
}
