// Column minimum, maximum and maximum absolute value, with NaN skipped.
//
// Rule (docs/NUMERICS.md, rule 6: ties are ruled): NaN entries are ignored;
// among the remaining values min and max follow the total order in which
// -0 < +0, so min(-0, +0) = -0 and max(-0, +0) = +0 whatever the order in
// which they are met; max_abs is the largest |x| (|-0| = +0). With that rule
// the result does not depend on the reduction order at all, so the CPU and
// CUDA backends agree bit for bit. The chunk geometry of column_stats is used
// anyway, so both backends visit the data the same way.
#pragma once
#include <cstdint>
#include <limits>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl {

// Extrema of one column. When n == 0 (no non-NaN entry) min, max and max_abs
// are NaN.
struct ColExtrema {
  double min = 0.0;
  double max = 0.0;
  double max_abs = 0.0;
  std::int64_t n = 0;  // number of non-NaN entries
};

namespace extrema_detail {

TL_HD bool sign_bit(double a) {
#if defined(__CUDA_ARCH__)
  return signbit(a);
#else
  return std::signbit(a);
#endif
}

TL_HD double abs_value(double a) {
#if defined(__CUDA_ARCH__)
  return fabs(a);
#else
  return std::fabs(a);
#endif
}

// The smaller of two non-NaN values, -0 below +0.
TL_HD double min_rule(double a, double b) { return (b < a || (b == a && sign_bit(b))) ? b : a; }
// The larger of two non-NaN values, +0 above -0.
TL_HD double max_rule(double a, double b) { return (b > a || (b == a && !sign_bit(b))) ? b : a; }

TL_HD void push(ColExtrema& e, double v) {
  if (tl::num::is_nan(v)) return;
  const double av = abs_value(v);
  if (e.n == 0) {
    e.min = v;
    e.max = v;
    e.max_abs = av;
  } else {
    e.min = min_rule(e.min, v);
    e.max = max_rule(e.max, v);
    e.max_abs = max_rule(e.max_abs, av);
  }
  ++e.n;
}

TL_HD ColExtrema merge(const ColExtrema& a, const ColExtrema& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  ColExtrema r;
  r.min = min_rule(a.min, b.min);
  r.max = max_rule(a.max, b.max);
  r.max_abs = max_rule(a.max_abs, b.max_abs);
  r.n = a.n + b.n;
  return r;
}

// NaN in the value fields of an empty column.
TL_HD ColExtrema finish(ColExtrema e) {
  if (e.n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.min = nan;
    e.max = nan;
    e.max_abs = nan;
  }
  return e;
}

}  // namespace extrema_detail

// Per-column extrema of X (rows x cols, host or the context's device).
// out: cols entries, host memory.
template <class T>
void column_extrema(const Context& ctx, MatrixView<const T> X, ColExtrema* out);

}  // namespace tl
