// Fixed-order eigensolver, SVD and QR on the host (twinlearn/core/jacobi.hpp).
//
// Every loop below is either element-wise (the compiler may vectorise it:
// each lane computes the same single IEEE operations, never fused, because
// the library is built with -ffp-contract=off and without fast-math) or a
// dot product in kDotLanes explicit lanes (vectorising it keeps the lanes).
// Rows are kept contiguous where the rotations touch them, so that the
// updates run over memory in order.
#include "twinlearn/core/jacobi.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "twinlearn/core/error.hpp"

namespace tl::jacobi {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();  // 2^-52
// Above this |theta|, theta^2 + 1 would overflow (or round to theta^2).
constexpr double kThetaBig = 1e153;

struct Rotation {
  double t, s, tau;
};

// The rotation zeroing the off-diagonal g of the symmetric 2 x 2 matrix
// [[a, g], [g, b]] (g != 0): Rutishauser's formulas.
Rotation rotation(double a, double b, double g) {
  const double theta = (b - a) / (2.0 * g);
  double t;
  if (std::fabs(theta) > kThetaBig) {
    t = 0.5 / theta;
  } else {
    t = 1.0 / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
    if (theta < 0.0) t = -t;
  }
  const double c = 1.0 / std::sqrt(t * t + 1.0);
  const double s = t * c;
  return {t, s, s / (1.0 + c)};
}

// x <- c x - s y, y <- s x + c y in Rutishauser's form, over n entries.
void rotate(double* x, double* y, std::int64_t n, double s, double tau) {
  for (std::int64_t k = 0; k < n; ++k) {
    const double xk = x[k], yk = y[k];
    x[k] = xk - s * (yk + tau * xk);
    y[k] = yk + s * (xk - tau * yk);
  }
}

// Indices 0..n-1 ordered by key descending, ties by index.
std::vector<std::int64_t> descending(const std::vector<double>& key) {
  std::vector<std::int64_t> idx(key.size());
  std::iota(idx.begin(), idx.end(), std::int64_t(0));
  std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t i, std::int64_t j) { return key[i] > key[j]; });
  return idx;
}

bool all_finite(const double* A, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(A[i])) return false;
  return true;
}

void require_sweeps(int max_sweeps) {
  TL_REQUIRE(max_sweeps >= 1, ValueError, "jacobi: max_sweeps must be at least 1, got ", max_sweeps);
}

}  // namespace

double dot(const double* x, const double* y, std::int64_t n) {
  double acc[kDotLanes] = {};
  std::int64_t j = 0;
  for (; j + kDotLanes <= n; j += kDotLanes)
    for (int l = 0; l < kDotLanes; ++l) acc[l] = acc[l] + x[j + l] * y[j + l];
  for (int l = 0; j + l < n; ++l) acc[l] = acc[l] + x[j + l] * y[j + l];
  for (int off = kDotLanes / 2; off > 0; off >>= 1)
    for (int l = 0; l < off; ++l) acc[l] = acc[l] + acc[l + off];
  return acc[0];
}

Result sym_eigh(const double* A, std::int64_t d, double* w, double* V, int max_sweeps) {
  TL_REQUIRE(d >= 0, ValueError, "jacobi.sym_eigh: negative size");
  require_sweeps(max_sweeps);
  Result res;
  if (d == 0) return res;
  TL_REQUIRE(A && w && V, ValueError, "jacobi.sym_eigh: no data");
  const auto D = static_cast<std::size_t>(d);
  if (!all_finite(A, D * D)) {
    std::fill(w, w + D, std::numeric_limits<double>::quiet_NaN());
    std::fill(V, V + D * D, std::numeric_limits<double>::quiet_NaN());
    return res;
  }
  // a: the working matrix, kept symmetric (both triangles); vt: the
  // accumulated rotations, row i the eigenvector of a's diagonal entry i.
  // Rows are ld apart: a multiple of 4 KiB between rows would map the
  // column writes below to one cache set.
  const std::size_t ld = D % 64 == 0 ? D + 8 : D;
  std::vector<double> a(D * ld), vt(D * ld, 0.0);
  double amax = 0.0;
  for (std::size_t i = 0; i < D; ++i) {
    for (std::size_t j = i; j < D; ++j) {
      const double v = A[i * D + j];
      a[i * ld + j] = a[j * ld + i] = v;
      amax = std::max(amax, std::fabs(v));
    }
    vt[i * ld + i] = 1.0;
  }
  const double floor = kEps * kEps * amax;

  // Copies kept lazily (the values are those of a full mirror after every
  // rotation; only fewer copies are made). Rotation (p, q) reads rows p and q
  // whole and changes rows and columns p and q. Within the row step of p, row
  // p is always current; row q is read once, and its lower part (columns
  // q' < q) must hold the column-q' updates of the rotations (p, q') before
  // it: each rotation copies its column q into the rows below q. Column p is
  // read only at index p, which the rotation overwrites. At the end of the
  // row step column p is copied from row p and each rotated column q into the
  // rows above q, in blocks of rows (the 4 KiB strides of single column
  // writes would miss the cache at every row).
  constexpr std::size_t kBlock = 64;
  std::vector<std::size_t> rotated_cols;
  rotated_cols.reserve(D);
  res.converged = false;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    bool rotated = false;
    for (std::size_t p = 0; p + 1 < D; ++p) {
      double* ap = a.data() + p * ld;
      rotated_cols.clear();
      for (std::size_t q = p + 1; q < D; ++q) {
        double* aq = a.data() + q * ld;
        const double apq = ap[q], app = ap[p], aqq = aq[q];
        const double g = std::fabs(apq);
        if (g <= floor || g <= kEps * std::sqrt(std::fabs(app)) * std::sqrt(std::fabs(aqq))) continue;
        rotated_cols.push_back(q);
        const Rotation r = rotation(app, aqq, apq);
        const double tapq = r.t * apq;
        rotate(ap, aq, d, r.s, r.tau);  // entries p and q are set next
        ap[p] = app - tapq;
        aq[q] = aqq + tapq;
        ap[q] = 0.0;
        aq[p] = 0.0;
        for (std::size_t k = q + 1; k < D; ++k) a[k * ld + q] = aq[k];
        rotate(vt.data() + p * ld, vt.data() + q * ld, d, r.s, r.tau);
      }
      if (rotated_cols.empty()) continue;
      rotated = true;
      for (std::size_t k = 0; k < D; ++k) a[k * ld + p] = ap[k];
      for (std::size_t k0 = 0; k0 < D; k0 += kBlock) {
        const std::size_t k1 = std::min(D, k0 + kBlock);
        for (const std::size_t q : rotated_cols) {
          const double* aq = a.data() + q * ld;
          for (std::size_t k = k0; k < std::min(k1, q); ++k) a[k * ld + q] = aq[k];
        }
      }
    }
    res.sweeps = sweep + 1;
    if (!rotated) {
      res.converged = true;
      break;
    }
  }

  std::vector<double> diag(D);
  for (std::size_t i = 0; i < D; ++i) diag[i] = a[i * ld + i];
  const auto order = descending(diag);
  for (std::size_t j = 0; j < D; ++j) {
    const std::size_t src = static_cast<std::size_t>(order[j]);
    w[j] = diag[src];
    for (std::size_t i = 0; i < D; ++i) V[i * D + j] = vt[src * ld + i];
  }
  return res;
}

Result svd(const double* A, std::int64_t m, std::int64_t n, double* U, double* s, double* Vt, int max_sweeps) {
  TL_REQUIRE(m >= 0 && n >= 0, ValueError, "jacobi.svd: negative size");
  require_sweeps(max_sweeps);
  Result res;
  const std::int64_t r64 = std::min(m, n), l64 = std::max(m, n);
  if (r64 == 0) return res;
  TL_REQUIRE(A && s, ValueError, "jacobi.svd: no data");
  const auto R = static_cast<std::size_t>(r64), L = static_cast<std::size_t>(l64);
  const auto M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n);
  const bool tall = m >= n;
  if (!all_finite(A, M * N)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::fill(s, s + R, nan);
    if (U) std::fill(U, U + M * R, nan);
    if (Vt) std::fill(Vt, Vt + R * N, nan);
    return res;
  }
  // W: the r vectors rotated to orthogonality (A's columns when tall, else
  // its rows), W = Z W0; Z: the accumulated rotations (r x r).
  std::vector<double> W(R * L), Z(R * R, 0.0);
  if (tall) {
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) W[j * L + i] = A[i * N + j];
  } else {
    std::copy(A, A + M * N, W.begin());
  }
  for (std::size_t i = 0; i < R; ++i) Z[i * R + i] = 1.0;
  const double tol = std::sqrt(static_cast<double>(l64)) * kEps;

  res.converged = false;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    bool rotated = false;
    for (std::size_t p = 0; p + 1 < R; ++p) {
      for (std::size_t q = p + 1; q < R; ++q) {
        double* wp = W.data() + p * L;
        double* wq = W.data() + q * L;
        const double alpha = dot(wp, wp, l64), beta = dot(wq, wq, l64);
        if (alpha == 0.0 || beta == 0.0) continue;
        const double gamma = dot(wp, wq, l64);
        if (std::fabs(gamma) <= tol * std::sqrt(alpha) * std::sqrt(beta)) continue;
        rotated = true;
        const Rotation rot = rotation(alpha, beta, gamma);
        rotate(wp, wq, l64, rot.s, rot.tau);
        rotate(Z.data() + p * R, Z.data() + q * R, r64, rot.s, rot.tau);
      }
    }
    res.sweeps = sweep + 1;
    if (!rotated) {
      res.converged = true;
      break;
    }
  }

  std::vector<double> sigma(R);
  for (std::size_t j = 0; j < R; ++j) sigma[j] = std::sqrt(dot(W.data() + j * L, W.data() + j * L, l64));
  const auto order = descending(sigma);
  // Tall: A = What^T diag(sigma) Z (U from W, Vt = Z); wide: A = Z^T diag(sigma) What.
  for (std::size_t j = 0; j < R; ++j) {
    const std::size_t src = static_cast<std::size_t>(order[j]);
    const double sj = sigma[src];
    s[j] = sj;
    const double* wj = W.data() + src * L;
    const double* zj = Z.data() + src * R;
    if (U) {
      for (std::size_t i = 0; i < M; ++i) U[i * R + j] = tall ? (sj > 0.0 ? wj[i] / sj : 0.0) : zj[i];
    }
    if (Vt) {
      for (std::size_t i = 0; i < N; ++i) Vt[j * N + i] = tall ? zj[i] : (sj > 0.0 ? wj[i] / sj : 0.0);
    }
  }
  return res;
}

void qr_q(const double* A, std::int64_t m, std::int64_t n, double* Q) {
  TL_REQUIRE(m >= n && n >= 0, ValueError, "jacobi.qr_q: needs m >= n >= 0, got ", m, " x ", n);
  if (n == 0) return;
  TL_REQUIRE(A && Q, ValueError, "jacobi.qr_q: no data");
  const auto M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n);
  // Rt: A's columns as rows (reduced in place); vs/beta: the reflections.
  std::vector<double> Rt(N * M), vs(N * M, 0.0), beta(N, 0.0);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) Rt[j * M + i] = A[i * N + j];
  for (std::size_t j = 0; j < N; ++j) {
    const std::int64_t len = m - static_cast<std::int64_t>(j);
    double* x = Rt.data() + j * M + j;
    const double norm = std::sqrt(dot(x, x, len));
    if (norm == 0.0) continue;
    const double alpha = x[0] >= 0.0 ? -norm : norm;
    double* v = vs.data() + j * M + j;
    std::copy(x, x + len, v);
    v[0] = x[0] - alpha;
    beta[j] = 2.0 / dot(v, v, len);
    for (std::size_t k = j + 1; k < N; ++k) {
      double* y = Rt.data() + k * M + j;
      const double f = beta[j] * dot(v, y, len);
      for (std::int64_t i = 0; i < len; ++i) y[i] = y[i] - f * v[i];
    }
  }
  // Q = H_0 ... H_{n-1} [I; 0], by columns (rows of Qt); H_j leaves the
  // columns i < j alone (they are zero from entry j on).
  std::vector<double> Qt(N * M, 0.0);
  for (std::size_t i = 0; i < N; ++i) Qt[i * M + i] = 1.0;
  for (std::size_t jj = N; jj-- > 0;) {
    if (beta[jj] == 0.0) continue;
    const std::int64_t len = m - static_cast<std::int64_t>(jj);
    const double* v = vs.data() + jj * M + jj;
    for (std::size_t i = jj; i < N; ++i) {
      double* y = Qt.data() + i * M + jj;
      const double f = beta[jj] * dot(v, y, len);
      for (std::int64_t k = 0; k < len; ++k) y[k] = y[k] - f * v[k];
    }
  }
  for (std::size_t r = 0; r < M; ++r)
    for (std::size_t i = 0; i < N; ++i) Q[r * N + i] = Qt[i * M + r];
}

}  // namespace tl::jacobi
