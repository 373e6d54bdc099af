// Elastic-net coordinate descent on the Gram matrix (see dense_solve.hpp).
// Sequential, fixed order, IEEE operations only: the same bits on any machine.
#include <cmath>
#include <vector>

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/rng.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"

namespace tl::linalg {
namespace {

double dot(const double* a, const double* b, std::int64_t n) {
  double s = 0.0;
  for (std::int64_t i = 0; i < n; ++i) s = s + a[i] * b[i];
  return s;
}

// The duality gap at w (Qw = Q w): formulation A with an l1 part, B for a
// pure ridge, the squared gradient norm without any penalty (as scikit-learn).
double duality_gap(const double* q, double y_norm2, std::int64_t d, double l1, double l2, bool positive,
                   const double* w, const double* Qw, std::vector<double>& xta) {
  const double w_l2 = l2 > 0.0 ? dot(w, w, d) : 0.0;
  const double q_w = dot(w, q, d);
  const double wQw = dot(w, Qw, d);
  const double r_norm2 = y_norm2 + wQw - 2.0 * q_w;
  const double ry = y_norm2 - q_w;
  if (l1 == 0.0) {
    for (std::int64_t j = 0; j < d; ++j) xta[j] = q[j] - Qw[j];
    const double dual_norm = dot(xta.data(), xta.data(), d);
    if (l2 == 0.0) return dual_norm;
    return (r_norm2 + 0.5 * l2 * w_l2 - ry) + 1.0 / (2.0 * l2) * dual_norm;
  }
  double dual_norm = 0.0, w_l1 = 0.0;
  for (std::int64_t j = 0; j < d; ++j) {
    xta[j] = q[j] - Qw[j] - l2 * w[j];
    const double v = positive ? xta[j] : std::fabs(xta[j]);
    if (j == 0 || v > dual_norm) dual_norm = v;
    w_l1 = w_l1 + std::fabs(w[j]);
  }
  const double primal = 0.5 * (r_norm2 + l2 * w_l2) + l1 * w_l1;
  const double scale = dual_norm > l1 ? l1 / dual_norm : 1.0;
  const double dual = -0.5 * (scale * scale) * (r_norm2 + l2 * w_l2) + scale * ry;
  return primal - dual;
}

}  // namespace

EnetResult enet_coordinate_descent_gram(const double* Q, const double* q, double y_norm2, std::int64_t d, double l1,
                                        double l2, std::int64_t max_iter, double tol, bool positive, bool random,
                                        std::uint64_t seed, double* w) {
  EnetResult res;
  res.tol = tol * y_norm2;
  if (d == 0) {
    res.converged = true;
    return res;
  }
  std::vector<double> Qw(static_cast<std::size_t>(d)), xta(static_cast<std::size_t>(d));
  for (std::int64_t i = 0; i < d; ++i) Qw[i] = dot(Q + i * d, w, d);
  res.gap = duality_gap(q, y_norm2, d, l1, l2, positive, w, Qw.data(), xta);
  if (res.gap >= 0.0 && res.gap <= res.tol) {
    res.converged = true;
    return res;
  }
  for (std::int64_t it = 0; it < max_iter; ++it) {
    double w_max = 0.0, dw_max = 0.0;
    for (std::int64_t k = 0; k < d; ++k) {
      const std::int64_t j = random ? static_cast<std::int64_t>(rng::integer(
                                          seed, 0, static_cast<std::uint64_t>(it * d + k), static_cast<std::uint64_t>(d)))
                                    : k;
      const double qjj = Q[j * d + j];
      if (qjj == 0.0) continue;
      const double wj = w[j];
      const double tmp = q[j] - Qw[j] + wj * qjj;
      double nw;
      if (positive && tmp < 0.0) {
        nw = 0.0;
      } else {
        const double shrunk = std::fabs(tmp) - l1;
        nw = shrunk > 0.0 ? (tmp > 0.0 ? shrunk : -shrunk) / (qjj + l2) : 0.0;
      }
      w[j] = nw;
      if (nw != wj) {
        const double delta = nw - wj;
        const double* row = Q + j * d;
        for (std::int64_t i = 0; i < d; ++i) Qw[i] = Qw[i] + delta * row[i];
      }
      const double dw = std::fabs(nw - wj);
      if (dw > dw_max) dw_max = dw;
      if (std::fabs(nw) > w_max) w_max = std::fabs(nw);
    }
    res.n_iter = it + 1;
    if (w_max == 0.0 || dw_max / w_max <= tol || it == max_iter - 1) {
      res.gap = duality_gap(q, y_norm2, d, l1, l2, positive, w, Qw.data(), xta);
      if (res.gap <= res.tol) {
        res.converged = true;
        break;
      }
    }
  }
  for (std::int64_t j = 0; j < d; ++j) w[j] = num::canonical(w[j]);
  return res;
}

}  // namespace tl::linalg
