// Shared pieces of tl::linalg::matmul and prepare_rows (order and modes:
// twinlearn/linalg/matmul.hpp).
#pragma once
#include <cstdint>

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/linalg/matmul.hpp"

namespace tl::linalg::detail {

// One entry of Z: (x - offset) * sqrt(w), each step one IEEE operation in T;
// a NaN result is the canonical quiet NaN (the backends' NaN payloads differ).
template <class T>
TL_HD T prepared(T x, const T* offset, std::int64_t col, bool weighted, T sqrt_w) {
  T v = x;
  if (offset) v = num::sub(v, offset[col]);
  if (weighted) v = num::mul(v, sqrt_w);
  return num::canonical(v);
}

// Backend entry points (validated, non-empty).
template <class T>
NumericMode matmul_cpu(const Context& ctx, MatrixView<const T> A, bool ta, MatrixView<const T> B, bool tb,
                       MatrixView<T> C);
template <class T>
NumericMode matmul_cuda(const Context& ctx, MatrixView<const T> A, bool ta, MatrixView<const T> B, bool tb,
                        MatrixView<T> C);
template <class T>
void prepare_rows_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                      bool transpose, MatrixView<T> out);
template <class T>
void prepare_rows_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                       bool transpose, MatrixView<T> out);

}  // namespace tl::linalg::detail
