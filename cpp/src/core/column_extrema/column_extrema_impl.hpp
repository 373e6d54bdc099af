// Backend entry points of tl::column_extrema (validated inputs only).
#pragma once
#include "twinlearn/core/colstats.hpp"
#include "twinlearn/core/extrema.hpp"

namespace tl::detail {
template <class T>
void column_extrema_cpu(const Context& ctx, MatrixView<const T> X, ColExtrema* out);
template <class T>
void column_extrema_cuda(const Context& ctx, MatrixView<const T> X, ColExtrema* out);
}  // namespace tl::detail
