#include <cmath>

#include "linear_model/logistic/logistic_impl.hpp"

namespace tl {

template <class T>
LogisticResult logistic_lbfgs(const Context& ctx, MatrixView<const T> X, VectorView<const std::int32_t> y,
                              VectorView<const T> w, const LogisticOptions& opt, double* W) {
  TL_REQUIRE(X.rows > 0 && X.cols >= 0, ValueError, "logistic regression needs at least one sample");
  TL_REQUIRE(y.size == X.rows, ValueError, "y has ", y.size, " entries but X has ", X.rows, " rows");
  TL_REQUIRE(opt.n_classes >= 2, ValueError, "logistic regression needs at least two classes");
  TL_REQUIRE(opt.sum_weights > 0.0 && std::isfinite(opt.sum_weights), ValueError,
             "the sample weights must have a positive finite sum");
  TL_REQUIRE(opt.l2 >= 0.0 && opt.l1 >= 0.0 && std::isfinite(opt.l2) && std::isfinite(opt.l1), ValueError,
             "penalties must be finite and >= 0");
  TL_REQUIRE(opt.max_iter >= 0 && opt.memory >= 1 && opt.max_linesearch >= 1, ValueError,
             "invalid iteration limits");
  TL_REQUIRE(W != nullptr, ValueError, "no parameter buffer");
  check_placement(ctx, X, "X");
  check_placement(ctx, y, "y");
  if (y.on_host()) {
    for (std::int64_t i = 0; i < y.size; ++i)
      TL_REQUIRE(y[i] >= 0 && y[i] < opt.n_classes, ValueError, "class index ", y[i], " at row ", i,
                 " is outside [0, ", opt.n_classes, ")");
  }
  if (w.data) {
    TL_REQUIRE(w.size == X.rows, ValueError, "sample_weight has ", w.size, " entries but X has ", X.rows, " rows");
    check_placement(ctx, w, "sample_weight");
  }
  logistic_detail::Geometry geo;
  geo.n = X.rows;
  geo.d = X.cols;
  geo.fi = opt.fit_intercept;
  geo.rows = opt.n_classes == 2 ? 1 : opt.n_classes;
  geo.cols = X.cols + (opt.fit_intercept ? 1 : 0);
  geo.P = geo.rows * geo.cols;
  geo.nchunks = (X.rows + kLogisticChunk - 1) / kLogisticChunk;
  TL_REQUIRE(geo.P > 0, ValueError, "logistic regression has no parameters to fit");
  logistic_detail::Params prm;
  prm.inv_s = 1.0 / opt.sum_weights;
  prm.l2 = opt.l2;
  prm.l1 = opt.l1;
  prm.max_iter = opt.max_iter;
  prm.gtol = opt.gtol;
  prm.gtol_converged = opt.gtol_converged > opt.gtol ? opt.gtol_converged : opt.gtol;
  prm.ftol = opt.ftol;
  prm.memory = opt.memory;
  prm.max_ls = opt.max_linesearch;
  return ctx.dispatch([&] { return detail::logistic_lbfgs_cpu(ctx, X, y, w, geo, prm, W); },
                      [&] { return detail::logistic_lbfgs_cuda(ctx, X, y, w, geo, prm, W); });
}

template <class T>
void logistic_proba(const Context& ctx, MatrixView<const T> scores, bool log, MatrixView<T> out) {
  TL_REQUIRE(out.rows == scores.rows, ValueError, "logistic_proba: output rows do not match");
  TL_REQUIRE(scores.cols >= 1 && out.cols == (scores.cols == 1 ? 2 : scores.cols), ValueError,
             "logistic_proba: output columns do not match the scores");
  check_placement(ctx, scores, "scores");
  check_placement(ctx, out, "out");
  if (scores.rows == 0) return;
  ctx.dispatch([&] { detail::logistic_proba_cpu(ctx, scores, log, out); },
               [&] { detail::logistic_proba_cuda(ctx, scores, log, out); });
}

#define TL_INSTANTIATE(T)                                                                                    \
  template LogisticResult logistic_lbfgs<T>(const Context&, MatrixView<const T>,                            \
                                            VectorView<const std::int32_t>, VectorView<const T>,            \
                                            const LogisticOptions&, double*);                               \
  template void logistic_proba<T>(const Context&, MatrixView<const T>, bool, MatrixView<T>);
TL_INSTANTIATE(float)
TL_INSTANTIATE(double)
#undef TL_INSTANTIATE

}  // namespace tl
