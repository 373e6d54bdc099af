#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "twinlearn/core/small_minimize.hpp"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Rosenbrock {
  int n;
  double operator()(const double* x, double* g) const {
    double f = 0;
    for (int i = 0; i < n; ++i) g[i] = 0;
    for (int i = 0; i + 1 < n; ++i) {
      double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
      f += 100 * a * a + b * b;
      g[i] += -400 * x[i] * a - 2 * b;
      g[i + 1] += 200 * a;
    }
    return f;
  }
};

// 0.5 (x - c)^T A (x - c), A = B^T B + n I (well conditioned SPD).
struct Quadratic {
  int n;
  std::vector<double> A, c;
  double operator()(const double* x, double* g) const {
    double f = 0;
    for (int i = 0; i < n; ++i) {
      double v = 0;
      for (int j = 0; j < n; ++j) v += A[i * n + j] * (x[j] - c[j]);
      g[i] = v;
      f += 0.5 * (x[i] - c[i]) * v;
    }
    return f;
  }
};

Quadratic random_quadratic(int n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd;
  std::vector<double> B(n * n);
  for (auto& v : B) v = nd(gen);
  Quadratic q{n, std::vector<double>(n * n), std::vector<double>(n)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = i == j ? n : 0.0;
      for (int k = 0; k < n; ++k) s += B[k * n + i] * B[k * n + j];
      q.A[i * n + j] = s;
    }
  for (auto& v : q.c) v = 3 * nd(gen);
  return q;
}

TEST(SmallMinimize, RosenbrockUnbounded) {
  Rosenbrock f{4};
  double x[4] = {-1.2, 1.0, -1.2, 1.0};
  double lb[4] = {-kInf, -kInf, -kInf, -kInf}, ub[4] = {kInf, kInf, kInf, kInf};
  tl::opt::SmallMinimizeOptions<double> o;
  o.ftol = 0;
  o.pgtol = 1e-10;
  auto r = tl::opt::small_minimize<8>(f, 4, x, lb, ub, o);
  EXPECT_TRUE(r.converged);
  for (double v : x) EXPECT_NEAR(v, 1.0, 1e-6);
  EXPECT_LT(r.f, 1e-12);
}

TEST(SmallMinimize, RosenbrockActiveUpperBound) {
  // min over x0 <= 0.5: the solution is x0 = 0.5, x1 = 0.25 (x1 free).
  Rosenbrock f{2};
  double x[2] = {-1.2, 1.0};
  double lb[2] = {-kInf, -kInf}, ub[2] = {0.5, kInf};
  tl::opt::SmallMinimizeOptions<double> o;
  o.ftol = 0;
  o.pgtol = 1e-10;
  auto r = tl::opt::small_minimize<2>(f, 2, x, lb, ub, o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(x[0], 0.5);
  EXPECT_NEAR(x[1], 0.25, 1e-7);
}

// A diagonal quadratic's box minimiser is the clamped centre, exactly.
TEST(SmallMinimize, DiagonalQuadraticClampsExactly) {
  const int n = 12;
  Quadratic q{n, std::vector<double>(n * n, 0.0), std::vector<double>(n)};
  std::vector<double> lb(n), ub(n), x(n, 0.0);
  for (int i = 0; i < n; ++i) {
    q.A[i * n + i] = 1.0 + i;
    q.c[i] = (i % 3 == 0) ? -2.0 : (i % 3 == 1 ? 2.0 : 0.3);
    lb[i] = -1.0;
    ub[i] = 1.0;
  }
  tl::opt::SmallMinimizeOptions<double> o;
  o.ftol = 0;
  o.pgtol = 1e-12;
  auto r = tl::opt::small_minimize<32>(q, n, x.data(), lb.data(), ub.data(), o);
  EXPECT_TRUE(r.converged);
  for (int i = 0; i < n; ++i) {
    double want = std::fmin(1.0, std::fmax(-1.0, q.c[i]));
    if (want == q.c[i])
      EXPECT_NEAR(x[i], want, 1e-10) << i;
    else
      EXPECT_EQ(x[i], want) << i;
  }
}

// Dense quadratics of up to 32 parameters: the unbounded minimiser is c.
TEST(SmallMinimize, DenseQuadraticUpTo32) {
  for (int n : {1, 3, 17, 32}) {
    Quadratic q = random_quadratic(n, 7u + n);
    std::vector<double> x(n, 0.0), lb(n, -kInf), ub(n, kInf);
    tl::opt::SmallMinimizeOptions<double> o;
    o.ftol = 0;
    o.pgtol = 1e-9;
    auto r = tl::opt::small_minimize<32>(q, n, x.data(), lb.data(), ub.data(), o);
    EXPECT_TRUE(r.converged) << n;
    for (int i = 0; i < n; ++i) EXPECT_NEAR(x[i], q.c[i], 1e-8) << n << " " << i;
  }
}

// The result is a function of the problem alone: a second run, and a run with
// MaxN larger than needed, give the same bits.
TEST(SmallMinimize, SameBitsRunToRunAndAcrossMaxN) {
  Quadratic q = random_quadratic(6, 3);
  std::vector<double> lb(6, -0.5), ub(6, 0.5);
  std::vector<double> a(6, 0.1), b(6, 0.1), c(6, 0.1);
  auto ra = tl::opt::small_minimize<6>(q, 6, a.data(), lb.data(), ub.data());
  auto rb = tl::opt::small_minimize<6>(q, 6, b.data(), lb.data(), ub.data());
  auto rc = tl::opt::small_minimize<32>(q, 6, c.data(), lb.data(), ub.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 6 * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(a.data(), c.data(), 6 * sizeof(double)), 0);
  EXPECT_EQ(ra.evaluations, rb.evaluations);
  EXPECT_EQ(ra.evaluations, rc.evaluations);
}

TEST(SmallMinimize, NonFiniteStartIsReported) {
  struct Nan {
    double operator()(const double*, double* g) const {
      g[0] = 0;
      return std::numeric_limits<double>::quiet_NaN();
    }
  } f;
  double x[1] = {0}, lb[1] = {-1}, ub[1] = {1};
  auto r = tl::opt::small_minimize<1>(f, 1, x, lb, ub);
  EXPECT_EQ(r.status, tl::opt::SmallMinimizeStatus::kNonFinite);
  EXPECT_FALSE(r.converged);
}

TEST(SmallMinimize, FloatWorks) {
  struct Qf {
    float operator()(const float* x, float* g) const {
      g[0] = 2 * (x[0] - 3);
      g[1] = 4 * (x[1] + 1);
      return (x[0] - 3) * (x[0] - 3) + 2 * (x[1] + 1) * (x[1] + 1);
    }
  } f;
  float x[2] = {0, 0}, lb[2] = {-10, -10}, ub[2] = {2, 10};
  tl::opt::SmallMinimizeOptions<float> o;
  o.pgtol = 1e-5f;
  o.ftol = 0;
  auto r = tl::opt::small_minimize<2>(f, 2, x, lb, ub, o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(x[0], 2.0f);
  EXPECT_NEAR(x[1], -1.0f, 1e-5);
}

// Strong coupling with an active bound: after x0 reaches its bound the step on
// x1 must use the reduced Hessian (not the sub-block of the inverse), or it
// creeps. f = 0.5 x^T A x - b^T x, A = [[1e4, 99], [99, 1]], x0 <= 0.
TEST(SmallMinimize, CoupledVariableWithActiveBoundConvergesFast) {
  struct F {
    double operator()(const double* x, double* g) const {
      const double a00 = 1e4, a01 = 99, a11 = 1, b0 = 1e4, b1 = 5;
      g[0] = a00 * x[0] + a01 * x[1] - b0;
      g[1] = a01 * x[0] + a11 * x[1] - b1;
      return 0.5 * (a00 * x[0] * x[0] + 2 * a01 * x[0] * x[1] + a11 * x[1] * x[1]) - b0 * x[0] - b1 * x[1];
    }
  } f;
  double x[2] = {-1.0, 0.0}, lb[2] = {-kInf, -kInf}, ub[2] = {0.0, kInf};
  tl::opt::SmallMinimizeOptions<double> o;
  o.ftol = 0;
  o.pgtol = 1e-9;
  o.max_iter = 60;
  auto r = tl::opt::small_minimize<2>(f, 2, x, lb, ub, o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(x[0], 0.0);
  EXPECT_NEAR(x[1], 5.0, 1e-8);
  EXPECT_LT(r.iterations, 60);
}

}  // namespace
