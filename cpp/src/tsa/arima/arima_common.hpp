// ARIMA's per-series arithmetic, shared by both backends: everything one
// series needs, as host/device functions of that series' values alone.
// Every floating-point operation is a tl::num scalar operation in a fixed
// sequential order, and log is the project's (core/math.hpp), so a series'
// results are the same bits on the CPU (any thread count) and on the GPU.
#pragma once
#include <cstdint>
#include <limits>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/small_minimize.hpp"
#include "twinlearn/tsa/arima.hpp"

namespace tl::arima_detail {

inline constexpr int kMaxR = 16;     // Harvey state dimension max(p + s P, q + s Q + 1)
inline constexpr int kMaxDiff = 16;  // d + s D
inline constexpr int kMaxOpt = 24;   // trend + p + q + P + Q
inline constexpr int kMaxAug = kMaxR + kMaxDiff;
inline constexpr int kInfo = 6;  // llf, n_eff, first, length, iterations, evaluations
inline constexpr double kLog2Pi = 1.8378770664093454836;
// The predicted state covariance is frozen (steady state) once no entry moves
// by more than this between two steps (the covariance is scale free: sigma2
// is concentrated out, so this is relative to the innovation variance).
inline constexpr double kSteadyTol = 1e-15;

// The sizes of a model, derived from its spec.
struct Model {
  int p, q, P, Q, s;
  int kx;  // trend columns (constant first, then time)
  bool tc, tt;
  int nopt;                    // mean parameters: kx + p + q + P + Q
  int par;                     // p + s P, the full AR polynomial's degree
  int nma;                     // q + s Q
  int r;                       // state dimension
  int nd;                      // d + s D
  double delta[kMaxDiff + 1];  // (1 - L)^d (1 - L^s)^D = sum_k delta_k L^k (integers)
};

TL_HD Model make_model(const ArimaSpec& sp) {
  Model m;
  m.p = static_cast<int>(sp.p);
  m.q = static_cast<int>(sp.q);
  m.P = static_cast<int>(sp.P);
  m.Q = static_cast<int>(sp.Q);
  m.s = static_cast<int>(sp.s);
  m.tc = sp.trend_c;
  m.tt = sp.trend_t;
  m.kx = (sp.trend_c ? 1 : 0) + (sp.trend_t ? 1 : 0);
  m.nopt = m.kx + m.p + m.q + m.P + m.Q;
  m.par = m.p + m.s * m.P;
  m.nma = m.q + m.s * m.Q;
  m.r = m.par > m.nma + 1 ? m.par : m.nma + 1;
  m.nd = static_cast<int>(sp.d + sp.s * sp.D);
  for (int k = 0; k <= kMaxDiff; ++k) m.delta[k] = k == 0 ? 1.0 : 0.0;
  int deg = 0;
  // multiply by (1 - L^lag), integers: exact
  auto times = [&](int lag) {
    for (int k = deg + lag; k >= lag; --k) m.delta[k] = m.delta[k] - m.delta[k - lag];
    deg += lag;
  };
  for (int i = 0; i < sp.d; ++i) times(1);
  for (int i = 0; i < sp.D; ++i) times(m.s);
  return m;
}

// One series: n values y[0], y[stride], ... (NaN padding already removed).
struct Series {
  const double* y;
  std::int64_t stride;
  std::int64_t n;
  TL_HD double at(std::int64_t t) const { return y[t * stride]; }
};

// Constrained parameters of the mean: beta, and the full AR and MA
// polynomials in Harvey's form (a[k], k = 1..par; b[k], k = 1..nma).
struct Coefs {
  double beta[2];
  double a[kMaxR + 1];
  double b[kMaxR + 1];
};

// statsmodels' stationarity transform (Monahan 1984; Jones 1980): partial
// autocorrelations u_k / sqrt(1 + u_k^2), then the Durbin-Levinson recursion.
// AR coefficients are -y, MA coefficients +y (sign = -1 or +1).
TL_HD void constrain_stationary(const double* u, int n, double sign, double* out) {
  using namespace tl::num;
  double prev[kMaxR], cur[kMaxR];
  for (int k = 0; k < n; ++k) {
    const double rk = div(u[k], sqrt(add(1.0, mul(u[k], u[k]))));
    for (int i = 0; i < k; ++i) cur[i] = add(prev[i], mul(rk, prev[k - i - 1]));
    cur[k] = rk;
    for (int i = 0; i <= k; ++i) prev[i] = cur[i];
  }
  for (int k = 0; k < n; ++k) out[k] = sign < 0 ? -prev[k] : prev[k];
}

// x (nopt unconstrained values) -> the model's parameters in statsmodels'
// order (trend, ar, ma, seasonal ar, seasonal ma) written to theta.
TL_HD void constrain(const Model& m, const double* x, double* theta) {
  int o = 0;
  for (int i = 0; i < m.kx; ++i, ++o) theta[o] = x[o];
  constrain_stationary(x + o, m.p, -1.0, theta + o);
  o += m.p;
  constrain_stationary(x + o, m.q, 1.0, theta + o);
  o += m.q;
  constrain_stationary(x + o, m.P, -1.0, theta + o);
  o += m.P;
  constrain_stationary(x + o, m.Q, 1.0, theta + o);
}

// The full polynomials from the parameters (theta in statsmodels' order):
// (1 - sum phi_i L^i)(1 - sum Phi_j L^{s j}) = 1 - sum a_k L^k and
// (1 + sum theta_i L^i)(1 + sum Theta_j L^{s j}) = 1 + sum b_k L^k.
TL_HD void coefs_from_params(const Model& m, const double* theta, Coefs& c) {
  using namespace tl::num;
  c.beta[0] = c.beta[1] = 0.0;
  for (int i = 0; i < m.kx; ++i) c.beta[i] = theta[i];
  const double* phi = theta + m.kx;
  const double* th = phi + m.p;
  const double* sphi = th + m.q;
  const double* sth = sphi + m.P;
  for (int k = 0; k <= kMaxR; ++k) c.a[k] = c.b[k] = 0.0;
  // a: the coefficients of -(1 - phi(L))(1 - Phi(L^s)) beyond lag 0
  for (int i = 0; i <= m.p; ++i) {
    const double ci = i == 0 ? 1.0 : -phi[i - 1];
    for (int j = 0; j <= m.P; ++j) {
      const double cj = j == 0 ? 1.0 : -sphi[j - 1];
      const int k = i + m.s * j;
      if (k > 0) c.a[k] = sub(c.a[k], mul(ci, cj));
    }
  }
  for (int i = 0; i <= m.q; ++i) {
    const double ci = i == 0 ? 1.0 : th[i - 1];
    for (int j = 0; j <= m.Q; ++j) {
      const double cj = j == 0 ? 1.0 : sth[j - 1];
      const int k = i + m.s * j;
      if (k > 0) c.b[k] = add(c.b[k], mul(ci, cj));
    }
  }
}

// z_t = y_t - x_t' beta, x_t = (1, t + 1) as the trend asks.
TL_HD double z_at(const Model& m, const Series& S, const Coefs& c, std::int64_t t) {
  using namespace tl::num;
  double mean = 0.0;
  int o = 0;
  if (m.tc) mean = c.beta[o++];
  if (m.tt) mean = add(mean, mul(c.beta[o], static_cast<double>(t + 1)));
  return sub(S.at(t), mean);
}

// w_t = sum_k delta_k z_{t + nd - k}, t = 0..n - nd - 1 (the differenced series).
TL_HD double w_at(const Model& m, const Series& S, const Coefs& c, std::int64_t t) {
  using namespace tl::num;
  const std::int64_t tau = t + m.nd;
  double w = z_at(m, S, c, tau);
  for (int k = 1; k <= m.nd; ++k)
    if (m.delta[k] != 0.0) w = add(w, mul(m.delta[k], z_at(m, S, c, tau - k)));
  return w;
}

// The conditional sum of squares of the ARMA recursion on w, residuals
// before the first par values taken as 0: returns the sum over
// t = par..nw - 1 and the count.
TL_HD double css(const Model& m, const Series& S, const Coefs& c, std::int64_t& count) {
  using namespace tl::num;
  const std::int64_t nw = S.n - m.nd;
  double wl[kMaxR + 1], el[kMaxR + 1];  // wl[k] = w_{t-k}, el[k] = e_{t-k}
  for (int k = 0; k <= kMaxR; ++k) wl[k] = el[k] = 0.0;
  double ssq = 0.0;
  count = 0;
  for (std::int64_t t = 0; t < nw; ++t) {
    for (int k = kMaxR; k >= 1; --k) wl[k] = wl[k - 1];
    wl[0] = w_at(m, S, c, t);
    for (int k = kMaxR; k >= 1; --k) el[k] = el[k - 1];
    el[0] = 0.0;
    if (t < m.par) continue;
    double e = wl[0];
    for (int k = 1; k <= m.par; ++k) e = sub(e, mul(c.a[k], wl[k]));
    for (int k = 1; k <= m.nma; ++k) e = sub(e, mul(c.b[k], el[k]));
    el[0] = e;
    ssq = add(ssq, mul(e, e));
    ++count;
  }
  return ssq;
}

// State of the Kalman filter: the predicted state and its covariance (in
// units of sigma2), row-major r x r.
struct KalmanState {
  double a[kMaxR];
  double P[kMaxR * kMaxR];
};

// Stationary initial covariance: P = T P T' + R R', by the doubling
// iteration P <- P + A P A', A <- A A (from P = R R', A = T).
TL_HD void stationary_cov(const Model& m, const Coefs& c, double* P) {
  using namespace tl::num;
  const int r = m.r;
  double A[kMaxR * kMaxR], M[kMaxR * kMaxR], N[kMaxR * kMaxR];
  double R[kMaxR];
  for (int i = 0; i < r; ++i) R[i] = i == 0 ? 1.0 : c.b[i];
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) {
      P[i * r + j] = mul(R[i], R[j]);
      A[i * r + j] = (j == 0 ? c.a[i + 1] : 0.0);
      if (j == i + 1) A[i * r + j] = 1.0;
    }
  for (int it = 0; it < 64; ++it) {
    // M = A P; N = M A'
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < r; ++j) {
        double v = 0.0;
        for (int k = 0; k < r; ++k) v = add(v, mul(A[i * r + k], P[k * r + j]));
        M[i * r + j] = v;
      }
    double big = 0.0, pmax = 0.0;
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < r; ++j) {
        double v = 0.0;
        for (int k = 0; k < r; ++k) v = add(v, mul(M[i * r + k], A[j * r + k]));
        N[i * r + j] = v;
      }
    for (int i = 0; i < r * r; ++i) {
      P[i] = add(P[i], N[i]);
      const double an = N[i] < 0 ? -N[i] : N[i];
      const double ap = P[i] < 0 ? -P[i] : P[i];
      big = an > big ? an : big;
      pmax = ap > pmax ? ap : pmax;
    }
    if (!(big > mul(1e-18, pmax))) break;  // converged (or NaN)
    // A <- A A
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < r; ++j) {
        double v = 0.0;
        for (int k = 0; k < r; ++k) v = add(v, mul(A[i * r + k], A[k * r + j]));
        M[i * r + j] = v;
      }
    for (int i = 0; i < r * r; ++i) A[i] = M[i];
  }
}

// The Kalman filter over w. Returns false when a prediction variance is not
// positive or not finite. sumlogF = sum log F_t, ssq = sum v_t^2 / F_t (F in
// units of sigma2). resid (nullable): v_t written to resid[(t + nd) *
// rstride]. st (nullable): the state predicted for time nw.
TL_HD bool kalman(const Model& m, const Series& S, const Coefs& c, double& sumlogF, double& ssq, double* resid,
                  std::int64_t rstride, KalmanState* st) {
  using namespace tl::num;
  const int r = m.r;
  const std::int64_t nw = S.n - m.nd;
  double a[kMaxR], P[kMaxR * kMaxR], M[kMaxR * kMaxR], K[kMaxR];
  double R[kMaxR], phi[kMaxR];
  for (int i = 0; i < r; ++i) {
    R[i] = i == 0 ? 1.0 : c.b[i];
    phi[i] = c.a[i + 1];
    a[i] = 0.0;
  }
  stationary_cov(m, c, P);
  sumlogF = 0.0;
  ssq = 0.0;
  bool steady = false;
  double F = 0.0, logF = 0.0;
  for (std::int64_t t = 0; t < nw; ++t) {
    const double v = sub(w_at(m, S, c, t), a[0]);
    if (!steady) {
      F = P[0];
      if (!(F > 0.0) || is_inf(F)) return false;
      logF = tl::num::log(F);
      for (int i = 0; i < r; ++i) K[i] = div(P[i * r], F);
    }
    sumlogF = add(sumlogF, logF);
    ssq = add(ssq, div(mul(v, v), F));
    if (resid) resid[(t + m.nd) * rstride] = v;
    // a <- T (a + K v)
    for (int i = 0; i < r; ++i) a[i] = add(a[i], mul(K[i], v));
    const double a0 = a[0];
    for (int i = 0; i < r; ++i) a[i] = add(mul(phi[i], a0), i + 1 < r ? a[i + 1] : 0.0);
    if (steady) continue;
    // P <- T (P - K P[0, :]) T' + R R'
    double P0[kMaxR];  // row 0 before the update
    for (int j = 0; j < r; ++j) P0[j] = P[j];
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < r; ++j) P[i * r + j] = sub(P[i * r + j], mul(K[i], P0[j]));
    for (int i = 0; i < r; ++i)  // M = T P
      for (int j = 0; j < r; ++j) M[i * r + j] = add(mul(phi[i], P[j]), i + 1 < r ? P[(i + 1) * r + j] : 0.0);
    double moved = 0.0;
    for (int i = 0; i < r; ++i)  // P' = M T' + R R'
      for (int j = 0; j < r; ++j) {
        const double v2 = add(add(mul(M[i * r], phi[j]), j + 1 < r ? M[i * r + j + 1] : 0.0), mul(R[i], R[j]));
        P[i * r + j] = v2;
      }
    // Compare the new prediction variance row with the last one used.
    for (int i = 0; i < r; ++i) {
      const double dk = sub(div(P[i * r], P[0]), K[i]);
      const double ad = dk < 0 ? -dk : dk;
      moved = ad > moved ? ad : moved;
    }
    const double dF = sub(P[0], F);
    const double adF = dF < 0 ? -dF : dF;
    moved = adF > moved ? adF : moved;
    if (!(moved > kSteadyTol)) steady = true;
  }
  if (st) {
    for (int i = 0; i < r; ++i) st->a[i] = a[i];
    for (int i = 0; i < r * r; ++i) st->P[i] = P[i];
  }
  return true;
}

// Concentrated exact log-likelihood pieces at constrained theta.
struct Exact {
  bool ok;
  double llf, sigma2;
};

TL_HD Exact exact_llf(const Model& m, const Series& S, const double* theta, double* resid, std::int64_t rstride,
                      KalmanState* st) {
  using namespace tl::num;
  Coefs c;
  coefs_from_params(m, theta, c);
  double slf = 0.0, ssq = 0.0;
  Exact e;
  e.ok = kalman(m, S, c, slf, ssq, resid, rstride, st);
  const double nw = static_cast<double>(S.n - m.nd);
  e.sigma2 = div(ssq, nw);
  // llf = -nw/2 (log 2 pi + log sigma2 + 1) - sum log F / 2
  e.llf = sub(mul(mul(-0.5, nw), add(add(kLog2Pi, tl::num::log(e.sigma2)), 1.0)), mul(0.5, slf));
  if (!e.ok || is_nan(e.llf) || is_inf(e.llf) || !(e.sigma2 > 0.0)) e.ok = false;
  return e;
}

// Log-likelihood at full params (theta then sigma2): not concentrated.
TL_HD double llf_at(const Model& m, const Series& S, const double* params, double* resid, std::int64_t rstride,
                    KalmanState* st) {
  using namespace tl::num;
  Coefs c;
  coefs_from_params(m, params, c);
  double slf = 0.0, ssq = 0.0;
  if (!kalman(m, S, c, slf, ssq, resid, rstride, st)) return quiet_nan(0.0);
  const double s2 = params[m.nopt];
  const double nw = static_cast<double>(S.n - m.nd);
  // -1/2 (nw (log 2 pi + log s2) + sum log F + ssq / s2)
  const double t = add(add(mul(nw, add(kLog2Pi, tl::num::log(s2))), slf), div(ssq, s2));
  return mul(-0.5, t);
}

// The objectives minimised over the unconstrained x (mean parameters):
// CSS: log(css / count) / 2; exact: -llf / nw (sigma2 concentrated out).
// Gradient: central differences, step h_i = 6.0555e-6 max(1, |x_i|)
// (about eps^(1/3)), divided by the exact step (x + h) - (x - h).
struct Objective {
  const Model* m;
  const Series* S;
  bool exact;
  int evals = 0;

  TL_HD double value(const double* x) {
    using namespace tl::num;
    ++evals;
    double theta[kMaxOpt];
    constrain(*m, x, theta);
    if (exact) {
      Exact e = exact_llf(*m, *S, theta, nullptr, 0, nullptr);
      if (!e.ok) return quiet_nan(0.0);
      return div(-e.llf, static_cast<double>(S->n - m->nd));
    }
    Coefs c;
    coefs_from_params(*m, theta, c);
    std::int64_t count = 0;
    const double ssq = css(*m, *S, c, count);
    if (count <= 0 || !(ssq > 0.0)) return quiet_nan(0.0);
    return mul(0.5, tl::num::log(div(ssq, static_cast<double>(count))));
  }

  TL_HD double operator()(const double* x, double* g) {
    using namespace tl::num;
    const int n = m->nopt;
    double xt[kMaxOpt];
    for (int i = 0; i < n; ++i) xt[i] = x[i];
    const double f = value(x);
    for (int i = 0; i < n; ++i) {
      const double ax = x[i] < 0 ? -x[i] : x[i];
      const double h = mul(6.0555e-6, ax > 1.0 ? ax : 1.0);
      xt[i] = add(x[i], h);
      const double xp = xt[i];
      const double fp = value(xt);
      xt[i] = sub(x[i], h);
      const double xm = xt[i];
      const double fm = value(xt);
      xt[i] = x[i];
      g[i] = div(sub(fp, fm), sub(xp, xm));
    }
    return f;
  }
};

// Finds a series' values in a padded row: first/last finite index; returns
// a status (kArimaOk, kArimaAllNan, kArimaGap, kArimaNonFinite, kArimaTooShort).
TL_HD std::int32_t locate(const Model& m, const double* row, std::int64_t len, std::int64_t stride, std::int64_t& first,
                          std::int64_t& n) {
  using namespace tl::num;
  std::int64_t lo = -1, hi = -1;
  for (std::int64_t t = 0; t < len; ++t) {
    const double v = row[t * stride];
    if (is_inf(v)) return kArimaNonFinite;
    if (!is_nan(v)) {
      if (lo < 0) lo = t;
      hi = t;
    }
  }
  first = lo < 0 ? 0 : lo;
  n = lo < 0 ? 0 : hi - lo + 1;
  if (lo < 0) return kArimaAllNan;
  for (std::int64_t t = lo; t <= hi; ++t)
    if (is_nan(row[t * stride])) return kArimaGap;
  if (n - m.nd < m.nopt + 2 || n - m.nd < m.par + 1) return kArimaTooShort;
  return kArimaOk;
}

// Fits one series (row of length len, stride between values). params:
// nopt + 1 outputs, info: kInfo outputs. Returns the status.
TL_HD std::int32_t fit_one(const ArimaSpec& sp, const double* row, std::int64_t len, std::int64_t stride,
                           double* params, double* info) {
  using namespace tl::num;
  const Model m = make_model(sp);
  std::int64_t first = 0, n = 0;
  std::int32_t status = locate(m, row, len, stride, first, n);
  for (int i = 0; i <= m.nopt; ++i) params[i] = quiet_nan(0.0);
  info[0] = quiet_nan(0.0);
  info[1] = static_cast<double>(n > m.nd ? n - m.nd : 0);
  info[2] = static_cast<double>(first);
  info[3] = static_cast<double>(n);
  info[4] = info[5] = 0.0;
  if (status != kArimaOk) return status;
  Series S{row + first * stride, stride, n};
  double x[kMaxOpt], lb[kMaxOpt], ub[kMaxOpt];
  for (int i = 0; i < m.nopt; ++i) {
    x[i] = 0.0;
    lb[i] = -std::numeric_limits<double>::infinity();
    ub[i] = std::numeric_limits<double>::infinity();
  }
  // Trend start: least squares of the differenced series on the differenced
  // trend columns (at most two: the normal equations solved directly).
  if (m.kx > 0) {
    Coefs c0;
    for (int k = 0; k <= kMaxR; ++k) c0.a[k] = c0.b[k] = 0.0;
    c0.beta[0] = c0.beta[1] = 0.0;
    double sxx[2][2] = {{0.0, 0.0}, {0.0, 0.0}}, sxy[2] = {0.0, 0.0};
    const std::int64_t nw = n - m.nd;
    for (std::int64_t t = 0; t < nw; ++t) {
      const double wy = w_at(m, S, c0, t);
      double xw[2];
      for (int j = 0; j < m.kx; ++j) {  // the differenced column j: w of -x_j with beta = e_j, y = 0
        Coefs cj = c0;
        cj.beta[j] = 1.0;
        xw[j] = sub(w_at(m, S, cj, t), wy);
        xw[j] = -xw[j];
      }
      for (int i = 0; i < m.kx; ++i) {
        sxy[i] = add(sxy[i], mul(xw[i], wy));
        for (int j = 0; j < m.kx; ++j) sxx[i][j] = add(sxx[i][j], mul(xw[i], xw[j]));
      }
    }
    if (m.kx == 1) {
      if (sxx[0][0] > 0.0) x[0] = div(sxy[0], sxx[0][0]);
    } else {
      const double det = sub(mul(sxx[0][0], sxx[1][1]), mul(sxx[0][1], sxx[1][0]));
      if (det > 0.0) {
        x[0] = div(sub(mul(sxx[1][1], sxy[0]), mul(sxx[0][1], sxy[1])), det);
        x[1] = div(sub(mul(sxx[0][0], sxy[1]), mul(sxx[1][0], sxy[0])), det);
      }
    }
  }
  opt::SmallMinimizeOptions<double> o;
  o.max_iter = static_cast<int>(sp.max_iter);
  o.pgtol = sp.pgtol;
  o.ftol = sp.ftol;
  int iters = 0, evals = 0;
  if (sp.css_start && m.nopt > m.kx) {
    double xc[kMaxOpt];
    for (int i = 0; i < m.nopt; ++i) xc[i] = x[i];
    Objective fc{&m, &S, false};
    auto rc = opt::small_minimize<kMaxOpt>(fc, m.nopt, xc, lb, ub, o);
    evals += fc.evals;
    iters += rc.iterations;
    bool fin = !is_nan(rc.f) && !is_inf(rc.f);
    for (int i = 0; i < m.nopt; ++i) fin = fin && !is_nan(xc[i]) && !is_inf(xc[i]);
    if (fin)
      for (int i = 0; i < m.nopt; ++i) x[i] = xc[i];
  }
  Objective fe{&m, &S, true};
  auto re = opt::small_minimize<kMaxOpt>(fe, m.nopt, x, lb, ub, o);
  evals += fe.evals;
  iters += re.iterations;
  double theta[kMaxOpt + 1];
  constrain(m, x, theta);
  Exact e = exact_llf(m, S, theta, nullptr, 0, nullptr);
  info[4] = static_cast<double>(iters);
  info[5] = static_cast<double>(evals);
  if (!e.ok) return kArimaNotConverged;
  for (int i = 0; i < m.nopt; ++i) params[i] = theta[i];
  params[m.nopt] = e.sigma2;
  info[0] = e.llf;
  return re.converged ? kArimaOk : kArimaNotConverged;
}

// At given params: llf, residuals (NaN outside the series' values; NaN for
// the first nd values, which the differencing consumes), forecasts.
TL_HD void filter_one(const ArimaSpec& sp, const double* row, std::int64_t len, std::int64_t stride,
                      const double* params, std::int64_t h, double* llf, double* resid, double* fmean, double* fvar) {
  using namespace tl::num;
  const Model m = make_model(sp);
  const double nan = quiet_nan(0.0);
  for (std::int64_t t = 0; t < len; ++t) resid[t] = nan;
  for (std::int64_t j = 0; j < h; ++j) fmean[j] = fvar[j] = nan;
  *llf = nan;
  std::int64_t first = 0, n = 0;
  if (locate(m, row, len, stride, first, n) != kArimaOk) return;
  bool ok = true;
  for (int i = 0; i <= m.nopt; ++i) ok = ok && !is_nan(params[i]);
  if (!ok || !(params[m.nopt] > 0.0)) return;
  Series S{row + first * stride, stride, n};
  KalmanState st;
  *llf = llf_at(m, S, params, resid + first, 1, &st);
  if (is_nan(*llf) || h <= 0) return;
  // Forecasts: the augmented state (alpha, z_{n-1}, ..., z_{n-nd}); z = H S
  // with H = (e_1, -delta_1, ..., -delta_nd); S' = A S + (R e, 0).
  Coefs c;
  coefs_from_params(m, params, c);
  const int r = m.r, nd = m.nd, na = r + nd;
  double A[kMaxAug * kMaxAug], C[kMaxAug * kMaxAug], M[kMaxAug * kMaxAug], s[kMaxAug], s2[kMaxAug], Hr[kMaxAug];
  double R[kMaxR];
  for (int i = 0; i < r; ++i) R[i] = i == 0 ? 1.0 : c.b[i];
  for (int i = 0; i < na * na; ++i) A[i] = C[i] = 0.0;
  for (int i = 0; i < na; ++i) Hr[i] = i == 0 ? 1.0 : (i < r ? 0.0 : -m.delta[i - r + 1]);
  for (int i = 0; i < r; ++i) {
    A[i * na] = c.a[i + 1];
    if (i + 1 < r) A[i * na + i + 1] = 1.0;
  }
  if (nd > 0) {
    for (int j = 0; j < na; ++j) A[r * na + j] = Hr[j];
    for (int i = r + 1; i < na; ++i) A[i * na + i - 1] = 1.0;
  }
  for (int i = 0; i < r; ++i) {
    s[i] = st.a[i];
    for (int j = 0; j < r; ++j) C[i * na + j] = st.P[i * r + j];
  }
  for (int k = 1; k <= nd; ++k) s[r + k - 1] = z_at(m, S, c, n - k);
  const double sigma2 = params[m.nopt];
  for (std::int64_t j = 0; j < h; ++j) {
    double zm = 0.0;
    for (int i = 0; i < na; ++i) zm = add(zm, mul(Hr[i], s[i]));
    double v = 0.0;
    for (int i = 0; i < na; ++i) {
      double ci = 0.0;
      for (int k = 0; k < na; ++k) ci = add(ci, mul(C[i * na + k], Hr[k]));
      v = add(v, mul(Hr[i], ci));
    }
    // y = z + x' beta at time n + j
    double mean = 0.0;
    int o = 0;
    if (m.tc) mean = c.beta[o++];
    if (m.tt) mean = add(mean, mul(c.beta[o], static_cast<double>(n + j + 1)));
    fmean[j] = add(zm, mean);
    fvar[j] = mul(v, sigma2);
    // advance: s <- A s; C <- A C A' + (R R', 0)
    for (int i = 0; i < na; ++i) {
      double t2 = 0.0;
      for (int k = 0; k < na; ++k) t2 = add(t2, mul(A[i * na + k], s[k]));
      s2[i] = t2;
    }
    for (int i = 0; i < na; ++i) s[i] = s2[i];
    for (int i = 0; i < na; ++i)
      for (int k = 0; k < na; ++k) {
        double t2 = 0.0;
        for (int l = 0; l < na; ++l) t2 = add(t2, mul(A[i * na + l], C[l * na + k]));
        M[i * na + k] = t2;
      }
    for (int i = 0; i < na; ++i)
      for (int k = 0; k < na; ++k) {
        double t2 = 0.0;
        for (int l = 0; l < na; ++l) t2 = add(t2, mul(M[i * na + l], A[k * na + l]));
        C[i * na + k] = i < r && k < r ? add(t2, mul(R[i], R[k])) : t2;
      }
  }
}

// Backend entry points (arima.cpp validates and dispatches). Y: n_series x
// len; outputs host memory as arima.hpp states.
void fit_cpu(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, double* params, double* info,
             std::int32_t* status);
void filter_cpu(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, const double* params,
                std::int64_t h, double* llf, double* resid, double* fmean, double* fvar);
void fit_cuda(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, double* params, double* info,
              std::int32_t* status);
void filter_cuda(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, const double* params,
                 std::int64_t h, double* llf, double* resid, double* fmean, double* fvar);

}  // namespace tl::arima_detail
