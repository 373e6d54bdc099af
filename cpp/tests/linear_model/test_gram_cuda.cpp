// CPU versus CUDA identity of the canonical Gram product and of the linear
// decision function. Compiled into both test binaries; skips (or fails under
// TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "../core/gram_test_util.hpp"
#include "../test_util.hpp"
#include "twinlearn/linear_model/linear_decision.hpp"

namespace {

template <class T>
std::vector<double> run_gram(const tl::Context& ctx, const tltest::GramFixture<T>& f, tl::NumericMode* mode) {
  const std::int64_t D = f.d + f.t;
  std::vector<double> out(static_cast<std::size_t>(D * D));
  *mode = tl::gram<T>(ctx, f.xv(), f.yv(), f.wv(), f.offp(), out.data());
  return out;
}

template <class T>
void check_gram_identical(std::int64_t n, std::int64_t d, std::int64_t t, bool weighted, bool centred) {
  auto f = tltest::gram_fixture<T>(n, d, t, weighted, centred, 100 + n + d);
  tl::Context cpu(tl::Device{}, 3, tl::NumericMode::Identical, 0);
  tl::NumericMode m1, m2;
  for (tl::NumericMode gm : {tl::NumericMode::Identical, tl::NumericMode::Deterministic}) {
    tl::Context gpu(tl::parse_device("cuda:0"), 0, gm, 0);
    auto a = run_gram(cpu, f, &m1);
    auto b = run_gram(gpu, f, &m2);
    EXPECT_EQ(m2, tl::NumericMode::Identical);
    EXPECT_TRUE(tltest::same_bits_vec(a, b)) << "n=" << n << " d=" << d << " t=" << t << " w=" << weighted;
  }
}

}  // namespace

TEST(GramCuda, IdenticalToCpuAcrossShapes) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t n : {1, 7, 4095, 4096, 4097, 3 * 4096 + 5}) {
    for (std::int64_t d : {1, 3, 127, 128, 130}) {
      check_gram_identical<double>(n, d, 1, n % 2 == 1, true);
      check_gram_identical<float>(n, d, d > 3 ? 2 : 0, true, n % 2 == 0);
    }
  }
  check_gram_identical<float>(300007, 260, 1, true, true);
  // Targets in the cross kernel (t <= 8) and in the tiles (t > 8).
  check_gram_identical<double>(9001, 20, 8, true, true);
  check_gram_identical<float>(9001, 130, 9, true, true);
  check_gram_identical<double>(5000, 1, 3, false, true);
  check_gram_identical<double>(100003, 33, 3, false, false);
}

// Weights, offsets and target columns in fast mode; float32 data with 40
// columns also takes the widening's 128-bit loads.
template <class T>
void check_fast_close(std::int64_t n, std::int64_t d, std::int64_t t) {
  auto f = tltest::gram_fixture<T>(n, d, t, true, true, 7);
  tl::Context cpu(tl::Device{}, 2, tl::NumericMode::Identical, 0);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Fast, 0);
  tl::NumericMode m1, m2;
  auto a = run_gram(cpu, f, &m1);
  auto b = run_gram(gpu, f, &m2);
  EXPECT_EQ(m2, tl::NumericMode::Fast);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-10 * (1 + std::fabs(a[i])));
}

TEST(GramCuda, FastModeIsCloseAndSaysSo) {
  TL_REQUIRE_GPU_OR_SKIP();
  check_fast_close<double>(20000, 40, 2);
  check_fast_close<float>(20000, 40, 2);
  check_fast_close<float>(20001, 37, 1);
}

// Fast mode on float32 data with column means far from zero: the centred
// entries are widened to double before the product, so every product is
// exact and the only error is the summation's, which for any order of n
// double additions is at most (n - 1) u sum|terms| (u = 2^-53; Higham, 4.2).
// The reference is summed in long double. Accumulating in float32 misses
// this bound by about four orders of magnitude. 40 columns take one DGEMM,
// 150 the three-block split.
// The second pass cuts the rows into batches of 997, so the fast path's two
// widening buffers are reused many times while the products run.
TEST(GramCuda, FastModeFloat32IsAccurate) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (const char* batch : {static_cast<const char*>(nullptr), "997"})
    for (auto [n, d] : {std::pair<std::int64_t, std::int64_t>{100003, 40}, {20011, 150}}) {
      if (batch)
        setenv("TWINLEARN_GRAM_FAST_BATCH_ROWS", batch, 1);
      else
        unsetenv("TWINLEARN_GRAM_FAST_BATCH_ROWS");
      auto f = tltest::gram_fixture<float>(n, d, 0, false, true, 71);
      tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Fast, 0);
      tl::NumericMode mode;
      const auto G = run_gram(gpu, f, &mode);
      EXPECT_EQ(mode, tl::NumericMode::Fast);
      const long double gamma = static_cast<long double>(n - 1) * std::ldexp(1.0L, -53);
      std::vector<double> z(static_cast<std::size_t>(n * d));
      for (std::int64_t r = 0; r < n; ++r)
        for (std::int64_t i = 0; i < d; ++i) z[r * d + i] = static_cast<double>(f.X[r * d + i] - f.off[i]);
      for (std::int64_t i = 0; i < d; ++i)
        for (std::int64_t j = i; j < d; ++j) {
          ASSERT_TRUE(tltest::same_bits(G[i * d + j], G[j * d + i]));
          long double exact = 0, mag = 0;
          for (std::int64_t r = 0; r < n; ++r) {
            const long double t = static_cast<long double>(z[r * d + i] * z[r * d + j]);
            exact += t;
            mag += std::fabs(t);
          }
          ASSERT_LE(std::fabs(static_cast<long double>(G[i * d + j]) - exact), gamma * mag)
              << "n=" << n << " d=" << d << " at " << i << "," << j << " batch " << (batch ? batch : "default");
        }
    }
  unsetenv("TWINLEARN_GRAM_FAST_BATCH_ROWS");
}

// gram_moments in fast mode on the GPU against the CPU's canonical result:
// data far from the origin (columns' means up to 1000), so that centring at
// the wrong point, a missing sum or a wrong target product shows; one and
// two column groups per thread (40, 37 without 128-bit loads, 300 columns),
// 0 to 4 targets, one batch or batches of 997 rows (the block sums carried
// from batch to batch). Beyond 512 columns or 4 targets, and with a NaN or
// an infinity, the two-pass path answers (the canonical statistics count
// them).
TEST(GramMomentsCuda, FastModeIsCloseAndFallsBack) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::Context cpu(tl::Device{}, 2, tl::NumericMode::Identical, 0);
  tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Fast, 0);
  auto run = [](const tl::Context& ctx, const tltest::GramFixture<float>& f, bool center,
                std::vector<tl::ColStat>& st, tl::NumericMode& mode) {
    const std::int64_t D = f.d + f.t;
    std::vector<double> out(static_cast<std::size_t>(D * D));
    st.assign(static_cast<std::size_t>(D), tl::ColStat{});
    mode = tl::gram_moments<float>(ctx, f.xv(), f.yv(), center, out.data(), st.data());
    return out;
  };
  struct Shape {
    std::int64_t n, d, t;
  };
  for (const char* batch : {static_cast<const char*>(nullptr), "997"})
    for (Shape sh : {Shape{20000, 40, 1}, Shape{20001, 37, 3}, Shape{6000, 300, 2}, Shape{5000, 256, 0},
                     Shape{7000, 64, 4}})
      for (bool center : {true, false}) {
        if (batch)
          setenv("TWINLEARN_GRAM_FAST_BATCH_ROWS", batch, 1);
        else
          unsetenv("TWINLEARN_GRAM_FAST_BATCH_ROWS");
        auto f = tltest::gram_fixture<float>(sh.n, sh.d, sh.t, false, false, 300 + sh.d);
        for (std::int64_t i = 0; i < sh.n; ++i)
          for (std::int64_t j = 0; j < sh.d; ++j) f.X[i * sh.d + j] += static_cast<float>(1000 * (j % 3));
        std::vector<tl::ColStat> sa, sb;
        tl::NumericMode ma, mb;
        run(cpu, f, center, sa, ma);
        const auto b = run(gpu, f, center, sb, mb);
        ASSERT_EQ(mb, tl::NumericMode::Fast);
        const std::int64_t D = sh.d + sh.t;
        for (std::int64_t j = 0; j < D; ++j) {
          ASSERT_EQ(sb[j].n, sh.n);
          ASSERT_NEAR(sb[j].mean, sa[j].mean, 1e-12 * (1 + std::fabs(sa[j].mean))) << j;
          ASSERT_NEAR(sb[j].m2, sa[j].m2, 1e-9 * sa[j].m2) << j;
          for (std::int64_t k = j; k < D; ++k) {
            // Against sums in double of (x - m)(x' - m') at the means m (the
            // canonical product centres at the means rounded to float, and
            // subtracts in float).
            auto at = [&](std::int64_t i, std::int64_t c) {
              const double v = c < sh.d ? f.X[i * sh.d + c] : f.Y[i * sh.t + c - sh.d];
              return center ? v - sa[c].mean : v;
            };
            double want = 0.0, mag = 0.0;
            for (std::int64_t i = 0; i < sh.n; ++i) {
              want += at(i, j) * at(i, k);
              mag += std::fabs(at(i, j) * at(i, k));
            }
            ASSERT_NEAR(b[j * D + k], want, 1e-11 * mag)
                << "n=" << sh.n << " d=" << sh.d << " t=" << sh.t << " center=" << center << " at " << j << "," << k;
          }
        }
      }
  unsetenv("TWINLEARN_GRAM_FAST_BATCH_ROWS");
  // The two-pass path: the canonical statistics (the CPU's bits), then gram
  // in the context's mode (cuBLAS over rows centred at the means rounded to
  // float, as the CPU's canonical product centres them).
  for (Shape sh : {Shape{3000, 520, 1}, Shape{3000, 20, 5}}) {
    auto f = tltest::gram_fixture<float>(sh.n, sh.d, sh.t, false, false, 17);
    std::vector<tl::ColStat> sa, sb;
    tl::NumericMode ma, mb;
    const auto a = run(cpu, f, true, sa, ma);
    const auto b = run(gpu, f, true, sb, mb);
    EXPECT_EQ(mb, tl::NumericMode::Fast);
    const std::int64_t D = sh.d + sh.t;
    for (std::int64_t j = 0; j < D; ++j) {
      ASSERT_TRUE(tltest::same_bits(sa[j].mean, sb[j].mean) && tltest::same_bits(sa[j].m2, sb[j].m2)) << j;
      for (std::int64_t k = 0; k < D; ++k)
        ASSERT_NEAR(b[j * D + k], a[j * D + k], 1e-9 * std::sqrt(a[j * D + j] * a[k * D + k]))
            << sh.d << " " << sh.t << " at " << j << "," << k;
    }
  }
  auto f = tltest::gram_fixture<float>(5000, 16, 1, false, false, 19);
  f.X[77 * 16 + 3] = std::nanf("");
  f.X[99 * 16 + 5] = INFINITY;
  f.X[98 * 16 + 5] = -INFINITY;
  std::vector<tl::ColStat> sb;
  tl::NumericMode mb;
  run(gpu, f, true, sb, mb);
  EXPECT_EQ(sb[3].n, 4999);
  EXPECT_EQ(sb[5].n_inf, 2);
  EXPECT_EQ(sb[4].n, 5000);
}

TEST(LinearDecisionCuda, IdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t n : {1, 129, 5000}) {
    for (std::int64_t d : {1, 31, 33, 100}) {
      for (std::int64_t t : {1, 3, 9}) {
        auto f = tltest::gram_fixture<float>(n, d, 0, false, false, n * 7 + d);
        std::vector<float> coef(static_cast<std::size_t>(t * d)), icpt(static_cast<std::size_t>(t));
        for (std::int64_t i = 0; i < t * d; ++i) coef[i] = static_cast<float>(std::sin(0.37 * i) * 3.0);
        for (std::int64_t c = 0; c < t; ++c) icpt[c] = 0.25f * c - 1.0f;
        std::vector<float> a(static_cast<std::size_t>(n * t)), b(a.size());
        tl::Context cpu(tl::Device{}, 2, tl::NumericMode::Identical, 0);
        tl::Context gpu(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0);
        tl::linear_decision<float>(cpu, f.xv(), coef.data(), icpt.data(), t, tl::MatrixView<float>(a.data(), n, t));
        tl::linear_decision<float>(gpu, f.xv(), coef.data(), icpt.data(), t, tl::MatrixView<float>(b.data(), n, t));
        for (std::size_t i = 0; i < a.size(); ++i)
          ASSERT_TRUE(tltest::same_bits(a[i], b[i])) << n << " " << d << " " << t;
      }
    }
  }
}
