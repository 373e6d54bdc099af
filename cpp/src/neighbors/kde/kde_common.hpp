// Kernel-density math shared by the CPU and CUDA backends (definitions in
// twinlearn/neighbors/kde.hpp): everything TL_HD and spelled out with
// tl::num, so a term is the same bits on both backends.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/distance/distance_common.hpp"
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/reduce.hpp"
#include "twinlearn/neighbors/kde.hpp"

namespace tl::kde {

// The canonical order's geometry (core/reduce.hpp).
inline constexpr std::int64_t kChunk = kReduceChunk;      // 2048 rows
inline constexpr std::int64_t kLanes = kReduceLanes;      // 256 lanes
inline constexpr std::int64_t kLaneLen = kReduceLaneLen;  // 8 terms a lane

// The two passes of a log-sum-exp kernel; compact kernels take Sum only.
enum class Pass : int { Max = 0, Sum = 1 };

// Constants of one call, host-computed once.
template <class T>
struct Params {
  KdeKernel kernel;
  MetricKind metric;
  T p;       // minkowski's p
  T h;       // bandwidth
  T h2;      // h * h
};

template <class T>
TL_HD T neg_inf() {
  return -static_cast<T>(INFINITY);
}

// The pass's identity: -inf for the maximum, -0.0 for the sum (exact for
// IEEE addition, so padding lanes change nothing).
template <class T>
TL_HD T identity(Pass pass) {
  return pass == Pass::Max ? neg_inf<T>() : T(-0.0);
}

// merge of two partials of a pass.
template <class T>
TL_HD T merge(Pass pass, T a, T b) {
  if (pass == Pass::Max) return a < b ? b : a;
  return num::add(a, b);
}

// The distance from the metric's accumulator (the direct chains: squared
// euclidean by differences, manhattan, chebyshev, sum |d|^p).
template <class T>
TL_HD T distance(const Params<T>& c, T acc) {
  return dist::output_value(c.metric, acc, c.p);
}

// log K of a log kernel at distance d.
template <class T>
TL_HD T log_kernel(const Params<T>& c, T d) {
  if (c.kernel == KdeKernel::Gaussian) return num::div(num::mul(T(-0.5), num::mul(d, d)), c.h2);
  return num::div(-d, c.h);  // exponential
}

// K of a compact kernel at distance d (0 unless d < h).
template <class T>
TL_HD T compact_kernel(const Params<T>& c, T d) {
  if (!(d < c.h)) return T(0);
  switch (c.kernel) {
    case KdeKernel::Tophat: return T(1);
    case KdeKernel::Epanechnikov: return num::sub(T(1), num::div(num::mul(d, d), c.h2));
    case KdeKernel::Linear: return num::sub(T(1), num::div(d, c.h));
    case KdeKernel::Cosine: {
      const T pi = static_cast<T>(3.14159265358979323846);
      return num::cos(num::div(num::mul(num::mul(T(0.5), pi), d), c.h));
    }
    default: return T(0);
  }
}

// The term of one (query, training row) pair from its metric accumulator.
//   Max pass:  log K where w > 0, else -inf;
//   Sum pass:  w * exp(log K - shift) for log kernels (0 when shift is -inf),
//              w * K for compact kernels.
// has_w false: w is 1 (the product is skipped, which is exact).
template <class T>
TL_HD T term(const Params<T>& c, Pass pass, T acc, bool has_w, T w, T shift) {
  const T d = distance(c, acc);
  if (pass == Pass::Max) return (!has_w || w > T(0)) ? log_kernel(c, d) : neg_inf<T>();
  T k;
  if (kde_kernel_is_log(c.kernel)) {
    if (shift == neg_inf<T>()) return T(0);
    k = num::exp(num::sub(log_kernel(c, d), shift));
  } else {
    k = compact_kernel(c, d);
  }
  return has_w ? num::mul(w, k) : k;
}

// The metric family of a KDE distance (the direct forms).
inline dist::Family family_of(MetricKind k) {
  Metric m;
  m.kind = k;
  m.direct = true;
  return dist::family_of(m);
}

}  // namespace tl::kde
