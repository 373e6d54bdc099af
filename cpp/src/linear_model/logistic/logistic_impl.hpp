// Backend entry points of logistic regression (validated input).
#pragma once
#include <vector>

#include "linear_model/logistic/logistic_common.hpp"

namespace tl::detail {

// Runs the optimizer from W (rows x cols, host) to the end; W holds the result.
template <class T>
LogisticResult logistic_lbfgs_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const std::int32_t> y,
                                  VectorView<const T> w, const logistic_detail::Geometry& geo,
                                  const logistic_detail::Params& prm, double* W);
template <class T>
LogisticResult logistic_lbfgs_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const std::int32_t> y,
                                   VectorView<const T> w, const logistic_detail::Geometry& geo,
                                   const logistic_detail::Params& prm, double* W);

template <class T>
void logistic_proba_cpu(const Context& ctx, MatrixView<const T> scores, bool log, MatrixView<T> out);
template <class T>
void logistic_proba_cuda(const Context& ctx, MatrixView<const T> scores, bool log, MatrixView<T> out);

}  // namespace tl::detail

namespace tl::logistic_detail {

// Probabilities of one row (see logistic_proba in logistic.hpp): two classes
// from one score, else the softmax; log takes the logarithm of each.
template <class T>
TL_HD void proba_row(const T* s, std::int64_t ncls, bool binary, bool take_log, T* out) {
  if (binary) {
    const T p = sigmoid(s[0]);
    out[0] = sub(T(1), p);
    out[1] = p;
  } else {
    softmax(s, ncls, 1, out, 1);
  }
  if (take_log)
    for (std::int64_t k = 0; k < ncls; ++k) out[k] = log(out[k]);
  for (std::int64_t k = 0; k < ncls; ++k) out[k] = canonical(out[k]);
}

}  // namespace tl::logistic_detail
