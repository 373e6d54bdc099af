// Backend entry points of tl::linalg::gram (validated, n > 0, d > 0).
#pragma once
#include "twinlearn/linalg/gram.hpp"

namespace tl::linalg::detail {
template <class T>
NumericMode gram_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                     MatrixView<T> G);
template <class T>
NumericMode gram_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                      MatrixView<T> G);
}  // namespace tl::linalg::detail
