// CPU versus CUDA identity of the array transcendentals and the random draws.
// Compiled into both test binaries; skips (or fails under
// TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/math_array.hpp"
#include "twinlearn/core/random.hpp"

namespace {

tl::Context cpu() { return tl::Context(tl::Device{}, 3, tl::NumericMode::Identical, 0); }
tl::Context gpu() { return tl::Context(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0); }

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Random bit patterns (all classes of values) and ordinary values.
template <class T>
std::vector<T> inputs(std::int64_t n) {
  std::mt19937_64 g(99);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % 2) {
      const std::uint64_t u = g();
      std::memcpy(&x[i], &u, sizeof(T));
    } else {
      x[i] = static_cast<T>((static_cast<double>(g() >> 11) * 0x1p-53 - 0.5) * 60.0);
    }
  }
  return x;
}

template <class T>
void check_math(std::int64_t n) {
  const auto x = inputs<T>(n);
  const auto y = inputs<T>(n + 1);
  for (const char* name : {"exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos", "erf"}) {
    std::vector<T> a(x.size()), b(x.size());
    tl::math_apply<T>(cpu(), tl::parse_math_fn(name), tl::VectorView<const T>(x.data(), n), tl::VectorView<T>(a.data(), n));
    tl::math_apply<T>(gpu(), tl::parse_math_fn(name), tl::VectorView<const T>(x.data(), n), tl::VectorView<T>(b.data(), n));
    EXPECT_TRUE(same(a, b)) << name;
  }
  std::vector<T> a(x.size()), b(x.size());
  tl::math_pow<T>(cpu(), tl::VectorView<const T>(x.data(), n), tl::VectorView<const T>(y.data() + 1, n),
                  tl::VectorView<T>(a.data(), n));
  tl::math_pow<T>(gpu(), tl::VectorView<const T>(x.data(), n), tl::VectorView<const T>(y.data() + 1, n),
                  tl::VectorView<T>(b.data(), n));
  EXPECT_TRUE(same(a, b)) << "pow";
  const std::int64_t rows = n / 37, cols = 37;
  for (const char* name : {"logsumexp", "softmax", "log_softmax"}) {
    const auto fn = tl::parse_row_fn(name);
    const std::int64_t oc = fn == tl::RowFn::LogSumExp ? 1 : cols;
    std::vector<T> ra(rows * oc), rb(rows * oc);
    std::vector<T> xr(x.begin(), x.begin() + rows * cols);  // ordinary values mixed with odd bit patterns
    tl::math_rows<T>(cpu(), fn, tl::MatrixView<const T>(xr.data(), rows, cols), tl::MatrixView<T>(ra.data(), rows, oc));
    tl::math_rows<T>(gpu(), fn, tl::MatrixView<const T>(xr.data(), rows, cols), tl::MatrixView<T>(rb.data(), rows, oc));
    EXPECT_TRUE(same(ra, rb)) << name;
  }
}

}  // namespace

TEST(NumericsIdentity, MathCpuEqualsCuda) {
  TL_REQUIRE_GPU_OR_SKIP();
  check_math<float>(1 << 21);
  check_math<double>(1 << 21);
}

TEST(NumericsIdentity, RandomCpuEqualsCuda) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t n : {1, 7, 1000, 1000003}) {
    for (std::uint64_t offset : {0ull, 3ull}) {
      std::vector<float> fa(n), fb(n);
      std::vector<double> da(n), db(n);
      tl::random_uniform<float>(cpu(), 17, 2, offset, tl::VectorView<float>(fa.data(), n));
      tl::random_uniform<float>(gpu(), 17, 2, offset, tl::VectorView<float>(fb.data(), n));
      EXPECT_TRUE(same(fa, fb)) << "uniform float n=" << n;
      tl::random_uniform<double>(cpu(), 17, 2, offset, tl::VectorView<double>(da.data(), n));
      tl::random_uniform<double>(gpu(), 17, 2, offset, tl::VectorView<double>(db.data(), n));
      EXPECT_TRUE(same(da, db)) << "uniform double n=" << n;
      tl::random_normal<float>(cpu(), 17, 2, offset, tl::VectorView<float>(fa.data(), n));
      tl::random_normal<float>(gpu(), 17, 2, offset, tl::VectorView<float>(fb.data(), n));
      EXPECT_TRUE(same(fa, fb)) << "normal float n=" << n;
      tl::random_normal<double>(cpu(), 17, 2, offset, tl::VectorView<double>(da.data(), n));
      tl::random_normal<double>(gpu(), 17, 2, offset, tl::VectorView<double>(db.data(), n));
      EXPECT_TRUE(same(da, db)) << "normal double n=" << n;
      std::vector<std::int64_t> ia(n), ib(n);
      for (std::int64_t high : {std::int64_t(1), std::int64_t(10), (std::int64_t(3) << 61) + 5}) {
        tl::random_integers(cpu(), 17, 2, offset, high, tl::VectorView<std::int64_t>(ia.data(), n));
        tl::random_integers(gpu(), 17, 2, offset, high, tl::VectorView<std::int64_t>(ib.data(), n));
        EXPECT_TRUE(same(ia, ib)) << "integers n=" << n << " high=" << high;
      }
    }
    std::vector<std::int64_t> pa(n), pb(n);
    tl::random_permutation(cpu(), 5, 6, tl::VectorView<std::int64_t>(pa.data(), n));
    tl::random_permutation(gpu(), 5, 6, tl::VectorView<std::int64_t>(pb.data(), n));
    EXPECT_TRUE(same(pa, pb)) << "permutation n=" << n;
    const std::int64_t k = (n + 1) / 2;
    std::vector<std::int64_t> ca(k), cb(k);
    for (bool replace : {false, true}) {
      tl::random_choice(cpu(), 5, 6, n, replace, tl::VectorView<std::int64_t>(ca.data(), k));
      tl::random_choice(gpu(), 5, 6, n, replace, tl::VectorView<std::int64_t>(cb.data(), k));
      EXPECT_TRUE(same(ca, cb)) << "choice n=" << n << " replace=" << replace;
    }
    std::vector<double> w(n);
    std::mt19937_64 g(n);
    for (auto& v : w) v = (g() % 4 == 0) ? 0.0 : static_cast<double>(g() >> 11) * 0x1p-40;
    w[0] = 1.0;
    std::int64_t positive = 0;
    for (double v : w) positive += v > 0;
    for (bool replace : {false, true}) {
      const std::int64_t kk = replace ? n : std::min<std::int64_t>(k, positive);
      std::vector<std::int64_t> wa(kk), wb(kk);
      tl::random_weighted_choice<double>(cpu(), 5, 7, tl::VectorView<const double>(w.data(), n), replace,
                                         tl::VectorView<std::int64_t>(wa.data(), kk));
      tl::random_weighted_choice<double>(gpu(), 5, 7, tl::VectorView<const double>(w.data(), n), replace,
                                         tl::VectorView<std::int64_t>(wb.data(), kk));
      EXPECT_TRUE(same(wa, wb)) << "weighted n=" << n << " replace=" << replace;
    }
  }
}
