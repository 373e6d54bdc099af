// Error of a result in units in the last place of its format, measured
// against a reference in a wider format. Host and device (tests only).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TLT_HD __host__ __device__
#else
#define TLT_HD
#endif

namespace tltest {

// ulp of a float-format value of magnitude a (denormal spacing below 2^-126).
TLT_HD inline double float_ulp(double a) {
  a = fabs(a);
  if (!(a >= 0x1p-126)) return 0x1p-149;
  if (a >= 0x1p128) return 0x1p104;
  int e;
  frexp(a, &e);  // a = f 2^e, f in [0.5, 1)
  return ldexp(1.0, e - 24);
}

// |y - r| in float ulps of r, where r is a double (or better) reference.
// NaN must match NaN; a float infinity counts as exact when r rounds to it;
// zeros must agree in sign when r is zero.
TLT_HD inline double float_ulp_error(float y, double r) {
  if (r != r) return y != y ? 0.0 : 1e30;
  if (y != y) return 1e30;
  const float cr = static_cast<float>(r);
  const bool yinf = y - y != 0.0f, crinf = cr - cr != 0.0f;
  if (yinf || crinf) {
    if (y == cr) return 0.0;
    const double yv = yinf ? (y > 0 ? 0x1p128 : -0x1p128) : static_cast<double>(y);
    return fabs(yv - r) / float_ulp(r);
  }
  if (r == 0.0 && y == 0.0) return (1.0 / r > 0) == (1.0f / y > 0) ? 0.0 : 1e30;
  return fabs(static_cast<double>(y) - r) / float_ulp(r);
}

}  // namespace tltest
