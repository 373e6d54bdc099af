// Logistic regression math shared by the CPU and CUDA backends: the loss of
// one row, the canonical dot product and the L-BFGS / OWL-QN controller
// (order and objective: twinlearn/linear_model/logistic.hpp).
//
// The controller is written once against a small vector-operations interface
// (Ops): the CPU backend runs it with sequential loops, the CUDA backend with
// one block whose threads share the element-wise work and all execute the
// same scalar logic on the same values (dot products are broadcast through
// shared memory). Scalars and vectors therefore take the same values, bit for
// bit, on both backends.
#pragma once
#include <cstdint>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linear_model/logistic.hpp"

namespace tl::logistic_detail {

using namespace tl::num;

inline constexpr std::int64_t kDotChunk = 64;

// |x| by clearing the sign bit (exact on both backends).
TL_HD double absd(double x) { return math_detail::fabs(x); }

// Problem geometry. Parameters: rows x cols, row-major, cols = d + fi, the
// intercept (when fitted) in the last column.
struct Geometry {
  std::int64_t n = 0, d = 0, rows = 1, cols = 0, P = 0, nchunks = 0;
  bool fi = true;
  TL_HD bool penalised(std::int64_t p) const { return !(fi && p % cols == d); }
};

// Loss of one row from its scores z (rows entries) and its label; the
// residuals s * dloss/dz overwrite z. Two classes: z is one score, y in {0, 1}.
TL_HD double row_loss(double* z, std::int64_t rows, std::int32_t y, double s) {
  if (rows == 1) {
    const double v = z[0];
    // log(1 + exp(v)) without overflow, then - y v.
    const double sp = v > 0.0 ? add(v, log1p(exp(-v))) : log1p(exp(v));
    const double loss = y ? sub(sp, v) : sp;
    z[0] = mul(s, sub(sigmoid(v), y ? 1.0 : 0.0));
    return loss;
  }
  double m = z[0];
  for (std::int64_t k = 1; k < rows; ++k)
    if (z[k] > m) m = z[k];
  double sum = 0.0;
  for (std::int64_t k = 0; k < rows; ++k) sum = add(sum, exp(sub(z[k], m)));
  const double lse = add(m, log(sum));
  const double loss = sub(lse, z[y]);
  for (std::int64_t k = 0; k < rows; ++k) {
    const double p = div(exp(sub(z[k], m)), sum);
    z[k] = mul(s, k == y ? sub(p, 1.0) : p);
  }
  return loss;
}

// The optimizer's state (scalars). Lives in host memory (CPU backend) or in
// device memory (CUDA backend).
struct State {
  int done = 0;       // 1 once finished
  int status = 0;     // LogisticStatus
  int phase = 0;      // 0: the starting point is being evaluated; 1: a line-search trial
  int ls_stage = 0;   // 0: bracketing, 1: zoom (L-BFGS); unused by OWL-QN
  int nls = 0;        // evaluations in this line search
  int mem_count = 0, mem_head = 0;
  long long iter = 0, nevals = 0;
  double fk = 0, dg0 = 0, alpha = 0;
  double a_prev = 0, f_prev = 0, dg_prev = 0;
  double a_lo = 0, f_lo = 0, dg_lo = 0, a_hi = 0, f_hi = 0, dg_hi = 0;
};

// Vectors (P entries each unless said otherwise), in the memory of the backend.
struct Vectors {
  double* x;      // accepted iterate
  double* g;      // smooth gradient at x
  double* pg;     // pseudo-gradient at x (OWL-QN), else the gradient
  double* d;      // search direction
  double* xt;     // trial point: the parameters the next evaluation reads
  double* sums;   // evaluation output: gradient sums [0, P), loss sum at [P]
  double* gt;     // smooth gradient at the trial point
  double* S;      // memory x P
  double* Y;      // memory x P
  double* rho;    // memory
  double* a;      // memory
  double* scratch;  // dot-product partials, ceil(P / kDotChunk)
};

struct Params {
  double inv_s = 1.0;  // 1 / S
  double l2 = 0.0, l1 = 0.0;
  long long max_iter = 100;
  double gtol = 1e-4, gtol_converged = 1e-4, ftol = 1.4210854715202004e-14;
  int memory = 10, max_ls = 50;
};

// Cubic interpolation of the minimiser between (a, fa, da) and (b, fb, db),
// kept inside the middle 80% of the interval (bisection otherwise).
TL_HD double interpolate(double a, double fa, double da, double b, double fb, double db) {
  const double lo = a < b ? a : b, hi = a < b ? b : a;
  const double w = sub(hi, lo);
  const double mid = mul(0.5, add(a, b));
  const double d1 = sub(add(da, db), mul(3.0, div(sub(fa, fb), sub(a, b))));
  const double disc = sub(mul(d1, d1), mul(da, db));
  if (!(disc >= 0.0)) return mid;
  double d2 = sqrt(disc);
  if (b < a) d2 = -d2;
  const double den = add(sub(db, da), mul(2.0, d2));
  if (den == 0.0) return mid;
  const double t = sub(b, mul(sub(b, a), div(sub(add(db, d2), d1), den)));
  if (!(t >= add(lo, mul(0.1, w)) && t <= sub(hi, mul(0.1, w)))) return mid;
  return t;
}

// The controller: called after every evaluation (sums holds the loss and
// gradient sums at xt). It finishes the evaluation (normalisation and
// penalty), then either starts / continues a line search by writing a new
// trial point into xt, or accepts the trial, updates the memory, computes
// the next direction and starts the next line search, or stops.
//
// Ops provides, over P-vectors in the backend's memory (element-wise work is
// finished, on every thread, when a call returns):
//   dot(a, b)                 canonical dot product (chains of kDotChunk, tree)
//   dot_diff(a, b, c)         canonical aᵀ(b - c)
//   maxabs(a)                 max |a_p| (NaN propagates)
//   penalty_l2(x), penalty_l1(x)   canonical ||x||² and ||x||₁ over penalised entries
//   smooth_gradient(gt, sums, xt, inv_s, l2)   gt = sums * inv_s + l2 * xt (penalised)
//   pseudo_gradient(pg, g, x, l1), owl_trial(xt, x, alpha, d, pg),
//   owl_project_direction(d, pg)   OWL-QN's element-wise rules below
//   xpay(out, x, a, y): out = x + a y;  axpy(y, a, x): y += a x;  scale(x, a);
//   diff(out, a, b): out = a - b;  copy(out, a);  neg_copy(out, a): out = -a
template <class Ops>
TL_HD void controller_step(Ops& ops, State& st, const Vectors& v, const Geometry& geo, const Params& prm) {
  const std::int64_t P = geo.P;
  const bool owl = prm.l1 > 0.0;
  const double c1 = 1e-3, c2 = 0.9;
  ++st.nevals;

  // -- finish the evaluation: f(xt) and the smooth gradient gt ------------------
  ops.smooth_gradient(v.gt, v.sums, v.xt, prm.inv_s, prm.l2, geo);
  const double reg2 = ops.penalty_l2(v.xt, geo);  // ||xt without intercept||²
  double ft = add(mul(v.sums[P], prm.inv_s), mul(mul(0.5, prm.l2), reg2));
  if (owl) ft = add(ft, mul(prm.l1, ops.penalty_l1(v.xt, geo)));
  if (is_nan(ft) || is_inf(ft)) {
    st.done = 1;
    st.status = static_cast<int>(LogisticStatus::NonFinite);
    return;
  }

  bool accept = false;
  if (st.phase == 0 || st.phase == 2) {
    accept = true;
  } else if (owl) {
    // Backtracking along the projected path: Armijo on the pseudo-gradient.
    const double decrease = ops.dot_diff(v.pg, v.xt, v.x);  // pgᵀ (xt - x)
    if (ft <= add(st.fk, mul(c1, decrease))) {
      accept = true;
    } else if (st.nls >= prm.max_ls) {
      accept = false;
    } else {
      st.alpha = mul(0.5, st.alpha);
      ++st.nls;
      ops.owl_trial(v.xt, v.x, st.alpha, v.d, v.pg, geo);
      return;
    }
  } else {
    // Strong Wolfe line search (bracketing, then zoom), Nocedal and Wright 3.5-3.6.
    const double dg = ops.dot(v.gt, v.d);
    const double armijo = add(st.fk, mul(mul(c1, st.alpha), st.dg0));
    double next = -1.0;
    if (st.ls_stage == 0) {
      if (ft > armijo || (st.nls > 1 && ft >= st.f_prev)) {
        st.ls_stage = 1;
        st.a_lo = st.a_prev; st.f_lo = st.f_prev; st.dg_lo = st.dg_prev;
        st.a_hi = st.alpha; st.f_hi = ft; st.dg_hi = dg;
      } else if (absd(dg) <= mul(-c2, st.dg0)) {
        accept = true;
      } else if (dg >= 0.0) {
        st.ls_stage = 1;
        st.a_lo = st.alpha; st.f_lo = ft; st.dg_lo = dg;
        st.a_hi = st.a_prev; st.f_hi = st.f_prev; st.dg_hi = st.dg_prev;
      } else {
        st.a_prev = st.alpha; st.f_prev = ft; st.dg_prev = dg;
        next = mul(4.0, st.alpha);
        if (next > 1e10) next = 1e10;
      }
    } else {
      if (ft > armijo || ft >= st.f_lo) {
        st.a_hi = st.alpha; st.f_hi = ft; st.dg_hi = dg;
      } else if (absd(dg) <= mul(-c2, st.dg0)) {
        accept = true;
      } else {
        if (mul(dg, sub(st.a_hi, st.a_lo)) >= 0.0) {
          st.a_hi = st.a_lo; st.f_hi = st.f_lo; st.dg_hi = st.dg_lo;
        }
        st.a_lo = st.alpha; st.f_lo = ft; st.dg_lo = dg;
      }
    }
    if (!accept) {
      if (st.ls_stage == 1) {
        const double width = absd(sub(st.a_hi, st.a_lo));
        const double top = st.a_hi > st.a_lo ? st.a_hi : st.a_lo;
        if (width <= mul(1e-16, top)) next = -2.0;  // interval collapsed
        else next = interpolate(st.a_lo, st.f_lo, st.dg_lo, st.a_hi, st.f_hi, st.dg_hi);
      }
      if (next > 0.0 && st.nls < prm.max_ls) {
        st.alpha = next;
        ++st.nls;
        ops.xpay(v.xt, v.x, st.alpha, v.d);
        return;
      }
      // The line search failed. Accept a trial point that decreased f
      // enough (the best known), else restart from steepest descent once.
      if (st.ls_stage == 1 && st.a_lo > 0.0 && st.f_lo < st.fk) {
        st.alpha = st.a_lo;
        ops.xpay(v.xt, v.x, st.alpha, v.d);
        st.phase = 2;  // re-evaluate a_lo, then accept it unconditionally
        st.ls_stage = 0;
        return;
      }
    }
  }
  if (!accept) {
    if (st.mem_count > 0) {
      st.mem_count = 0;
      st.mem_head = 0;
      ops.neg_copy(v.d, v.pg);
      if (owl) ops.owl_project_direction(v.d, v.pg);
      st.dg0 = ops.dot(v.pg, v.d);
      st.alpha = 1.0;
      st.nls = 1;
      st.ls_stage = 0;
      st.a_prev = 0.0; st.f_prev = st.fk; st.dg_prev = st.dg0;
      if (owl) ops.owl_trial(v.xt, v.x, st.alpha, v.d, v.pg, geo);
      else ops.xpay(v.xt, v.x, st.alpha, v.d);
      return;
    }
    st.done = 1;
    st.status = static_cast<int>(LogisticStatus::LineSearchFailed);
    return;
  }

  // -- accept xt ---------------------------------------------------------------
  const double f_old = st.fk;
  if (st.phase != 0) {
    // Correction pair s = xt - x, y = gt - g, kept when sᵀy > 0.
    double* s = v.S + static_cast<std::int64_t>(st.mem_head) * P;
    double* yv = v.Y + static_cast<std::int64_t>(st.mem_head) * P;
    ops.diff(s, v.xt, v.x);
    ops.diff(yv, v.gt, v.g);
    const double sy = ops.dot(s, yv);
    const double yy = ops.dot(yv, yv);
    if (sy > mul(2.220446049250313e-16, yy)) {
      v.rho[st.mem_head] = div(1.0, sy);
      st.mem_head = (st.mem_head + 1) % prm.memory;
      if (st.mem_count < prm.memory) ++st.mem_count;
    }
    ++st.iter;
  }
  ops.copy(v.x, v.xt);
  ops.copy(v.g, v.gt);
  st.fk = ft;
  if (owl) ops.pseudo_gradient(v.pg, v.g, v.x, prm.l1, geo);
  else ops.copy(v.pg, v.g);
  const double pgmax = ops.maxabs(v.pg);
  if (st.phase != 0) {
    const double big = absd(f_old) > absd(ft) ? absd(f_old) : absd(ft);
    const double scale = big > 1.0 ? big : 1.0;
    if (sub(f_old, ft) <= mul(prm.ftol, scale)) {
      st.done = 1;
      st.status = static_cast<int>(LogisticStatus::Converged);
      return;
    }
  }
  if (pgmax <= prm.gtol) {
    st.done = 1;
    st.status = static_cast<int>(LogisticStatus::Converged);
    return;
  }
  if (st.iter >= prm.max_iter) {
    st.done = 1;
    st.status = static_cast<int>(pgmax <= prm.gtol_converged ? LogisticStatus::Converged : LogisticStatus::MaxIter);
    return;
  }

  // -- next direction: two-loop recursion on the (pseudo-)gradient --------------
  ops.neg_copy(v.d, v.pg);
  const int m = st.mem_count;
  for (int i = 0; i < m; ++i) {
    const int idx = (st.mem_head - 1 - i + 2 * prm.memory) % prm.memory;
    const double ai = mul(v.rho[idx], ops.dot(v.S + static_cast<std::int64_t>(idx) * P, v.d));
    v.a[idx] = ai;
    ops.axpy(v.d, -ai, v.Y + static_cast<std::int64_t>(idx) * P);
  }
  if (m > 0) {
    const int last = (st.mem_head - 1 + prm.memory) % prm.memory;
    const double* yl = v.Y + static_cast<std::int64_t>(last) * P;
    const double gamma = div(div(1.0, v.rho[last]), ops.dot(yl, yl));
    ops.scale(v.d, gamma);
  }
  for (int i = m - 1; i >= 0; --i) {
    const int idx = (st.mem_head - 1 - i + 2 * prm.memory) % prm.memory;
    const double b = mul(v.rho[idx], ops.dot(v.Y + static_cast<std::int64_t>(idx) * P, v.d));
    ops.axpy(v.d, sub(v.a[idx], b), v.S + static_cast<std::int64_t>(idx) * P);
  }
  if (owl) ops.owl_project_direction(v.d, v.pg);
  st.dg0 = ops.dot(v.pg, v.d);
  if (!(st.dg0 < 0.0)) {  // not a descent direction: steepest descent
    st.mem_count = 0;
    st.mem_head = 0;
    ops.neg_copy(v.d, v.pg);
    if (owl) ops.owl_project_direction(v.d, v.pg);
    st.dg0 = ops.dot(v.pg, v.d);
  }
  // As L-BFGS-B: the first step has length one, later steps start at alpha = 1.
  st.alpha = 1.0;
  if (st.iter == 0) {
    const double dn = sqrt(ops.dot(v.d, v.d));
    if (dn > 0.0) st.alpha = div(1.0, dn);
  }
  st.phase = 1;
  st.nls = 1;
  st.ls_stage = 0;
  st.a_prev = 0.0;
  st.f_prev = st.fk;
  st.dg_prev = st.dg0;
  if (owl) ops.owl_trial(v.xt, v.x, st.alpha, v.d, v.pg, geo);
  else ops.xpay(v.xt, v.x, st.alpha, v.d);
}

// Element-wise formulas shared by both Ops implementations.
TL_HD double smooth_gradient_entry(double sum, double x, double inv_s, double l2, bool pen) {
  return pen ? add(mul(sum, inv_s), mul(l2, x)) : mul(sum, inv_s);
}
TL_HD double xpay_entry(double x, double a, double y) { return fma(a, y, x); }
TL_HD double project_direction_entry(double d, double pg) { return mul(d, pg) < 0.0 ? d : 0.0; }

// Element-wise rules of OWL-QN.
TL_HD double pseudo_gradient_entry(double g, double x, double l1, bool pen) {
  if (!pen) return g;
  if (x > 0.0) return add(g, l1);
  if (x < 0.0) return sub(g, l1);
  const double up = add(g, l1), dn = sub(g, l1);
  if (up < 0.0) return up;
  if (dn > 0.0) return dn;
  return 0.0;
}
// The trial entry x + alpha d, projected on the orthant of x (or of -pg
// where x is zero): entries that would change sign become zero.
TL_HD double owl_trial_entry(double x, double alpha, double d, double pg, bool pen) {
  const double t = add(x, mul(alpha, d));
  if (!pen) return t;
  const double orth = x != 0.0 ? x : -pg;
  if ((orth > 0.0 && t < 0.0) || (orth < 0.0 && t > 0.0) || orth == 0.0) return 0.0;
  return t;
}

}  // namespace tl::logistic_detail
