// Losses shared by the CPU and CUDA backends of the gradient-boosted trees
// (gbdt_common.hpp): per-row gradients, hessians and loss values, and the
// prediction link.
#pragma once
#include <cstdint>

#include "ensemble/gbdt/gbdt_math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

namespace tl::gbdt {

// ---------------------------------------------------------------------------
// Losses: per-row gradients, hessians and loss values.
// ---------------------------------------------------------------------------
TL_HD bool is_multiclass(GbdtLoss l) { return l == GbdtLoss::MultiClass || l == GbdtLoss::MultiClassOneVsAll; }

// Gradients of row i with raw prediction f[0..D), label y, weight w, and the
// loss parameter `param` (Tweedie variance power rho, Huber delta).
// Logloss, CrossEntropy: p = sigmoid(f), g = w (p - y), h = w p (1 - p).
// RMSE:    g = w (f - y), h = w.
// MultiClass: p = softmax(f) (max-shifted, denominator summed in class order),
//          g_k = w (p_k - [y == k]), h_k = w p_k (1 - p_k).
// MultiClassOneVsAll: p_k = sigmoid(f_k), g_k, h_k as above.
// Poisson: g = w (exp(f) - y), h = w exp(f).
// Tweedie: a = exp((1 - rho) f), b = exp((2 - rho) f),
//          g = w (b - y a), h = w ((2 - rho) b - (1 - rho) y a).
// Huber:   r = f - y, g = w clamp(r, -delta, delta), h = w [|r| <= delta].
// Quantile (alpha = param) and MAE (alpha = 1/2): the pinball loss's
//          derivative in f, as CatBoost spells it: g = -w alpha when y > f,
//          else w (1 - alpha); no hessian exists, so h = w (gradient steps).
TL_HD void row_gradients(GbdtLoss loss, int D, const double* f, double y, double w, double param, double* g,
                         double* h) {
  switch (loss) {
    case GbdtLoss::RMSE:
      g[0] = num::mul(w, num::sub(f[0], y));
      h[0] = w;
      return;
    case GbdtLoss::Logloss:
    case GbdtLoss::CrossEntropy: {
      const double p = sigmoid(f[0]);
      g[0] = num::mul(w, num::sub(p, y));
      h[0] = num::mul(w, num::mul(p, num::sub(1.0, p)));
      return;
    }
    case GbdtLoss::MultiClassOneVsAll: {
      const int yk = static_cast<int>(y);
      for (int k = 0; k < D; ++k) {
        const double p = sigmoid(f[k]);
        g[k] = num::mul(w, num::sub(p, k == yk ? 1.0 : 0.0));
        h[k] = num::mul(w, num::mul(p, num::sub(1.0, p)));
      }
      return;
    }
    case GbdtLoss::Poisson: {
      const double e = gbdt::exp(f[0]);
      g[0] = num::mul(w, num::sub(e, y));
      h[0] = num::mul(w, e);
      return;
    }
    case GbdtLoss::Tweedie: {
      const double a = gbdt::exp(num::mul(num::sub(1.0, param), f[0]));
      const double b = gbdt::exp(num::mul(num::sub(2.0, param), f[0]));
      const double ya = num::mul(y, a);
      g[0] = num::mul(w, num::sub(b, ya));
      h[0] = num::mul(w, num::sub(num::mul(num::sub(2.0, param), b), num::mul(num::sub(1.0, param), ya)));
      return;
    }
    case GbdtLoss::Huber: {
      const double r = num::sub(f[0], y);
      const double c = r > param ? param : (r < -param ? -param : r);
      g[0] = num::mul(w, c);
      h[0] = (r <= param && r >= -param) ? w : 0.0;
      return;
    }
    case GbdtLoss::MAE:
    case GbdtLoss::Quantile: {
      const double a = loss == GbdtLoss::MAE ? 0.5 : param;
      g[0] = y > f[0] ? num::mul(w, -a) : num::mul(w, num::sub(1.0, a));
      h[0] = w;
      return;
    }
    case GbdtLoss::MultiClass: {
      double mx = f[0];
      for (int k = 1; k < D; ++k) mx = f[k] > mx ? f[k] : mx;
      double s = 0.0;
      for (int k = 0; k < D; ++k) {
        const double e = gbdt::exp(num::sub(f[k], mx));
        g[k] = e;  // stash exp, overwritten below
        s = num::add(s, e);
      }
      const int yk = static_cast<int>(y);
      for (int k = 0; k < D; ++k) {
        const double p = num::div(g[k], s);
        g[k] = num::mul(w, num::sub(p, k == yk ? 1.0 : 0.0));
        h[k] = num::mul(w, num::mul(p, num::sub(1.0, p)));
      }
      return;
    }
  }
}

// log(1 + exp(a)) computed as max(a, 0) + log(1 + exp(-|a|)).
TL_HD double softplus(double a) {
  const double pos = a > 0.0 ? a : 0.0;
  return num::add(pos, gbdt::log(num::add(1.0, gbdt::exp(-abs_bits(a)))));
}

// Loss of one row (before weighting and averaging).
// Logloss, CrossEntropy: softplus(f) - y f.  RMSE: (f - y)^2 (the metric is
// the root of the weighted mean).  MultiClass: logsumexp(f) - f_y.
// MultiClassOneVsAll: sum over k of softplus(f_k) - [y == k] f_k.
// Poisson: exp(f) - y f.  Tweedie: -y a / (1 - rho) + b / (2 - rho).
// Huber: r^2 / 2 for |r| <= delta, else delta (|r| - delta / 2).
// MAE: |y - f|.  Quantile: r = y - f; alpha r for r > 0, else (alpha - 1) r.
TL_HD double row_loss(GbdtLoss loss, int D, const double* f, double y, double param) {
  switch (loss) {
    case GbdtLoss::RMSE: {
      const double d = num::sub(f[0], y);
      return num::mul(d, d);
    }
    case GbdtLoss::Logloss:
    case GbdtLoss::CrossEntropy:
      return num::sub(softplus(f[0]), num::mul(y, f[0]));
    case GbdtLoss::MultiClassOneVsAll: {
      const int yk = static_cast<int>(y);
      double s = 0.0;
      for (int k = 0; k < D; ++k) s = num::add(s, num::sub(softplus(f[k]), k == yk ? f[k] : 0.0));
      return s;
    }
    case GbdtLoss::Poisson:
      return num::sub(gbdt::exp(f[0]), num::mul(y, f[0]));
    case GbdtLoss::Tweedie: {
      const double a = gbdt::exp(num::mul(num::sub(1.0, param), f[0]));
      const double b = gbdt::exp(num::mul(num::sub(2.0, param), f[0]));
      return num::add(num::div(num::mul(-y, a), num::sub(1.0, param)), num::div(b, num::sub(2.0, param)));
    }
    case GbdtLoss::Huber: {
      const double r = num::sub(f[0], y);
      const double ar = abs_bits(r);
      if (ar <= param) return num::mul(0.5, num::mul(r, r));
      return num::mul(param, num::sub(ar, num::mul(0.5, param)));
    }
    case GbdtLoss::MAE:
      return abs_bits(num::sub(y, f[0]));
    case GbdtLoss::Quantile: {
      const double r = num::sub(y, f[0]);
      return r > 0.0 ? num::mul(param, r) : num::mul(num::sub(param, 1.0), r);
    }
    case GbdtLoss::MultiClass: {
      double mx = f[0];
      for (int k = 1; k < D; ++k) mx = f[k] > mx ? f[k] : mx;
      double s = 0.0;
      for (int k = 0; k < D; ++k) s = num::add(s, gbdt::exp(num::sub(f[k], mx)));
      const int yk = static_cast<int>(y);
      return num::sub(num::add(mx, gbdt::log(s)), f[yk]);
    }
  }
  return 0.0;
}

// The prediction link of acc[0..D) into p[0..D) (p may alias acc).
// Probability: sigmoid (Logloss, CrossEntropy); softmax (MultiClass: the
// largest margin subtracted, exponentials summed in class order); per-class
// sigmoids divided by their sum in class order (MultiClassOneVsAll).
// Exponent: exp (Poisson, Tweedie). Raw: the identity.
TL_HD void link(GbdtLoss loss, int D, GbdtOutput kind, const double* acc, double* p) {
  if (kind == GbdtOutput::Exponent) {
    for (int k = 0; k < D; ++k) p[k] = gbdt::exp(acc[k]);
    return;
  }
  if (kind == GbdtOutput::Probability) {
    if (loss == GbdtLoss::Logloss || loss == GbdtLoss::CrossEntropy) {
      p[0] = sigmoid(acc[0]);
      return;
    }
    if (loss == GbdtLoss::MultiClass) {
      double mx = acc[0];
      for (int k = 1; k < D; ++k) mx = acc[k] > mx ? acc[k] : mx;
      double s = 0.0;
      for (int k = 0; k < D; ++k) {
        p[k] = gbdt::exp(num::sub(acc[k], mx));
        s = num::add(s, p[k]);
      }
      for (int k = 0; k < D; ++k) p[k] = num::div(p[k], s);
      return;
    }
    if (loss == GbdtLoss::MultiClassOneVsAll) {
      double s = 0.0;
      for (int k = 0; k < D; ++k) {
        p[k] = sigmoid(acc[k]);
        s = num::add(s, p[k]);
      }
      for (int k = 0; k < D; ++k) p[k] = num::div(p[k], s);
      return;
    }
  }
  for (int k = 0; k < D; ++k) p[k] = acc[k];
}

}  // namespace tl::gbdt
