// Row-norm math shared by both backends: the per-element term of each norm
// and the finishing step. The reduction order is twinlearn/core/lane_reduce.hpp.
#pragma once
#include <limits>

#include "twinlearn/core/lane_reduce.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/preprocessing/normalizer.hpp"

namespace tl::detail {

TL_HD double norm_term(double x, RowNorm norm) {
  if (norm == RowNorm::L2) return tl::num::mul(x, x);
  return x < 0.0 ? -x : (x == 0.0 ? 0.0 : x);  // |x|, with |-0| = +0
}

// The row's norm in T, from the lane-reduced sum (l1, l2) or maximum (max).
template <class T>
TL_HD T finish_norm(double reduced, RowNorm norm) {
  const double v = norm == RowNorm::L2 ? tl::num::sqrt(reduced) : reduced;
  const T nt = static_cast<T>(v);
  return nt < T(10) * std::numeric_limits<T>::epsilon() ? T(1) : nt;
}

template <class T>
TL_HD T normalize_one(T x, T norm) {
  return static_cast<T>(tl::num::div(static_cast<double>(x), static_cast<double>(norm)));
}

template <class T>
void normalizer_apply_cpu(const Context& ctx, MatrixView<const T> X, RowNorm norm, MatrixView<T> out);
template <class T>
void normalizer_apply_cuda(const Context& ctx, MatrixView<const T> X, RowNorm norm, MatrixView<T> out);

}  // namespace tl::detail
