// Backend entry points of tl::column_select (validated inputs only).
#pragma once
#include "twinlearn/core/select.hpp"

namespace tl::detail {
template <class T>
void column_select_cpu(const Context& ctx, MatrixView<const T> X, const std::int64_t* ranks, std::int64_t k, T* out);
template <class T>
void column_select_cuda(const Context& ctx, MatrixView<const T> X, const std::int64_t* ranks, std::int64_t k, T* out);
}  // namespace tl::detail
