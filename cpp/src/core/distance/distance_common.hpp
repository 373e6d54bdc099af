// Distance math shared by the CPU and CUDA backends, by pairwise distances,
// nearest neighbours and KMeans (see twinlearn/neighbors/distance.hpp for the
// definitions). Everything here is TL_HD and spelled out with tl::num, so a
// value is the same bits on both backends.
#pragma once
#include <cmath>
#include <cstdint>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/ties.hpp"
#include "twinlearn/neighbors/distance.hpp"

namespace tl::dist {

// How the per-feature terms accumulate.
// L2 is the direct form of (sq)euclidean: acc = fma(x - y, x - y, acc).
enum class Family : int { Dot = 0, L1 = 1, Linf = 2, Lp = 3, L2 = 4 };

inline Family family_of(const Metric& m) {
  switch (m.kind) {
    case MetricKind::Euclidean:
    case MetricKind::SqEuclidean: return m.direct ? Family::L2 : Family::Dot;
    case MetricKind::Cosine: return Family::Dot;
    case MetricKind::Manhattan: return Family::L1;
    case MetricKind::Chebyshev: return Family::Linf;
    case MetricKind::Minkowski: return Family::Lp;
  }
  return Family::Dot;
}

// Metrics whose ranking needs the squared row norms.
inline bool needs_norms(const Metric& m) { return family_of(m) == Family::Dot; }

// |x| by an exact negation (-0 stays -0, which adds as +0 to a sum from +0).
template <class T>
TL_HD T absval(T x) {
  return x < T(0) ? -x : x;
}
template <class T>
TL_HD T maxval(T a, T b) {
  return a < b ? b : a;
}

#if defined(__CUDACC__)
// The device's pow of the Lp steps as a call, not inlined: the tile kernels
// unroll 64 steps per feature, and 64 inlined copies of pow per kernel made
// the Lp kernels the longest part of the build. (The project compiles with
// --fmad=false, so inlining or not gives the same bits.)
template <class T>
__device__ __noinline__ T lp_pow_device(T x, T p) {
  return num::pow(x, p);
}
#endif

// x^p for x >= 0 (Minkowski with p other than 1, 2, inf): the project's pow
// (core/math.hpp), the same bits on both backends.
template <class T>
TL_HD T lp_pow(T x, T p) {
#if defined(__CUDA_ARCH__)
  return lp_pow_device(x, p);
#else
  return num::pow(x, p);
#endif
}

// One accumulation step of feature p: acc <- step(x[p], y[p], acc).
template <class T, Family F>
struct Step;
template <class T>
struct Step<T, Family::Dot> {
  TL_HD static T apply(T x, T y, T acc, T) { return num::fma(x, y, acc); }
};
template <class T>
struct Step<T, Family::L2> {
  TL_HD static T apply(T x, T y, T acc, T) {
    const T df = num::sub(x, y);
    return num::fma(df, df, acc);
  }
};
template <class T>
struct Step<T, Family::L1> {
  TL_HD static T apply(T x, T y, T acc, T) { return num::add(acc, absval(num::sub(x, y))); }
};
template <class T>
struct Step<T, Family::Linf> {
  TL_HD static T apply(T x, T y, T acc, T) { return maxval(acc, absval(num::sub(x, y))); }
};
template <class T>
struct Step<T, Family::Lp> {
  TL_HD static T apply(T x, T y, T acc, T p) { return num::add(acc, lp_pow(absval(num::sub(x, y)), p)); }
};

// The accumulator of rows a and b (d features, unit stride), from +0.0.
template <class T, Family F>
TL_HD T accumulate(const T* a, const T* b, std::int64_t d, T p) {
  T acc = T(0);
  for (std::int64_t q = 0; q < d; ++q) acc = Step<T, F>::apply(a[q], b[q], acc, p);
  return acc;
}

// Squared norm: the dot chain of a row with itself.
template <class T>
TL_HD T sqnorm(const T* a, std::int64_t d) {
  T acc = T(0);
  for (std::int64_t q = 0; q < d; ++q) acc = num::fma(a[q], a[q], acc);
  return acc;
}

// (xn + yn) - 2 dot, clamped at +0 (a NaN stays NaN).
template <class T>
TL_HD T sq_from_dot(T xn, T yn, T dot) {
  const T s = num::sub(num::add(xn, yn), num::mul(T(2), dot));
  return s < T(0) ? T(0) : s;
}

template <class T>
TL_HD T cosine_from_dot(T xn, T yn, T dot) {
  const T nx = xn == T(0) ? T(1) : num::sqrt(xn);
  const T ny = yn == T(0) ? T(1) : num::sqrt(yn);
  const T d = num::sub(T(1), num::div(dot, num::mul(nx, ny)));
  return d < T(0) ? T(0) : (d > T(2) ? T(2) : d);
}

// The ranking value of a pair (smaller is nearer): from the accumulator and,
// for dot metrics, the squared norms.
template <class T>
TL_HD T rank_value(MetricKind k, T acc, T xn, T yn) {
  switch (k) {
    case MetricKind::Euclidean:
    case MetricKind::SqEuclidean: return sq_from_dot(xn, yn, acc);
    case MetricKind::Cosine: return cosine_from_dot(xn, yn, acc);
    default: return acc;
  }
}

// The reported distance from the ranking value (monotone non-decreasing).
template <class T>
TL_HD T output_value(MetricKind k, T r, T p) {
  switch (k) {
    case MetricKind::Euclidean: return num::sqrt(r);
    case MetricKind::Minkowski: return lp_pow(r, num::div(T(1), p));
    default: return r;
  }
}

// The project's value order (core/ties.hpp: NaN last, -0 == +0); (value,
// index) pairs compare lexicographically, so the nearest of any set of
// candidates is unique and does not depend on the order in which candidates
// are examined.
template <class T>
TL_HD bool value_less(T a, T b) {
  return ties::value_less(a, b);
}
template <class T>
TL_HD bool nearer(T a, std::int64_t ia, T b, std::int64_t ib) {
  return ties::argmin_better(a, ia, b, ib);
}

// Sentinel of an empty neighbour slot, (NaN, kNoIndex): loses to every real
// candidate, a NaN distance included.
inline constexpr std::int64_t kNoIndex = INT64_MAX;
template <class T>
TL_HD T empty_value() {
  return num::quiet_nan(T(0));
}

// The tensor-core filters of the exact searches (KMeans' certified
// assignment, kmeans_mma.cuh; the certified nearest-neighbour search,
// distance_cuda_impl.cuh). A filter value of a pair (a 3xTF32 dot product
// on the tensor cores, turned into a squared distance from the same norms)
// and the canonical one (rank_value of the chain of accumulate) differ by
// less than E = filter_bound(xn + yn_max) for float data of d <= 128
// features (yn_max: the largest squared norm on the other side):
// - the canonical chain is off the exact dot product by at most
//   gamma_d sum |x_f y_f| <= gamma_d (xn + yn) / 2 (gamma_d = d u / (1 - d u),
//   u = 2^-24: 2^-17 for d = 128), and its two roundings add 3 u (xn + yn);
// - the split products miss at most 3 * 2^-22 |x_f y_f| each, and the tensor
//   cores' float32 sums (3 d products, at most 8 units in the last place of
//   the running magnitudes a step of 8, a pessimistic model of their
//   truncating alignment) at most 3 d 2^-23 sum |x_f y_f|: about
//   2^-14.4 (xn + yn) / 2 for d = 128; the filter's own FMA one more
//   rounding;
// in all below 2^-14 (xn + yn), and kFilterSlack = 2^-11 is eight times that.
// The bound is one of relative errors, so it holds where no product or sum
// overflows and underflow's absolute errors are far below E: filter_bound is
// +inf (nothing certified) unless 2^-60 <= xn + yn_max <= 2^100.
inline constexpr int kFilterMaxFeatures = 128;
inline constexpr float kFilterSlack = 1.0f / 2048.0f;
TL_HD float filter_bound(float scale) {
  if (!(scale >= 0x1p-60f && scale <= 0x1p100f)) return INFINITY;
  return num::mul(kFilterSlack, scale);
}

// The certified nearest-neighbour search's rule: a query's filter list holds
// its `kl` smallest filter values, the k-th `kth` and the last `last`. Every
// pair of the canonical k nearest has a filter value at most kth + 2E (it is
// within E of its canonical value, which is at most the canonical value of
// some pair of the filter's k nearest, within E of its filter value <= kth;
// both values are clamped at 0, which moves neither difference up). So when
// last > kth + 2E, the filter's list holds the canonical k nearest, and they
// are its k nearest by canonical value.
TL_HD bool knn_list_certified(float kth, float last, float xq, float yn_max) {
  const float e = filter_bound(num::add(xq, yn_max));
  return last > num::add(kth, num::mul(2.0f, e));
}

}  // namespace tl::dist
