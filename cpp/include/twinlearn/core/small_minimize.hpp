// A small bounded quasi-Newton minimiser for a few parameters (n <= MaxN,
// MaxN about 32), usable on the host and inside a CUDA thread.
//
// Method: projected BFGS with an active set.
//   * x is kept inside the box [lb, ub] (either bound may be +-inf).
//   * A variable is active when it sits on a bound and the gradient pushes it
//     outwards (x_i <= lb_i with g_i > 0, or x_i >= ub_i with g_i < 0). The
//     step is d_F = -Hr g_F over the free variables F, d_i = 0 on the active
//     set A, with H the dense inverse-Hessian approximation and
//     Hr = H_FF - H_FA H_AA^-1 H_AF (Cholesky of H_AA) the inverse of the
//     reduced Hessian approximation B_FF, B = H^-1. When d is not a descent
//     direction (or H_AA is not positive definite), H is reset to the
//     identity (steepest descent on F, then BFGS again). A free variable on
//     a bound that d would push outwards is held for that step (d_i = 0, d
//     recomputed), so the projected step stays a descent direction.
//   * Projected backtracking line search: x(a) = P(x + a d), Armijo condition
//     f(x(a)) <= f(x) + c1 g.(x(a) - x), c1 = 1e-4, a halved on failure; the
//     first trial step of the first iteration (and after a reset) is scaled
//     to min(1, 1 / ||d||_inf). Non-finite trial values count as failures.
//   * H takes the BFGS inverse update with s = x_new - x, y = g_new - g when
//     s.y > 1e-10 * ||s|| ||y|| (curvature), else the update is skipped; on
//     the first accepted step H is first scaled to (s.y / y.y) I.
//   * Stops when the projected gradient's infinity norm is <= pgtol, when the
//     relative decrease (f - f_new) / max(|f|, |f_new|, 1) is <= ftol (the
//     L-BFGS-B "factr" rule), when the line search fails along steepest
//     descent (a failure along a BFGS direction first resets H), or after
//     max_iter.
//
// Every operation is a tl::num scalar operation (no FMA contraction, no
// library libm), in a fixed sequential order, so the result is a function of
// (f, x0, lb, ub, options) alone: the same bits on the CPU at any thread count
// and on the GPU, provided the caller's f is itself bit-reproducible.
//
// The caller supplies f and its gradient through a functor:
//     T operator()(const T* x, T* g)   // returns f(x), writes grad f(x) to g
// Memory: 2 MaxN * MaxN + 10 MaxN scalars on the caller's stack.
#pragma once
#include "twinlearn/core/math_bits.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::opt {

enum class SmallMinimizeStatus : int {
  kGradientTolerance = 0,  // ||projected gradient||_inf <= pgtol
  kFunctionTolerance = 1,  // relative decrease <= ftol
  kMaxIterations = 2,
  kLineSearchFailed = 3,  // no decrease along the direction: at a (numerical) minimum
  kNonFinite = 4,         // f or its gradient was not finite at the start point
};

template <class T>
struct SmallMinimizeOptions {
  int max_iter = 500;
  int max_linesearch = 40;
  T pgtol = T(1e-8);
  T ftol = T(2.220446049250313e-09);  // L-BFGS-B's default factr = 1e7 times double epsilon
};

template <class T>
struct SmallMinimizeResult {
  T f = T(0);
  int iterations = 0;
  int evaluations = 0;
  SmallMinimizeStatus status = SmallMinimizeStatus::kMaxIterations;
  // True for the two tolerance stops and for a line-search stop at a point whose
  // projected gradient is small relative to f (see small_minimize).
  bool converged = false;
};

namespace small_minimize_detail {

template <class T>
TL_HD T max_(T a, T b) {
  return a < b ? b : a;
}
template <class T>
TL_HD T clamp_(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}
template <class T>
TL_HD bool finite_(T v) {
  return !num::is_nan(v) && !num::is_inf(v);
}
// Sequential dot product in index order.
template <class T>
TL_HD T dot_(const T* a, const T* b, int n) {
  T s = T(0);
  for (int i = 0; i < n; ++i) s = num::add(s, num::mul(a[i], b[i]));
  return s;
}
// Infinity norm of the projected gradient: the step P(x - g) - x.
template <class T>
TL_HD T projected_gradient_norm(const T* x, const T* g, const T* lb, const T* ub, int n) {
  T m = T(0);
  for (int i = 0; i < n; ++i) {
    T p = num::sub(clamp_(num::sub(x[i], g[i]), lb[i], ub[i]), x[i]);
    m = max_(m, num::math_detail::fabs(p));
  }
  return m;
}
template <class T>
TL_HD void identity_(T* H, int n, int ld, T scale) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) H[i * ld + j] = i == j ? scale : T(0);
}

// d = -Hr g on the free set (0 on the active set), Hr = H_FF - H_FA H_AA^-1 H_AF:
// the inverse of the reduced Hessian approximation B_FF (B = H^-1). H_AA is
// factored by Cholesky in M (scratch, MaxN x MaxN). Returns false when H_AA is
// not positive definite.
template <int MaxN, class T>
TL_HD bool reduced_direction(const T* H, const T* g, const bool* active, int n, T* d, T* M, T* w) {
  int A[MaxN];
  int k = 0;
  for (int i = 0; i < n; ++i)
    if (active[i]) A[k++] = i;
  // w = H_AF g_F
  for (int a = 0; a < k; ++a) {
    T v = T(0);
    for (int j = 0; j < n; ++j)
      if (!active[j]) v = num::add(v, num::mul(H[A[a] * MaxN + j], g[j]));
    w[a] = v;
  }
  if (k > 0) {
    // Cholesky H_AA = L L^T (lower triangle of M), then w <- H_AA^-1 w.
    for (int a = 0; a < k; ++a)
      for (int b = 0; b <= a; ++b) {
        T v = H[A[a] * MaxN + A[b]];
        for (int c = 0; c < b; ++c) v = num::sub(v, num::mul(M[a * MaxN + c], M[b * MaxN + c]));
        if (a == b) {
          if (!(v > T(0))) return false;
          M[a * MaxN + a] = num::sqrt(v);
        } else {
          M[a * MaxN + b] = num::div(v, M[b * MaxN + b]);
        }
      }
    for (int a = 0; a < k; ++a) {
      T v = w[a];
      for (int c = 0; c < a; ++c) v = num::sub(v, num::mul(M[a * MaxN + c], w[c]));
      w[a] = num::div(v, M[a * MaxN + a]);
    }
    for (int a = k - 1; a >= 0; --a) {
      T v = w[a];
      for (int c = a + 1; c < k; ++c) v = num::sub(v, num::mul(M[c * MaxN + a], w[c]));
      w[a] = num::div(v, M[a * MaxN + a]);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (active[i]) {
      d[i] = T(0);
      continue;
    }
    T v = T(0);
    for (int j = 0; j < n; ++j)
      if (!active[j]) v = num::add(v, num::mul(H[i * MaxN + j], g[j]));
    for (int a = 0; a < k; ++a) v = num::sub(v, num::mul(H[i * MaxN + A[a]], w[a]));
    d[i] = -v;
  }
  return true;
}

}  // namespace small_minimize_detail

// Minimises f over the box [lb, ub] from x (overwritten with the minimiser).
// n must be in [1, MaxN]; lb[i] <= ub[i]. See the header comment for the method.
template <int MaxN, class T, class F>
TL_HD SmallMinimizeResult<T> small_minimize(F& fg, int n, T* x, const T* lb, const T* ub,
                                            const SmallMinimizeOptions<T>& opt = SmallMinimizeOptions<T>()) {
  using namespace small_minimize_detail;
  SmallMinimizeResult<T> res;
  T H[MaxN * MaxN];
  T M[MaxN * MaxN];
  T w[MaxN];
  T g[MaxN], d[MaxN], xn[MaxN], gn[MaxN], s[MaxN], y[MaxN], Hy[MaxN];
  bool active[MaxN];
  for (int i = 0; i < n; ++i) {
    x[i] = clamp_(x[i], lb[i], ub[i]);
    active[i] = false;
  }
  T f = fg(static_cast<const T*>(x), g);
  res.evaluations = 1;
  bool ok = finite_(f);
  for (int i = 0; i < n; ++i) ok = ok && finite_(g[i]);
  if (!ok) {
    res.f = f;
    res.status = SmallMinimizeStatus::kNonFinite;
    return res;
  }
  identity_(H, n, MaxN, T(1));
  bool fresh = true;  // H is the (unscaled) identity
  const T c1 = T(1e-4);
  for (int it = 0; it < opt.max_iter; ++it) {
    if (projected_gradient_norm(x, g, lb, ub, n) <= opt.pgtol) {
      res.status = SmallMinimizeStatus::kGradientTolerance;
      res.converged = true;
      res.f = f;
      res.iterations = it;
      return res;
    }
    for (int i = 0; i < n; ++i) active[i] = (x[i] <= lb[i] && g[i] > T(0)) || (x[i] >= ub[i] && g[i] < T(0));
    // d_F = -H_FF g_F; a free variable on a bound that d would push outwards
    // joins the active set for this step and d is recomputed.
    T dg = T(0);
    for (int pass = 0; pass < 2; ++pass) {
      for (int round = 0; round <= n; ++round) {
        if (!reduced_direction<MaxN>(H, g, active, n, d, M, w)) {
          identity_(H, n, MaxN, T(1));
          fresh = true;
          reduced_direction<MaxN>(H, g, active, n, d, M, w);
        }
        bool grew = false;
        for (int i = 0; i < n; ++i)
          if (!active[i] && ((x[i] <= lb[i] && d[i] < T(0)) || (x[i] >= ub[i] && d[i] > T(0)))) {
            active[i] = true;
            grew = true;
          }
        if (!grew) break;
      }
      dg = dot_(d, g, n);
      if (dg < T(0) || pass == 1) break;
      identity_(H, n, MaxN, T(1));  // not a descent direction: restart from steepest descent
      fresh = true;
    }
    if (!(dg < T(0))) {
      res.status = SmallMinimizeStatus::kLineSearchFailed;
      break;
    }
    T a = T(1);
    if (fresh) {
      T dn = T(0);
      for (int i = 0; i < n; ++i) dn = max_(dn, num::math_detail::fabs(d[i]));
      if (dn > T(1)) a = num::div(T(1), dn);
    }
    bool accepted = false;
    T fn = f;
    for (int ls = 0; ls < opt.max_linesearch; ++ls) {
      for (int i = 0; i < n; ++i) xn[i] = clamp_(num::add(x[i], num::mul(a, d[i])), lb[i], ub[i]);
      T decrease = T(0);
      for (int i = 0; i < n; ++i) decrease = num::add(decrease, num::mul(g[i], num::sub(xn[i], x[i])));
      fn = fg(static_cast<const T*>(xn), gn);
      ++res.evaluations;
      bool fin = finite_(fn);
      for (int i = 0; i < n; ++i) fin = fin && finite_(gn[i]);
      if (fin && fn <= num::add(f, num::mul(c1, decrease)) && decrease < T(0)) {
        accepted = true;
        break;
      }
      if (fin && !(decrease < T(0))) break;  // the projected step no longer moves: no progress possible
      a = num::mul(a, T(0.5));
    }
    res.iterations = it + 1;
    if (!accepted && !fresh) {  // retry once along steepest descent before giving up
      identity_(H, n, MaxN, T(1));
      fresh = true;
      continue;
    }
    if (!accepted) {
      res.status = SmallMinimizeStatus::kLineSearchFailed;
      break;
    }
    for (int i = 0; i < n; ++i) {
      s[i] = num::sub(xn[i], x[i]);
      y[i] = num::sub(gn[i], g[i]);
    }
    T fprev = f;
    for (int i = 0; i < n; ++i) {
      x[i] = xn[i];
      g[i] = gn[i];
    }
    f = fn;
    T sy = dot_(s, y, n);
    T ss = dot_(s, s, n);
    T yy = dot_(y, y, n);
    if (sy > T(0) && num::mul(sy, sy) > num::mul(T(1e-20), num::mul(ss, yy))) {
      if (fresh) identity_(H, n, MaxN, num::div(sy, yy));
      fresh = false;
      // H <- (I - r s y^T) H (I - r y s^T) + r s s^T, r = 1 / s.y, written as
      // H - r (Hy s^T + s Hy^T) + (r + r^2 y.Hy) s s^T.
      for (int i = 0; i < n; ++i) {
        T v = T(0);
        for (int j = 0; j < n; ++j) v = num::add(v, num::mul(H[i * MaxN + j], y[j]));
        Hy[i] = v;
      }
      T r = num::div(T(1), sy);
      T yHy = dot_(y, Hy, n);
      T c = num::add(r, num::mul(num::mul(r, r), yHy));
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          T u = num::add(num::mul(Hy[i], s[j]), num::mul(s[i], Hy[j]));
          T h = num::sub(H[i * MaxN + j], num::mul(r, u));
          H[i * MaxN + j] = num::add(h, num::mul(c, num::mul(s[i], s[j])));
        }
    }
    T scale = max_(max_(num::math_detail::fabs(fprev), num::math_detail::fabs(f)), T(1));
    if (num::sub(fprev, f) <= num::mul(opt.ftol, scale)) {
      res.status = SmallMinimizeStatus::kFunctionTolerance;
      res.converged = true;
      res.f = f;
      return res;
    }
    if (it + 1 == opt.max_iter) res.status = SmallMinimizeStatus::kMaxIterations;
  }
  if (res.status == SmallMinimizeStatus::kLineSearchFailed) {
    // A line search that cannot decrease f at a point where the projected
    // gradient is at rounding level relative to f is a converged minimum.
    T pg = projected_gradient_norm(x, g, lb, ub, n);
    T scale = max_(num::math_detail::fabs(f), T(1));
    res.converged = pg <= num::mul(T(1e-5), scale);
  }
  res.f = f;
  return res;
}

}  // namespace tl::opt
