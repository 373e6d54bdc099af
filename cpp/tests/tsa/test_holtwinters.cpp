#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/tsa/holtwinters.hpp"

namespace {

using tl::tsa::HoltWintersSpec;

tl::Context cpu(int threads) { return tl::Context(tl::Device{}, threads, tl::NumericMode::Identical, 0); }

// rows x n row-major batch of positive seasonal series (one per column).
std::vector<double> panel(std::int64_t rows, std::int64_t n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> y(static_cast<std::size_t>(rows * n));
  for (std::int64_t j = 0; j < n; ++j) {
    const double level = 50 + 100 * u(g), slope = 0.2 * u(g), amp = 5 + 15 * u(g), ph = 6.28 * u(g);
    for (std::int64_t i = 0; i < rows; ++i)
      y[i * n + j] = std::fabs(level + slope * i + amp * std::sin(6.283185307179586 * i / 12 + ph) + 2 * nd(g)) + 1;
  }
  return y;
}

struct Fit {
  std::int64_t rows, n;
  int m;
  std::vector<double> params, state, fitted, sse;
  std::vector<std::int32_t> status, iters, conv;
  std::vector<std::int64_t> start, nobs;
  Fit(std::int64_t r, std::int64_t nn, int mm)
      : rows(r),
        n(nn),
        m(mm),
        params(nn * (6 + mm)),
        state(nn * (2 + mm)),
        fitted(r * nn),
        sse(nn),
        status(nn),
        iters(nn),
        conv(nn),
        start(nn),
        nobs(nn) {}
  tl::HoltWintersBatchOut out() {
    return {params.data(), state.data(), fitted.data(), sse.data(), status.data(),
            iters.data(),  conv.data(),  start.data(),  nobs.data()};
  }
};

Fit run(const tl::Context& ctx, const std::vector<double>& y, std::int64_t rows, std::int64_t n,
        const HoltWintersSpec& sp) {
  Fit f(rows, n, sp.seasonal ? sp.m : 0);
  tl::holt_winters_fit(ctx, tl::MatrixView<const double>(y.data(), rows, n), sp, nullptr, f.out());
  return f;
}

// Column j of a batch.
std::vector<double> column(const std::vector<double>& y, std::int64_t rows, std::int64_t n, std::int64_t j) {
  std::vector<double> c(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) c[i] = y[i * n + j];
  return c;
}

// Series j of fit a and series k of fit b: the same bits.
void expect_same_series(const Fit& a, std::int64_t j, const Fit& b, std::int64_t k) {
  const int P = 6 + a.m, S = 2 + a.m;
  EXPECT_EQ(std::memcmp(&a.params[j * P], &b.params[k * P], sizeof(double) * P), 0);
  EXPECT_EQ(std::memcmp(&a.state[j * S], &b.state[k * S], sizeof(double) * S), 0);
  EXPECT_EQ(std::memcmp(&a.sse[j], &b.sse[k], sizeof(double)), 0);
  EXPECT_EQ(a.status[j], b.status[k]);
  for (std::int64_t i = 0; i < a.rows; ++i)
    EXPECT_EQ(std::memcmp(&a.fitted[i * a.n + j], &b.fitted[i * b.n + k], sizeof(double)), 0) << i;
}

HoltWintersSpec spec(int trend, int damped, int seasonal) {
  HoltWintersSpec sp;
  sp.trend = trend;
  sp.damped = damped;
  sp.seasonal = seasonal;
  sp.m = seasonal ? 12 : 0;
  return sp;
}

TEST(HoltWinters, SeriesAloneEqualsSeriesInBatchAtAnyThreadCount) {
  const std::int64_t rows = 60, n = 16;
  const auto y = panel(rows, n, 1);
  for (auto sp : {spec(1, 0, 1), spec(2, 1, 2), spec(1, 1, 0)}) {
    const Fit b1 = run(cpu(1), y, rows, n, sp);
    const Fit b3 = run(cpu(3), y, rows, n, sp);
    for (std::int64_t j = 0; j < n; ++j) {
      EXPECT_EQ(b1.status[j], 0);
      expect_same_series(b1, j, b3, j);
    }
    for (std::int64_t j : {0, 7, 15}) {
      const Fit alone = run(cpu(1), column(y, rows, n, j), rows, 1, sp);
      expect_same_series(alone, 0, b3, j);
    }
  }
}

TEST(HoltWinters, FittedIsTheRecursionAndSseItsSum) {
  // Fixed parameters, known initial values: the fitted values are the
  // smoothing recursion written out here, and the SSE their sequential sum.
  const std::int64_t rows = 30;
  const auto y = panel(rows, 1, 4);
  HoltWintersSpec sp = spec(1, 0, 0);
  sp.init = tl::tsa::kHwKnown;
  sp.alpha = 0.4;
  sp.beta = 0.1;
  const double known[2] = {y[0], 0.5};
  Fit f(rows, 1, 0);
  tl::holt_winters_fit(cpu(1), tl::MatrixView<const double>(y.data(), rows, 1), sp, known, f.out());
  double l = known[0], b = known[1], sse = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const double fit = l + 1.0 * b;
    EXPECT_EQ(f.fitted[i], fit) << i;
    const double e = y[i] - fit;
    sse += e * e;
    const double ln = 0.4 * y[i] + (1 - 0.4) * fit;
    b = 0.1 * (ln - l) + ((1 - 0.1) * 1.0) * b;
    l = ln;
  }
  EXPECT_EQ(f.sse[0], sse);
  EXPECT_EQ(f.state[0], l);
  EXPECT_EQ(f.state[1], b);
}

TEST(HoltWinters, BadSeriesGetAStatusAndTheRestFits) {
  const std::int64_t rows = 48, n = 4;
  auto y = panel(rows, n, 2);
  for (std::int64_t i = 0; i < rows; ++i) y[i * n + 1] = std::nan("");
  y[5 * n + 2] = -1.0;
  y[20 * n + 3] = std::nan("");
  const Fit f = run(cpu(2), y, rows, n, spec(1, 0, 2));
  EXPECT_EQ(f.status[0], tl::tsa::kHwOk);
  EXPECT_EQ(f.status[1], tl::tsa::kHwAllNaN);
  EXPECT_EQ(f.status[2], tl::tsa::kHwNonPositive);
  EXPECT_EQ(f.status[3], tl::tsa::kHwInnerNaN);
  const Fit alone = run(cpu(1), column(y, rows, n, 0), rows, 1, spec(1, 0, 2));
  expect_same_series(alone, 0, f, 0);
}

TEST(HoltWintersCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
  const std::int64_t rows = 72, n = 200;
  const auto y = panel(rows, n, 3);
  for (auto sp : {spec(1, 0, 1), spec(2, 1, 2), spec(0, 0, 1), spec(1, 1, 0)}) {
    const Fit c = run(cpu(3), y, rows, n, sp);
    const Fit g = run(gpu, y, rows, n, sp);
    for (std::int64_t j = 0; j < n; ++j) expect_same_series(c, j, g, j);
  }
}

}  // namespace
