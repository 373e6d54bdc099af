// CPU backend of logistic regression: the canonical evaluation (one task per
// chunk of rows, then the pairwise tree per gradient entry) and the
// controller with sequential vector operations.
#include <algorithm>
#include <vector>

#include "core/cpu/cpu_clones.hpp"
#include "linear_model/logistic/logistic_impl.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {
namespace {

using namespace logistic_detail;

// Loss and gradient partials of rows [r0, r1) at W: part[p * nchunks + c]
// for the gradient entries p < P and the loss at p = P.
template <class T>
void eval_chunk_body(MatrixView<const T> X, VectorView<const std::int32_t> y, VectorView<const T> w,
                     const Geometry& geo, const double* W, std::int64_t c, double* part) {
  const std::int64_t d = geo.d, K = geo.rows, cols = geo.cols, P = geo.P;
  const std::int64_t r0 = c * kLogisticChunk, r1 = std::min(geo.n, r0 + kLogisticChunk);
  const std::int64_t nr = r1 - r0;
  double z[kLogisticChunk * 64];
  std::vector<double> zbig;
  double* zr = z;
  if (nr * K > kLogisticChunk * 64) {
    zbig.resize(static_cast<std::size_t>(nr * K));
    zr = zbig.data();
  }
  for (std::int64_t i = 0; i < nr; ++i) {
    for (std::int64_t k = 0; k < K; ++k) {
      const double* wk = W + k * cols;
      double acc = 0.0;
      for (std::int64_t j = 0; j < d; ++j) acc = num::fma(static_cast<double>(X(r0 + i, j)), wk[j], acc);
      if (geo.fi) acc = num::add(acc, wk[d]);
      zr[i * K + k] = acc;
    }
  }
  double loss = 0.0;
  for (std::int64_t i = 0; i < nr; ++i) {
    const double s = w.data ? static_cast<double>(w[r0 + i]) : 1.0;
    const double li = row_loss(zr + i * K, K, y[r0 + i], s);
    loss = num::fma(s, li, loss);
  }
  part[P * geo.nchunks + c] = loss;
  // Gradient partials: for p = (k, j) the chain over the chunk's rows in
  // order, acc = fma(z[i, k], X[i, j], acc) (X[i, d] = 1 for the
  // intercept). The chains of one k advance together, row by row, so the
  // loop over j runs along X's row and vectorizes; each chain is unchanged.
  std::vector<double> acc(static_cast<std::size_t>(cols));
  for (std::int64_t k = 0; k < K; ++k) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::int64_t i = 0; i < nr; ++i) {
      const double zk = zr[i * K + k];
      const T* x = &X(r0 + i, 0);
      const std::int64_t cs = X.col_stride;
      for (std::int64_t j = 0; j < d; ++j) acc[j] = num::fma(zk, static_cast<double>(x[j * cs]), acc[j]);
      if (cols > d) acc[d] = num::fma(zk, 1.0, acc[d]);
    }
    for (std::int64_t j = 0; j < cols; ++j) part[(k * cols + j) * geo.nchunks + c] = acc[j];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same code with the FMA instruction inlined instead of libm's fma (the
// same correctly rounded result).
template <class T>
__attribute__((target("avx2,fma"), flatten)) void eval_chunk_fma(MatrixView<const T> X,
                                                                  VectorView<const std::int32_t> y,
                                                                  VectorView<const T> w, const Geometry& geo,
                                                                  const double* W, std::int64_t c, double* part) {
  eval_chunk_body(X, y, w, geo, W, c, part);
}
#endif

template <class T>
void eval_chunk(MatrixView<const T> X, VectorView<const std::int32_t> y, VectorView<const T> w,
                const Geometry& geo, const double* W, std::int64_t c, double* part) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_has_avx2_fma()) return eval_chunk_fma(X, y, w, geo, W, c, part);
#endif
  eval_chunk_body(X, y, w, geo, W, c, part);
}

// Sequential vector operations in the canonical order.
struct CpuOps {
  std::int64_t P;
  double* scratch;

  template <class F, class M>
  double chunked(F term, M merge) {
    const std::int64_t nc = (P + kDotChunk - 1) / kDotChunk;
    for (std::int64_t c = 0; c < nc; ++c) {
      double acc = 0.0;
      for (std::int64_t p = c * kDotChunk; p < std::min(P, (c + 1) * kDotChunk); ++p) acc = term(p, acc);
      scratch[c] = acc;
    }
    if (nc == 0) return 0.0;
    tree_reduce_inplace(scratch, nc, 1, merge);
    return scratch[0];
  }
  static double add(double a, double b) { return num::add(a, b); }
  // max keeping NaN (the first one met wins), the same rule as the CUDA backend
  static double max(double a, double b) { return (a != a || b <= a) ? a : b; }
  double dot(const double* a, const double* b) {
    return chunked([&](std::int64_t p, double acc) { return num::fma(a[p], b[p], acc); }, add);
  }
  double dot_diff(const double* a, const double* b, const double* c) {
    return chunked([&](std::int64_t p, double acc) { return num::fma(a[p], num::sub(b[p], c[p]), acc); }, add);
  }
  double penalty_l2(const double* x, const Geometry& g) {
    return chunked([&](std::int64_t p, double acc) { return g.penalised(p) ? num::fma(x[p], x[p], acc) : acc; },
                   add);
  }
  double penalty_l1(const double* x, const Geometry& g) {
    return chunked([&](std::int64_t p, double acc) { return g.penalised(p) ? num::add(acc, absd(x[p])) : acc; },
                   add);
  }
  double maxabs(const double* a) {
    return chunked(
        [&](std::int64_t p, double acc) {
          const double v = absd(a[p]);
          return (acc != acc || v <= acc) ? acc : v;
        },
        max);
  }
  void smooth_gradient(double* gt, const double* sums, const double* xt, double inv_s, double l2, const Geometry& g) {
    for (std::int64_t p = 0; p < P; ++p) gt[p] = smooth_gradient_entry(sums[p], xt[p], inv_s, l2, g.penalised(p));
  }
  void pseudo_gradient(double* pg, const double* g, const double* x, double l1, const Geometry& gm) {
    for (std::int64_t p = 0; p < P; ++p) pg[p] = pseudo_gradient_entry(g[p], x[p], l1, gm.penalised(p));
  }
  void owl_trial(double* xt, const double* x, double alpha, const double* d, const double* pg, const Geometry& gm) {
    for (std::int64_t p = 0; p < P; ++p) xt[p] = owl_trial_entry(x[p], alpha, d[p], pg[p], gm.penalised(p));
  }
  void owl_project_direction(double* d, const double* pg) {
    for (std::int64_t p = 0; p < P; ++p) d[p] = project_direction_entry(d[p], pg[p]);
  }
  void xpay(double* out, const double* x, double a, const double* y) {
    for (std::int64_t p = 0; p < P; ++p) out[p] = xpay_entry(x[p], a, y[p]);
  }
  void axpy(double* y, double a, const double* x) {
    for (std::int64_t p = 0; p < P; ++p) y[p] = xpay_entry(y[p], a, x[p]);
  }
  void scale(double* x, double a) {
    for (std::int64_t p = 0; p < P; ++p) x[p] = num::mul(x[p], a);
  }
  void diff(double* out, const double* a, const double* b) {
    for (std::int64_t p = 0; p < P; ++p) out[p] = num::sub(a[p], b[p]);
  }
  void copy(double* out, const double* a) { std::copy(a, a + P, out); }
  void neg_copy(double* out, const double* a) {
    for (std::int64_t p = 0; p < P; ++p) out[p] = -a[p];
  }
};

}  // namespace

template <class T>
LogisticResult logistic_lbfgs_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const std::int32_t> y,
                                  VectorView<const T> w, const Geometry& geo, const Params& prm, double* W) {
  TL_REQUIRE(X.on_host() && y.on_host() && (!w.data || w.on_host()), ValueError, "the CPU backend needs host arrays");
  const std::int64_t P = geo.P, m = prm.memory, nc = geo.nchunks;
  std::vector<double> store(static_cast<std::size_t>(9 * P + 2 * m * P + 2 * m + (P + kDotChunk - 1) / kDotChunk + 1));
  Vectors v;
  double* q = store.data();
  v.x = q; q += P;
  v.g = q; q += P;
  v.pg = q; q += P;
  v.d = q; q += P;
  v.xt = q; q += P;
  v.sums = q; q += P + 1;
  v.gt = q; q += P;
  v.S = q; q += m * P;
  v.Y = q; q += m * P;
  v.rho = q; q += m;
  v.a = q; q += m;
  v.scratch = q;
  std::copy(W, W + P, v.xt);
  std::vector<double> part(static_cast<std::size_t>((P + 1) * nc));
  CpuOps ops{P, v.scratch};
  State st;
  while (!st.done) {
    parallel_for(ctx, nc, [&](std::int64_t c) { eval_chunk(X, y, w, geo, v.xt, c, part.data()); });
    parallel_for(ctx, P + 1, [&](std::int64_t p) {
      double* e = part.data() + p * nc;
      tree_reduce_inplace(e, nc, 1, [](double a, double b) { return num::add(a, b); });
      v.sums[p] = e[0];
    });
    controller_step(ops, st, v, geo, prm);
  }
  std::copy(v.x, v.x + P, W);
  LogisticResult r;
  r.n_iter = st.iter;
  r.n_evals = st.nevals;
  r.status = static_cast<LogisticStatus>(st.status);
  r.objective = st.fk;
  return r;
}

template <class T>
void logistic_proba_cpu(const Context& ctx, MatrixView<const T> scores, bool log, MatrixView<T> out) {
  TL_REQUIRE(scores.on_host() && out.on_host() && scores.is_c_contiguous() && out.is_c_contiguous(), ValueError,
             "the CPU backend needs contiguous host arrays");
  const bool binary = scores.cols == 1;
  const std::int64_t ncls = out.cols, n = scores.rows;
  parallel_for(ctx, (n + 1023) / 1024, [&](std::int64_t b) {
    for (std::int64_t i = b * 1024; i < std::min(n, (b + 1) * 1024); ++i)
      proba_row(scores.data + i * scores.cols, ncls, binary, log, out.data + i * ncls);
  });
}

#define TL_INSTANTIATE(T)                                                                                      \
  template LogisticResult logistic_lbfgs_cpu<T>(const Context&, MatrixView<const T>,                          \
                                                VectorView<const std::int32_t>, VectorView<const T>,          \
                                                const Geometry&, const Params&, double*);                     \
  template void logistic_proba_cpu<T>(const Context&, MatrixView<const T>, bool, MatrixView<T>);
TL_INSTANTIATE(float)
TL_INSTANTIATE(double)
#undef TL_INSTANTIATE

}  // namespace tl::detail
