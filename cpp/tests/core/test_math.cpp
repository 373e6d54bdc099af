// Accuracy and special values of the project's transcendentals on the CPU,
// and the separating fixtures of rules 3 and 4 (docs/NUMERICS.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/math_array.hpp"
#include "ulp_util.hpp"

namespace num = tl::num;

namespace {

float bits_to_float(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

long double double_ulp(long double r) {
  long double a = std::fabs(r);
  if (!(a > 0)) return std::ldexp(1.0L, -1074);
  int e = std::ilogb(a);
  if (e < -1022) e = -1022;
  return std::ldexp(1.0L, e - 52);
}
double double_ulp_error(double y, long double r) {
  if (std::isnan(r)) return std::isnan(y) ? 0.0 : 1e30;
  if (std::isnan(y)) return 1e30;
  const double cr = static_cast<double>(r);
  if (std::isinf(y) || std::isinf(cr)) return y == cr ? 0.0 : 1e30;
  if (y == 0 && r == 0) return std::signbit(y) == std::signbit(static_cast<double>(r)) ? 0.0 : 1e30;
  return static_cast<double>(std::fabs(static_cast<long double>(y) - r) / double_ulp(r));
}

struct Fn {
  const char* name;
  float (*ours_f)(float);
  double (*ours_d)(double);
  double (*ref_f)(double);            // reference for float inputs (double libm)
  long double (*ref_d)(long double);  // reference for double inputs (long double libm)
};

long double sigmoid_ld(long double x) {
  return x >= 0 ? 1.0L / (1.0L + std::exp(-x)) : std::exp(x) / (1.0L + std::exp(x));
}
double sigmoid_d(double x) { return static_cast<double>(sigmoid_ld(x)); }

const Fn kFns[] = {
    {"exp", num::exp, num::exp, [](double x) { return std::exp(x); }, [](long double x) { return std::exp(x); }},
    {"expm1", num::expm1, num::expm1, [](double x) { return std::expm1(x); },
     [](long double x) { return std::expm1(x); }},
    {"log", num::log, num::log, [](double x) { return std::log(x); }, [](long double x) { return std::log(x); }},
    {"log1p", num::log1p, num::log1p, [](double x) { return std::log1p(x); },
     [](long double x) { return std::log1p(x); }},
    {"tanh", num::tanh, num::tanh, [](double x) { return std::tanh(x); }, [](long double x) { return std::tanh(x); }},
    {"sigmoid", num::sigmoid, num::sigmoid, sigmoid_d, sigmoid_ld},
    {"sin", num::sin, num::sin, [](double x) { return std::sin(x); }, [](long double x) { return std::sin(x); }},
    {"cos", num::cos, num::cos, [](double x) { return std::cos(x); }, [](long double x) { return std::cos(x); }},
    {"erf", num::erf, num::erf, [](double x) { return std::erf(x); }, [](long double x) { return std::erf(x); }},
};

constexpr double kMaxUlp = 2.0;

}  // namespace

// Every 2039th float32 bit pattern (about 2.1 million, spread over the whole
// domain: both signs, denormals, infinities, NaNs) plus every float in [0.5, 2)
// with a step of 16 ulp, against double-precision libm.
TEST(MathAccuracy, FloatSampleWithinTwoUlp) {
  std::vector<float> xs;
  for (std::uint64_t u = 0; u < (std::uint64_t(1) << 32); u += 2039) xs.push_back(bits_to_float(std::uint32_t(u)));
  for (std::uint32_t u = 0x3f000000u; u < 0x40000000u; u += 16) xs.push_back(bits_to_float(u));
  for (const Fn& f : kFns) {
    double worst = 0;
    float at = 0;
    for (float x : xs) {
      const double e = tltest::float_ulp_error(f.ours_f(x), f.ref_f(x));
      if (e > worst) {
        worst = e;
        at = x;
      }
    }
    EXPECT_LE(worst, kMaxUlp) << f.name << " max error " << worst << " ulp at " << std::hexfloat << at;
    RecordProperty(std::string("max_ulp_float_") + f.name, std::to_string(worst));
  }
}

// A dense double sample: random bit patterns over the whole domain and
// uniform samples in [-2, 2], [-40, 40], [-800, 800], against long double libm.
TEST(MathAccuracy, DoubleSampleWithinTwoUlp) {
  std::mt19937_64 g(2024);
  std::vector<double> xs;
  for (int i = 0; i < 300000; ++i) {
    double x;
    const int mode = i % 4;
    if (mode == 0) {
      const std::uint64_t u = g();
      std::memcpy(&x, &u, 8);
    } else {
      const double R = mode == 1 ? 2.0 : mode == 2 ? 40.0 : 800.0;
      x = (static_cast<double>(g() >> 11) * 0x1p-53 * 2 - 1) * R;
    }
    xs.push_back(x);
  }
  for (const Fn& f : kFns) {
    double worst = 0;
    double at = 0;
    for (double x : xs) {
      const double e = double_ulp_error(f.ours_d(x), f.ref_d(x));
      if (e > worst) {
        worst = e;
        at = x;
      }
    }
    EXPECT_LE(worst, kMaxUlp) << f.name << " max error " << worst << " ulp at " << std::hexfloat << at;
  }
}

TEST(MathAccuracy, PowSampleWithinTwoUlp) {
  std::mt19937_64 g(7);
  auto unit = [&] { return static_cast<double>(g() >> 11) * 0x1p-53; };
  double worst_d = 0, worst_f = 0;
  for (int i = 0; i < 300000; ++i) {
    double x, y;
    switch (i % 3) {
      case 0: {
        const std::uint64_t u = g(), v = g();
        std::memcpy(&x, &u, 8);
        std::memcpy(&y, &v, 8);
        break;
      }
      case 1:
        x = unit() * 4;
        y = (unit() * 2 - 1) * 200;
        break;
      default:
        x = std::ldexp(unit() + 0.5, static_cast<int>(g() % 2040) - 1020);
        y = unit() * 2 - 1;
        break;
    }
    worst_d = std::max(worst_d, double_ulp_error(num::pow(x, y), std::pow(static_cast<long double>(x),
                                                                           static_cast<long double>(y))));
    // float: x in a float-friendly range
    const float xf = static_cast<float>(i % 3 == 2 ? unit() * 8 : std::fabs(x) < 1e30 ? x : unit());
    const float yf = static_cast<float>(i % 3 == 0 ? (unit() * 2 - 1) * 60 : y);
    worst_f = std::max(worst_f, tltest::float_ulp_error(num::pow(xf, yf), std::pow(double(xf), double(yf))));
  }
  EXPECT_LE(worst_d, kMaxUlp);
  EXPECT_LE(worst_f, kMaxUlp);
}

// Special values: NaN-ness, signed zeros and infinities agree with C99 Annex F
// (checked against libm); a NaN argument comes back with its own bits.
TEST(MathSpecial, EdgeValuesMatchAnnexF) {
  const float fl = std::numeric_limits<float>::max(), fd = std::numeric_limits<float>::denorm_min(),
              fm = std::numeric_limits<float>::min(), finf = std::numeric_limits<float>::infinity();
  const float fs[] = {0.0f, -0.0f, fd, -fd, fm, -fm, 1.0f, -1.0f, fl, -fl, finf, -finf, 88.72283f, 88.7229f,
                      -103.97f, -104.0f, 9.0f, 17.5f, -17.5f, 1e-20f, -1e-20f};
  for (const Fn& f : kFns) {
    for (float x : fs) {
      const double e = tltest::float_ulp_error(f.ours_f(x), f.ref_f(x));
      EXPECT_LE(e, kMaxUlp) << f.name << "(" << std::hexfloat << x << ") = " << f.ours_f(x);
    }
    const float nanf = num::float_from_bits(0x7fc01234u);
    EXPECT_EQ(num::to_bits(f.ours_f(nanf)), 0x7fc01234u) << f.name;
    const double nand = num::double_from_bits(0xfff8000000004321ull);
    EXPECT_EQ(num::to_bits(f.ours_d(nand)), 0xfff8000000004321ull) << f.name;
  }
  const double dl = std::numeric_limits<double>::max(), dd = std::numeric_limits<double>::denorm_min(),
               dinf = std::numeric_limits<double>::infinity();
  const double ds[] = {0.0, -0.0, dd, -dd, 1.0, -1.0, dl, -dl, dinf, -dinf, 709.78, 709.79, -745.1, -745.2, 37.5, 1e-300};
  for (const Fn& f : kFns)
    for (double x : ds)
      EXPECT_LE(double_ulp_error(f.ours_d(x), f.ref_d(x)), kMaxUlp) << f.name << "(" << std::hexfloat << x << ")";
  // Domain errors give the canonical quiet NaN.
  EXPECT_EQ(num::to_bits(num::log(-1.0f)), 0x7fc00000u);
  EXPECT_EQ(num::to_bits(num::log(-1.0)), 0x7ff8000000000000ull);
  EXPECT_EQ(num::to_bits(num::sin(finf)), 0x7fc00000u);
  EXPECT_EQ(num::to_bits(num::pow(-2.0, 0.5)), 0x7ff8000000000000ull);
}

TEST(MathSpecial, PowAnnexFCases) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double vals[] = {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0x1p53, -0x1p53, 0x1p52 + 1,
                         -(0x1p52 + 1), 1e300, -1e300, 5e-324, -5e-324, inf, -inf, nan, 0.1, 1.5, -7.0};
  for (double x : vals) {
    for (double y : vals) {
      const double ours = num::pow(x, y);
      const double ref = std::pow(x, y);
      EXPECT_EQ(std::isnan(ours), std::isnan(ref)) << x << " ^ " << y;
      if (ref == 0.0 || std::isinf(ref) || ref == 1.0) {
        EXPECT_TRUE(tltest::same_bits(ours, ref)) << std::hexfloat << x << " ^ " << y << ": " << ours << " vs " << ref;
      } else if (!std::isnan(ref)) {
        EXPECT_LE(double_ulp_error(ours, ref), kMaxUlp) << x << " ^ " << y;
      }
      const float xf = static_cast<float>(x), yf = static_cast<float>(y);
      const float of = num::pow(xf, yf);
      const float rf = std::pow(xf, yf);
      EXPECT_EQ(std::isnan(of), std::isnan(rf)) << xf << " ^ " << yf;
      if (rf == 0.0f || std::isinf(rf) || rf == 1.0f) {
        EXPECT_TRUE(tltest::same_bits(of, rf)) << xf << " ^ " << yf;
      }
    }
  }
}

TEST(MathRows, LogSumExpAndSoftmax) {
  const double x[] = {1.0, 2.0, 3.0, -1000.0};
  const double lse = num::log_sum_exp(x, 4);
  EXPECT_NEAR(lse, std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-15);
  double sm[4], lsm[4];
  num::softmax(x, 4, 1, sm, 1);
  num::log_softmax(x, 4, 1, lsm, 1);
  double s = 0;
  for (int i = 0; i < 4; ++i) {
    s += sm[i];
    EXPECT_NEAR(lsm[i], x[i] - lse, 1e-12);
  }
  EXPECT_NEAR(s, 1.0, 1e-15);
  EXPECT_EQ(sm[3], 0.0);
  // No overflow for large values: the shift by the maximum.
  const float big[] = {1000.0f, 1000.0f};
  EXPECT_NEAR(num::log_sum_exp(big, 2), 1000.0f + std::log(2.0f), 1e-3);
  // Special rows.
  const float inf = std::numeric_limits<float>::infinity();
  const float with_nan[] = {1.0f, num::float_from_bits(0x7fc00042u), num::float_from_bits(0x7fc00043u)};
  EXPECT_EQ(num::to_bits(num::log_sum_exp(with_nan, 3)), 0x7fc00042u);
  const float with_inf[] = {1.0f, inf};
  EXPECT_EQ(num::log_sum_exp(with_inf, 2), inf);
  const float all_neg_inf[] = {-inf, -inf};
  EXPECT_EQ(num::log_sum_exp(all_neg_inf, 2), -inf);
  EXPECT_EQ(num::log_sum_exp(all_neg_inf, 0), -inf);
}

// Rule 4, separating arm: on a fixed scan there are inputs where libm's
// std::exp / std::log / std::tanh give other bits than ours, so a test that
// compares bits can tell the spellings apart.
TEST(MathSeparating, LibmDiffersFromOursOnFixture) {
  struct Case {
    const char* name;
    float (*ours)(float);
    float (*libm)(float);
  };
  const Case cases[] = {{"exp", num::exp, [](float x) { return std::exp(x); }},
                        {"log", num::log, [](float x) { return std::log(x); }},
                        {"tanh", num::tanh, [](float x) { return std::tanh(x); }}};
  for (const Case& c : cases) {
    int differ = 0;
    float fixture = 0;
    for (std::uint32_t u = 0x3f800000u; u < 0x3f800000u + (1u << 20); ++u) {  // [1, 1.125)
      const float x = bits_to_float(u);
      if (!tltest::same_bits(c.ours(x), c.libm(x))) {
        if (differ++ == 0) fixture = x;
      }
    }
    EXPECT_GT(differ, 0) << c.name << ": no input in the scan separates ours from libm";
    if (differ) {
      EXPECT_FALSE(tltest::same_bits(c.ours(fixture), c.libm(fixture)));
      RecordProperty(std::string("libm_fixture_") + c.name, std::to_string(fixture));
    }
  }
}

// Rule 3, separating arm: a fixture where the fused a*b+c differs from the
// spelled-out add(mul(a, b), c), so a contracted build would be caught.
TEST(MathSeparating, ContractedFmaDiffersFromSpelledOut) {
  const float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  EXPECT_EQ(num::fma(a, a, c), 0x1p-24f);
  EXPECT_EQ(num::add(num::mul(a, a), c), 0.0f);
  const double ad = 1.0 + 0x1p-27, cd = -(1.0 + 0x1p-26);
  EXPECT_EQ(num::fma(ad, ad, cd), 0x1p-54);
  EXPECT_EQ(num::add(num::mul(ad, ad), cd), 0.0);
}

// The array form: same bits for any thread count.
TEST(MathArray, ThreadCountInvariant) {
  std::vector<float> x(100003);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (static_cast<float>(i) - 50000.0f) * 1e-3f;
  for (const char* name : {"exp", "tanh", "sigmoid", "erf"}) {
    std::vector<float> a(x.size()), b(x.size());
    tl::Context c1(tl::Device{}, 1, tl::NumericMode::Identical, 0), c3(tl::Device{}, 3, tl::NumericMode::Identical, 0);
    tl::math_apply<float>(c1, tl::parse_math_fn(name), tl::VectorView<const float>(x.data(), x.size()),
                          tl::VectorView<float>(a.data(), a.size()));
    tl::math_apply<float>(c3, tl::parse_math_fn(name), tl::VectorView<const float>(x.data(), x.size()),
                          tl::VectorView<float>(b.data(), b.size()));
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * 4)) << name;
    for (const Fn& f : kFns) {
      if (std::string(f.name) != name) continue;
      for (std::size_t i = 0; i < x.size(); i += 997) EXPECT_TRUE(tltest::same_bits(a[i], f.ours_f(x[i])));
    }
  }
  EXPECT_THROW(tl::parse_math_fn("exp2"), tl::ValueError);
}
