// The decision function of a linear model, X · coefᵀ + intercept.
//
// Order: out[i, c] = add(chain, intercept[c]) where chain is ONE fused
// multiply-add chain in T over the features j = 0, 1, ..., d-1 in increasing
// order, starting from +0.0 (the canonical GEMM order), and a NaN result is
// stored as the canonical quiet NaN. The CPU and CUDA backends compute the
// same bits, for any thread count.
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

// X: n x d (host or the context's device); coef: t x d and intercept: t
// entries (nullptr: zero) in host memory; out: n x t (host or device).
// Returns the number of non-finite entries of X (callers that refuse NaN or
// infinity raise; the outputs are computed anyway).
template <class T>
std::int64_t linear_decision(const Context& ctx, MatrixView<const T> X, const T* coef, const T* intercept,
                             std::int64_t t, MatrixView<T> out);

}  // namespace tl
