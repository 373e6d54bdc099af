// Backend entry points of the array transcendentals (validated inputs only),
// and the elementwise switch both backends share.
#pragma once
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/math_array.hpp"

namespace tl::detail {

template <class T>
TL_HD T apply_math_fn(MathFn fn, T x) {
  switch (fn) {
    case MathFn::Exp: return tl::num::exp(x);
    case MathFn::Expm1: return tl::num::expm1(x);
    case MathFn::Log: return tl::num::log(x);
    case MathFn::Log1p: return tl::num::log1p(x);
    case MathFn::Tanh: return tl::num::tanh(x);
    case MathFn::Sigmoid: return tl::num::sigmoid(x);
    case MathFn::Sin: return tl::num::sin(x);
    case MathFn::Cos: return tl::num::cos(x);
    case MathFn::Erf: return tl::num::erf(x);
  }
  return x;
}

// Row i of X into out (out has 1 column for logsumexp).
template <class T>
TL_HD void apply_row_fn(RowFn fn, const T* x, std::int64_t n, std::int64_t xs, T* out, std::int64_t os) {
  switch (fn) {
    case RowFn::LogSumExp: *out = tl::num::log_sum_exp(x, n, xs); return;
    case RowFn::Softmax: tl::num::softmax(x, n, xs, out, os); return;
    case RowFn::LogSoftmax: tl::num::log_softmax(x, n, xs, out, os); return;
  }
}

template <class T>
void math_apply_cpu(const Context& ctx, MathFn fn, VectorView<const T> x, VectorView<T> out);
template <class T>
void math_pow_cpu(const Context& ctx, VectorView<const T> x, VectorView<const T> y, VectorView<T> out);
template <class T>
void math_rows_cpu(const Context& ctx, RowFn fn, MatrixView<const T> X, MatrixView<T> out);

template <class T>
void math_apply_cuda(const Context& ctx, MathFn fn, VectorView<const T> x, VectorView<T> out);
template <class T>
void math_pow_cuda(const Context& ctx, VectorView<const T> x, VectorView<const T> y, VectorView<T> out);
template <class T>
void math_rows_cuda(const Context& ctx, RowFn fn, MatrixView<const T> X, MatrixView<T> out);

}  // namespace tl::detail
