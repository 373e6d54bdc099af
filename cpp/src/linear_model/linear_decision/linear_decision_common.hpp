// Backend entry points of tl::linear_decision (validated input).
#pragma once
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linear_model/linear_decision.hpp"

namespace tl::detail {

template <class T>
TL_HD bool non_finite(T v) {
  return num::is_nan(v) || num::is_inf(v);
}

template <class T>
std::int64_t linear_decision_cpu(const Context& ctx, MatrixView<const T> X, const T* coef, const T* intercept,
                                 std::int64_t t, MatrixView<T> out);
template <class T>
std::int64_t linear_decision_cuda(const Context& ctx, MatrixView<const T> X, const T* coef, const T* intercept,
                                  std::int64_t t, MatrixView<T> out);

}  // namespace tl::detail
