// The whole Holt-Winters fit of one series, as one host/device function.
//
// holt_winters_fit_one reads one series (a strided column of the batch) and
// nothing else: initial values, the brute-force start grid, the SSE
// recursion with its exact gradient (forward-mode dual numbers), the bounded
// quasi-Newton iterations (core/small_minimize.hpp) and the final smoothing
// pass. Every floating-point operation is a tl::num scalar operation in a
// fixed sequential order, so the CPU backend (a parallel loop over series)
// and the CUDA backend (one thread per series) produce the same bits, and a
// series' result never depends on the batch it is fitted in.
//
// Semantics follow statsmodels.tsa.holtwinters.ExponentialSmoothing (fit
// with method L-BFGS-B, use_brute): the parameter vector
//   p = [alpha, beta, gamma, l0, b0, phi, s0 .. s_{m-1}],
// the recursion of its smoothers (level l, trend b, seasonal s; y[i - 1]
// updates the states that predict y[i]), the optimisation in the
// "unrestricted" space a, b' = beta / alpha, g' = gamma / (1 - alpha), its
// bounds, its starting values and grid, and its 'estimated' / 'heuristic'
// initial values.
#pragma once
#include <cstdint>
#include <limits>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/small_minimize.hpp"

namespace tl::tsa {

enum HwComponent : int { kHwNone = 0, kHwAdd = 1, kHwMul = 2 };
enum HwInit : int { kHwEstimated = 0, kHwHeuristic = 1, kHwKnown = 2 };
// Per-series outcome.
enum HwStatus : int {
  kHwOk = 0,
  kHwAllNaN = 1,       // no finite value
  kHwTooShort = 2,     // too few points for the model / initialisation
  kHwNonPositive = 3,  // y <= 0 with a multiplicative component
  kHwInnerNaN = 4,     // a NaN between the first and the last finite value
  kHwNonFinite = 5,    // the fitted SSE is not finite
};

constexpr int kHwMaxSeasonal = 64;  // seasonal_periods <= 64
constexpr int kHwMaxFree = 32;      // free parameters: 6 + m <= 32 with 'estimated'

struct HoltWintersSpec {
  int trend = kHwNone;
  int seasonal = kHwNone;
  int damped = 0;
  int m = 0;  // seasonal periods (0 without a seasonal component)
  int init = kHwEstimated;
  // Fixed smoothing parameters; NaN means "estimate".
  double alpha = std::numeric_limits<double>::quiet_NaN();
  double beta = std::numeric_limits<double>::quiet_NaN();
  double gamma = std::numeric_limits<double>::quiet_NaN();
  double phi = std::numeric_limits<double>::quiet_NaN();
  int use_brute = 1;
  int max_iter = 1000;
  double ftol = 1e-12;  // relative SSE decrease that stops the iterations
  double pgtol = 1e-10;
};

// Per-series outputs (all host or all device pointers, one series' slots).
struct HwSeriesOut {
  double* params;  // 6 + m: alpha, beta, gamma, l0, b0, phi, s0..s_{m-1}
  double* state;   // 2 + m: level, trend after the last point, the m seasonals of the forecast cycle
  double* fitted;  // the series' column of the fitted values (stride fstride), NaN outside the series
  std::int64_t fstride;
  double* sse;
  std::int32_t* status;
  std::int32_t* iterations;
  std::int32_t* converged;
  std::int64_t* start;  // first finite index
  std::int64_t* nobs;
};

namespace hw_detail {

constexpr double kLowerBound = 1.4901161193847656e-08;  // sqrt(double epsilon), statsmodels' LOWER_BOUND

// Scalar and forward-mode dual arithmetic with one spelling, so the recursion
// is written once: double for values, Dual<K> for values with K tangents.
template <int K>
struct Dual {
  double v;
  double d[K];
};

TL_HD double cst(double c, const double*) { return c; }
template <int K>
TL_HD Dual<K> cst(double c, const Dual<K>*) {
  Dual<K> r;
  r.v = c;
  for (int k = 0; k < K; ++k) r.d[k] = 0.0;
  return r;
}
TL_HD double val(double a) { return a; }
template <int K>
TL_HD double val(const Dual<K>& a) {
  return a.v;
}

TL_HD double add(double a, double b) { return num::add(a, b); }
TL_HD double sub(double a, double b) { return num::sub(a, b); }
TL_HD double mul(double a, double b) { return num::mul(a, b); }
TL_HD double div(double a, double b) { return num::div(a, b); }
TL_HD double pw(double a, double b) { return num::pow(a, b); }

template <int K>
TL_HD Dual<K> add(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r;
  r.v = num::add(a.v, b.v);
  for (int k = 0; k < K; ++k) r.d[k] = num::add(a.d[k], b.d[k]);
  return r;
}
template <int K>
TL_HD Dual<K> sub(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r;
  r.v = num::sub(a.v, b.v);
  for (int k = 0; k < K; ++k) r.d[k] = num::sub(a.d[k], b.d[k]);
  return r;
}
template <int K>
TL_HD Dual<K> mul(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r;
  r.v = num::mul(a.v, b.v);
  for (int k = 0; k < K; ++k) r.d[k] = num::add(num::mul(a.d[k], b.v), num::mul(a.v, b.d[k]));
  return r;
}
template <int K>
TL_HD Dual<K> div(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r;
  r.v = num::div(a.v, b.v);
  for (int k = 0; k < K; ++k) r.d[k] = num::div(num::sub(a.d[k], num::mul(r.v, b.d[k])), b.v);
  return r;
}
// a^b = exp(b log a): d = a^b (b / a da + log(a) db).
template <int K>
TL_HD Dual<K> pw(const Dual<K>& a, const Dual<K>& b) {
  Dual<K> r;
  r.v = num::pow(a.v, b.v);
  const double ca = num::mul(r.v, num::div(b.v, a.v));
  const double cb = num::mul(r.v, num::log(a.v));
  for (int k = 0; k < K; ++k) r.d[k] = num::add(num::mul(ca, a.d[k]), num::mul(cb, b.d[k]));
  return r;
}

struct HwModel {
  int trend, seasonal, damped, m;
};

// The smoothing recursion over y[0..n) (stride ystride) from p (alpha, beta,
// gamma, l0, b0, phi, s0..). Returns the SSE, summed in time order. With
// fitted != nullptr (S = double) it writes the fitted values and the
// forecast state (see HwSeriesOut::state).
template <class S, int TR = -1, int SE = -1>
TL_HD S hw_recursion(const HwModel& md, const double* y, std::int64_t ystride, std::int64_t n, const S* p, S* ring,
                     double* fitted, std::int64_t fstride, double* state) {
  const S* tag = nullptr;
  // TR / SE >= 0 fix the components at compile time (the same operations, fewer branches).
  const int trend = TR >= 0 ? TR : md.trend;
  const int seasonal = SE >= 0 ? SE : md.seasonal;
  const int m = seasonal ? md.m : 1;
  const S one = cst(1.0, tag);
  const S& alpha = p[0];
  const S& beta = p[1];
  const S& gamma = p[2];
  const S& phi = p[5];
  const S alphac = sub(one, alpha);
  const S betac = sub(one, beta);
  const S gammac = sub(one, gamma);
  const S betac_phi = mul(betac, phi);
  S l = p[3], b = p[4];
  if (seasonal)
    for (int j = 0; j < m; ++j) ring[j] = p[6 + j];
  S sse = cst(0.0, tag);
  double s_last_old = 0.0;
  int slot = 0;  // i % m
  for (std::int64_t i = 0; i < n; ++i) {
    // Trend term: add: l + phi b; mul: l b^phi (b when undamped); none: l.
    S db = b;
    S tb = l;
    if (trend == kHwAdd) {
      db = mul(phi, b);
      tb = add(l, db);
    } else if (trend == kHwMul) {
      db = md.damped ? pw(b, phi) : b;
      tb = mul(l, db);
    }
    S fit = tb;
    if (seasonal == kHwAdd)
      fit = add(tb, ring[slot]);
    else if (seasonal == kHwMul)
      fit = mul(tb, ring[slot]);
    const S yi = cst(y[i * ystride], tag);
    const S err = sub(yi, fit);
    sse = add(sse, mul(err, err));
    if (fitted) fitted[i * fstride] = val(fit);
    // States for i + 1 from y[i].
    S ln;
    if (seasonal == kHwAdd)
      ln = add(sub(mul(alpha, yi), mul(alpha, ring[slot])), mul(alphac, tb));
    else if (seasonal == kHwMul)
      ln = add(div(mul(alpha, yi), ring[slot]), mul(alphac, tb));
    else
      ln = add(mul(alpha, yi), mul(alphac, tb));
    if (trend == kHwAdd)
      b = add(mul(beta, sub(ln, l)), mul(betac_phi, b));
    else if (trend == kHwMul)
      b = add(mul(beta, div(ln, l)), mul(betac, db));
    if (seasonal) {
      if (i == n - 1) s_last_old = val(ring[slot]);
      if (seasonal == kHwAdd)
        ring[slot] = add(sub(mul(gamma, yi), mul(gamma, tb)), mul(gammac, ring[slot]));
      else
        ring[slot] = add(div(mul(gamma, yi), tb), mul(gammac, ring[slot]));
    }
    l = ln;
    slot = slot + 1 == m ? 0 : slot + 1;
  }
  if (state) {
    state[0] = val(l);
    state[1] = trend ? val(b) : 0.0;
    if (seasonal) {
      // statsmodels' forecast cycle: s[n-1] (before its last update), s[n], .., s[n+m-2].
      state[2] = s_last_old;
      for (int j = 1; j < m; ++j) state[2 + j] = val(ring[(slot + j - 1) % m]);
    }
  }
  return sse;
}

// Initial values l0, b0, s0 (statsmodels' _initialization_simple and
// _initialization_heuristic). Returns a status.
TL_HD int hw_initial_values(const HwModel& md, int init, const double* y, std::int64_t ys, std::int64_t n, double* l0,
                            double* b0, double* s0) {
  const int m = md.m;
  *b0 = 0.0;
  bool simple = false;
  if (init == kHwEstimated) simple = n < 10 + 2 * (md.seasonal ? m / 2 : 0);
  if (!simple && n < 10) return kHwTooShort;
  if (md.seasonal && n < 2 * m) return kHwTooShort;
  if (md.trend && n < 2) return kHwTooShort;
  if (simple) {
    if (!md.seasonal) {
      *l0 = y[0];
      if (md.trend == kHwAdd) *b0 = num::sub(y[ys], y[0]);
      if (md.trend == kHwMul) *b0 = num::div(y[ys], y[0]);
      return kHwOk;
    }
    double s = 0.0;
    for (int j = 0; j < m; ++j) s = num::add(s, y[j * ys]);
    *l0 = num::div(s, double(m));
    if (md.trend) {
      double t = 0.0;
      for (int j = m; j < 2 * m; ++j) t = num::add(t, num::div(num::sub(y[j * ys], y[(j - m) * ys]), double(m)));
      *b0 = num::div(t, double(m));
    }
    for (int j = 0; j < m; ++j) s0[j] = md.seasonal == kHwAdd ? num::sub(y[j * ys], *l0) : num::div(y[j * ys], *l0);
    return kHwOk;
  }
  // Heuristic: the first 10 points (or 10 values of the centred moving average).
  double lv[10];
  if (md.seasonal) {
    const int min_obs = 10 + 2 * (m / 2);
    if (n < min_obs) return kHwTooShort;
    std::int64_t k = n / m < 5 ? n / m : 5;
    const std::int64_t kmin = (min_obs + m - 1) / m;
    if (k < kmin) k = kmin;
    const std::int64_t N = k * m < n ? k * m : n;
    const int h = m / 2;
    const bool even = m % 2 == 0;
    double ssum[kHwMaxSeasonal];
    int scnt[kHwMaxSeasonal];
    for (int j = 0; j < m; ++j) {
      ssum[j] = 0.0;
      scnt[j] = 0;
    }
    int nl = 0;
    // Centred moving average at t (valid for t in [h, N - 1 - h]); even m: the 2 x m average.
    for (std::int64_t t = h; t <= N - 1 - h; ++t) {
      double a = 0.0;
      for (int j = 0; j < m; ++j) a = num::add(a, y[(t - h + j) * ys]);
      a = num::div(a, double(m));
      if (even) {
        double c = 0.0;
        for (int j = 0; j < m; ++j) c = num::add(c, y[(t + 1 - h + j) * ys]);
        c = num::div(c, double(m));
        a = num::div(num::add(a, c), 2.0);
      }
      if (nl < 10) lv[nl++] = a;
      const double yt = y[t * ys];
      const int j = static_cast<int>(t % m);
      ssum[j] = num::add(ssum[j], md.seasonal == kHwAdd ? num::sub(yt, a) : num::div(yt, a));
      ++scnt[j];
    }
    if (nl < 10) return kHwTooShort;
    double mean = 0.0;
    for (int j = 0; j < m; ++j) {
      s0[j] = scnt[j] ? num::div(ssum[j], double(scnt[j])) : num::quiet_nan(0.0);
      mean = num::add(mean, s0[j]);
    }
    mean = num::div(mean, double(m));
    for (int j = 0; j < m; ++j) s0[j] = md.seasonal == kHwAdd ? num::sub(s0[j], mean) : num::div(s0[j], mean);
  } else {
    for (int i = 0; i < 10; ++i) lv[i] = y[i * ys];
  }
  // Least squares of lv on [1, t], t = 1..10: t - 5.5 sums to 0, sum (t - 5.5)^2 = 82.5.
  double sy = 0.0, sty = 0.0;
  for (int i = 0; i < 10; ++i) {
    sy = num::add(sy, lv[i]);
    sty = num::add(sty, num::mul(num::sub(double(i + 1), 5.5), lv[i]));
  }
  const double slope = num::div(sty, 82.5);
  const double level = num::sub(num::div(sy, 10.0), num::mul(slope, 5.5));
  *l0 = level;
  if (md.trend == kHwAdd) *b0 = slope;
  if (md.trend == kHwMul) *b0 = num::add(1.0, num::div(slope, level));
  return kHwOk;
}

// numpy.linspace(lo, hi, num)[i].
TL_HD double linspace_at(double lo, double hi, int num, int i) {
  if (num == 1) return lo;
  if (i == num - 1) return hi;
  const double step = num::div(num::sub(hi, lo), double(num - 1));
  return num::add(num::mul(double(i), step), lo);
}

TL_HD int ceil_int(double v) {
  int c = static_cast<int>(v);
  return double(c) < v ? c + 1 : c;
}

struct HwProblem {
  HwModel md;
  const double* y;
  std::int64_t ys, n;
  double p[6 + kHwMaxSeasonal];  // full parameter vector (restricted space)
  bool sel[6 + kHwMaxSeasonal];
  int free_idx[kHwMaxFree];
  int nfree;
};

// SSE at the restricted parameters p (double).
TL_HD double hw_sse(const HwProblem& pr, const double* p) {
  double ring[kHwMaxSeasonal];
  const HwModel& md = pr.md;
#define TL_HW_SSE(TR, SE)                  \
  if (md.trend == TR && md.seasonal == SE) \
    return hw_recursion<double, TR, SE>(md, pr.y, pr.ys, pr.n, p, ring, nullptr, 0, nullptr);
  TL_HW_SSE(kHwNone, kHwNone)
  TL_HW_SSE(kHwNone, kHwAdd)
  TL_HW_SSE(kHwNone, kHwMul)
  TL_HW_SSE(kHwAdd, kHwNone)
  TL_HW_SSE(kHwAdd, kHwAdd)
  TL_HW_SSE(kHwAdd, kHwMul)
  TL_HW_SSE(kHwMul, kHwNone)
  TL_HW_SSE(kHwMul, kHwAdd)
  TL_HW_SSE(kHwMul, kHwMul)
#undef TL_HW_SSE
  return hw_recursion<double>(md, pr.y, pr.ys, pr.n, p, ring, nullptr, 0, nullptr);
}

// The optimiser's objective: SSE and its gradient over the free parameters
// in the unrestricted space (x[k] is p[free_idx[k]], with alpha, beta, gamma
// mapped as in statsmodels' to_restricted).
template <int K>
struct HwObjective {
  const HwProblem* pr;
  Dual<K> ring[kHwMaxSeasonal];
  Dual<K> q[6 + kHwMaxSeasonal];
  TL_HD double operator()(const double* x, double* g) {
    const HwProblem& P = *pr;
    const Dual<K>* tag = nullptr;
    const int np = 6 + (P.md.seasonal ? P.md.m : 0);
    for (int i = 0; i < np; ++i) q[i] = cst(P.p[i], tag);
    for (int k = 0; k < P.nfree; ++k) {
      Dual<K>& v = q[P.free_idx[k]];
      v.v = x[k];
      v.d[k] = 1.0;
    }
    if (P.sel[0])
      q[0] = add(cst(kLowerBound, tag), mul(q[0], cst(num::sub(num::sub(1.0, kLowerBound), kLowerBound), tag)));
    const Dual<K> zero = cst(0.0, tag);
    if (P.sel[1]) q[1] = add(zero, mul(q[1], sub(q[0], zero)));
    if (P.sel[2]) q[2] = add(zero, mul(q[2], sub(sub(cst(1.0, tag), q[0]), zero)));
    Dual<K> s = hw_recursion<Dual<K>>(P.md, P.y, P.ys, P.n, q, ring, nullptr, 0, nullptr);
    for (int k = 0; k < P.nfree; ++k) g[k] = s.d[k];
    return s.v;
  }
};

template <int K>
TL_HD tl::opt::SmallMinimizeResult<double> hw_minimize(const HwProblem& pr, double* x, const double* lb,
                                                       const double* ub,
                                                       const tl::opt::SmallMinimizeOptions<double>& o) {
  HwObjective<K> obj;
  obj.pr = &pr;
  return tl::opt::small_minimize<kHwMaxFree>(obj, pr.nfree, x, lb, ub, o);
}

}  // namespace hw_detail

// Fits one series: y[0..rows) with stride ys (NaN padding allowed before the
// first and after the last finite value). known: l0, b0, s0.. for
// initialization 'known' (else unused).
TL_HD void holt_winters_fit_one(const HoltWintersSpec& sp, const double* col, std::int64_t ys, std::int64_t rows,
                                const double* known, const HwSeriesOut& o) {
  using namespace hw_detail;
  const double nan = num::quiet_nan(0.0);
  const int m = sp.seasonal ? sp.m : 0;
  for (int i = 0; i < 6 + m; ++i) o.params[i] = nan;
  for (int i = 0; i < 2 + m; ++i) o.state[i] = nan;
  for (std::int64_t i = 0; i < rows; ++i) o.fitted[i * o.fstride] = nan;
  *o.sse = nan;
  *o.iterations = 0;
  *o.converged = 0;
  std::int64_t first = -1, last = -1;
  for (std::int64_t i = 0; i < rows; ++i)
    if (!num::is_nan(col[i * ys])) {
      if (first < 0) first = i;
      last = i;
    }
  *o.start = first < 0 ? 0 : first;
  *o.nobs = first < 0 ? 0 : last - first + 1;
  if (first < 0) {
    *o.status = kHwAllNaN;
    return;
  }
  const std::int64_t n = last - first + 1;
  const double* y = col + first * ys;
  bool positive = true;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = y[i * ys];
    if (num::is_nan(v)) {
      *o.status = kHwInnerNaN;
      return;
    }
    positive = positive && v > 0.0;
  }
  if ((sp.trend == kHwMul || sp.seasonal == kHwMul) && !positive) {
    *o.status = kHwNonPositive;
    return;
  }
  if (n < 2 || (m && n < 2 * m)) {
    *o.status = kHwTooShort;
    return;
  }
  HwProblem pr;
  pr.md = HwModel{sp.trend, sp.seasonal, sp.damped, m};
  pr.y = y;
  pr.ys = ys;
  pr.n = n;
  double l0 = 0.0, b0 = 0.0, s0[kHwMaxSeasonal];
  if (sp.init == kHwKnown) {
    l0 = known[0];
    b0 = sp.trend ? known[1] : 0.0;
    for (int j = 0; j < m; ++j) s0[j] = known[2 + j];
  } else {
    const int st = hw_initial_values(pr.md, sp.init, y, ys, n, &l0, &b0, s0);
    if (st != kHwOk) {
      *o.status = st;
      return;
    }
  }
  // Starting values and the free set (statsmodels' _optimize_parameters).
  const bool fa = num::is_nan(sp.alpha), fb = sp.trend && num::is_nan(sp.beta);
  const bool fg = m && num::is_nan(sp.gamma), fphi = sp.damped && num::is_nan(sp.phi);
  const double a0 = fa ? num::div(0.5, double(m > 1 ? m : 1)) : sp.alpha;
  double* p = pr.p;
  p[0] = a0;
  p[1] = sp.trend ? (fb ? num::mul(0.1, a0) : sp.beta) : 0.0;
  p[2] = m ? (fg ? num::mul(0.05, num::sub(1.0, a0)) : sp.gamma) : 0.0;
  p[3] = l0;
  p[4] = b0;
  p[5] = sp.damped ? (fphi ? 0.99 : sp.phi) : 1.0;
  for (int j = 0; j < m; ++j) p[6 + j] = s0[j];
  const bool est = sp.init == kHwEstimated;
  bool* sel = pr.sel;
  sel[0] = fa;
  sel[1] = fb;
  sel[2] = fg;
  sel[3] = est;
  sel[4] = est && sp.trend;
  sel[5] = fphi;
  for (int j = 0; j < m; ++j) sel[6 + j] = est;
  pr.nfree = 0;
  for (int i = 0; i < 6 + m; ++i)
    if (sel[i] && pr.nfree < kHwMaxFree) pr.free_idx[pr.nfree++] = i;
  int status = kHwOk;
  if (pr.nfree > 0) {
    // Brute-force start over the smoothing parameters (statsmodels' _setup_brute order).
    const int nsel3 = int(fa) + int(fb) + int(fg);
    if (sp.use_brute && nsel3 > 0) {
      const int ns = 87 / nsel3;
      double best = __builtin_huge_val();
      double bp0 = p[0], bp1 = p[1], bp2 = p[2];
      double q[6 + kHwMaxSeasonal];
      for (int i = 0; i < 6 + m; ++i) q[i] = p[i];
      auto try_point = [&](double a, double b, double g) {
        q[0] = a;
        q[1] = b;
        q[2] = g;
        const double v = hw_sse(pr, q);
        if (v < best) {
          best = v;
          bp0 = a;
          bp1 = b;
          bp2 = g;
        }
      };
      if (!fa) {
        const double blo = 0.005, bhi = num::sub(p[0] < 1.0 ? p[0] : 1.0, 0.005);
        const double glo = 0.005, ghi = num::sub(num::sub(1.0, p[0]) < 1.0 ? num::sub(1.0, p[0]) : 1.0, 0.005);
        if (fb && fg) {
          for (int gi = 0; gi < ns; ++gi)
            for (int bi = 0; bi < ns; ++bi)
              try_point(p[0], linspace_at(blo, bhi, ns, bi), linspace_at(glo, ghi, ns, gi));
        } else if (fb) {
          for (int bi = 0; bi < ns; ++bi) try_point(p[0], linspace_at(blo, bhi, ns, bi), p[2]);
        } else {
          for (int gi = 0; gi < ns; ++gi) try_point(p[0], p[1], linspace_at(glo, ghi, ns, gi));
        }
      } else {
        for (int ai = 0; ai < ns; ++ai) {
          const double a = linspace_at(0.005, 0.995, ns, ai);
          const double bub = a < 1.0 ? a : 1.0;
          const double gub = num::sub(1.0, a) < 1.0 ? num::sub(1.0, a) : 1.0;
          const int nb = ceil_int(num::mul(double(ns), num::sqrt(a)));
          const int ng = ceil_int(num::mul(double(ns), num::sqrt(num::sub(1.0, a))));
          if (fb && fg) {
            for (int gi = 0; gi < ng; ++gi)
              for (int bi = 0; bi < nb; ++bi)
                try_point(a, linspace_at(0.0, bub, nb, bi), linspace_at(0.0, gub, ng, gi));
          } else if (fb) {
            for (int bi = 0; bi < nb; ++bi) try_point(a, linspace_at(0.0, bub, nb, bi), p[2]);
          } else if (fg) {
            for (int gi = 0; gi < ng; ++gi) try_point(a, p[1], linspace_at(0.0, gub, ng, gi));
          } else {
            try_point(a, p[1], p[2]);
          }
        }
      }
      if (fa) p[0] = bp0;
      if (fb) p[1] = bp1;
      if (fg) p[2] = bp2;
    }
    // Bounds (restricted space for alpha, beta, gamma: [0, 1]).
    const double inf = __builtin_huge_val();
    const double lvl_lb = (sp.trend == kHwMul || sp.seasonal == kHwMul) ? 0.0 : -inf;
    const double trend_lb = sp.trend == kHwMul ? 0.0 : -inf;
    const double season_lb = sp.seasonal == kHwMul ? 0.0 : -inf;
    double lb[kHwMaxFree], ub[kHwMaxFree], x[kHwMaxFree];
    for (int k = 0; k < pr.nfree; ++k) {
      const int i = pr.free_idx[k];
      double lo, hi;
      if (i < 3) {
        lo = 0.0;
        hi = 1.0;
      } else if (i == 3) {
        lo = lvl_lb;
        hi = inf;
      } else if (i == 4) {
        lo = trend_lb;
        hi = inf;
      } else if (i == 5) {
        lo = 0.8;
        hi = 0.995;
      } else {
        lo = season_lb;
        hi = inf;
      }
      // Strictly inside (statsmodels' _enforce_bounds).
      double v = p[i];
      if (v <= lo) v = num::add(lo, num::mul(1e-4, num::sub(num::is_inf(hi) ? 100.0 : hi, lo)));
      if (v >= hi) v = num::sub(hi, num::mul(1e-4, num::sub(hi, num::is_inf(lo) ? -100.0 : lo)));
      p[i] = v;
      lb[k] = lo;
      ub[k] = hi;
    }
    // To the unrestricted space (alpha restricted as it is now).
    const double ar = p[0];
    if (fa) p[0] = num::div(num::sub(p[0], kLowerBound), num::sub(num::sub(1.0, kLowerBound), kLowerBound));
    if (fb) p[1] = num::div(p[1], ar < 1.0 ? ar : 1.0);
    if (fg) p[2] = num::div(p[2], num::sub(1.0, ar) < 1.0 ? num::sub(1.0, ar) : 1.0);
    for (int k = 0; k < pr.nfree; ++k) x[k] = p[pr.free_idx[k]];
    tl::opt::SmallMinimizeOptions<double> mo;
    mo.max_iter = sp.max_iter;
    mo.ftol = sp.ftol;
    mo.pgtol = sp.pgtol;
    tl::opt::SmallMinimizeResult<double> r;
    if (pr.nfree <= 4)
      r = hw_minimize<4>(pr, x, lb, ub, mo);
    else if (pr.nfree <= 8)
      r = hw_minimize<8>(pr, x, lb, ub, mo);
    else if (pr.nfree <= 12)
      r = hw_minimize<12>(pr, x, lb, ub, mo);
    else if (pr.nfree <= 16)
      r = hw_minimize<16>(pr, x, lb, ub, mo);
    else if (pr.nfree <= 20)
      r = hw_minimize<20>(pr, x, lb, ub, mo);
    else if (pr.nfree <= 24)
      r = hw_minimize<24>(pr, x, lb, ub, mo);
    else
      r = hw_minimize<32>(pr, x, lb, ub, mo);
    *o.iterations = r.iterations;
    *o.converged = r.converged ? 1 : 0;
    for (int k = 0; k < pr.nfree; ++k) p[pr.free_idx[k]] = x[k];
    // Back to the restricted space.
    if (fa) p[0] = num::add(kLowerBound, num::mul(p[0], num::sub(num::sub(1.0, kLowerBound), kLowerBound)));
    if (fb) p[1] = num::add(0.0, num::mul(p[1], num::sub(p[0], 0.0)));
    if (fg) p[2] = num::add(0.0, num::mul(p[2], num::sub(num::sub(1.0, p[0]), 0.0)));
  } else {
    *o.converged = 1;
  }
  double ring[kHwMaxSeasonal];
  const double sse = hw_recursion<double>(pr.md, y, ys, n, p, ring, o.fitted + first * o.fstride, o.fstride, o.state);
  for (int i = 0; i < 6 + m; ++i) o.params[i] = p[i];
  if (!sp.trend) o.params[1] = nan;
  if (!m) o.params[2] = nan;
  if (!sp.damped) o.params[5] = nan;
  *o.sse = sse;
  if (num::is_nan(sse) || num::is_inf(sse)) status = kHwNonFinite;
  *o.status = status;
}

}  // namespace tl::tsa
