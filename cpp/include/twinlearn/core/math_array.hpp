// Array forms of the project's transcendentals (twinlearn/core/math.hpp):
// elementwise functions, pow, and row-wise log-sum-exp / softmax. The CPU and
// CUDA backends call the same TL_HD functions, so results are the same bits on
// both, for any thread count or launch geometry.
#pragma once
#include <string>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

enum class MathFn : int { Exp, Expm1, Log, Log1p, Tanh, Sigmoid, Sin, Cos, Erf };
enum class RowFn : int { LogSumExp, Softmax, LogSoftmax };

// "exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos", "erf";
// ValueError naming the choices otherwise.
MathFn parse_math_fn(const std::string& name);
// "logsumexp", "softmax", "log_softmax".
RowFn parse_row_fn(const std::string& name);

// out[i] = fn(x[i]); x and out: n elements each, host or on the context's
// device (the CUDA backend needs contiguous arrays). out may alias x.
template <class T>
void math_apply(const Context& ctx, MathFn fn, VectorView<const T> x, VectorView<T> out);

// out[i] = pow(x[i], y[i]).
template <class T>
void math_pow(const Context& ctx, VectorView<const T> x, VectorView<const T> y, VectorView<T> out);

// Row-wise over X (rows x cols): logsumexp writes out (rows x 1); softmax and
// log_softmax write out (rows x cols). Each row is reduced sequentially in
// column order (see tl::num::log_sum_exp).
template <class T>
void math_rows(const Context& ctx, RowFn fn, MatrixView<const T> X, MatrixView<T> out);

}  // namespace tl
