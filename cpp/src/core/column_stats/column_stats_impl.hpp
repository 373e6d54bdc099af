// Backend entry points of tl::column_stats (validated inputs only).
#pragma once
#include "twinlearn/core/reduce.hpp"

namespace tl::detail {
template <class T>
void column_stats_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out);
template <class T>
void column_stats_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out);
}  // namespace tl::detail
