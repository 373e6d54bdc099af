// The Gram matrix of (optionally centred and weighted) rows:
//
//   Z[i, j] = (X[i, j] - offset[j]) * sqrt(w[i])      X: n x d
//   G = Zᵀ Z                                           G: d x d, symmetric
//
// This is what PCA (covariance of centred data) and linear models (XᵀWX)
// build on. Z is formed by tl::linalg::prepare_rows and the product by the
// canonical GEMM on Zᵀ (twinlearn/linalg/matmul.hpp): G[i, j] is one fma
// chain in T over the rows in increasing order, the same bits on the CPU and
// CUDA backends. G[i, j] and G[j, i] multiply the same pairs in the same
// order, so G is exactly symmetric. In fast mode on the CUDA backend the
// product is cuBLAS's, over row chunks (a strided batched GEMM) whose
// partials are summed in double, the upper triangle mirrored (symmetric too).
//
// X lives on the host or the context's device; offset (d entries, or null)
// is host memory; w (n entries, or w.data == nullptr) lives where X does;
// G (d x d) may be on the host or the device. Returns the mode honoured.
#pragma once
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numeric_mode.hpp"

namespace tl::linalg {

template <class T>
NumericMode gram(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset, MatrixView<T> G);

}  // namespace tl::linalg
