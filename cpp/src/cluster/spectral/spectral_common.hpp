// Math of spectral_normalize shared by both backends
// (twinlearn/cluster/spectral.hpp).
#pragma once
#include "twinlearn/cluster/spectral.hpp"
#include "twinlearn/core/lane_reduce.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::detail {

// deg_i of row i (a: the row, n entries): the off-diagonal sum in lane order.
template <class T>
TL_HD double spectral_degree(const T* a, std::int64_t n, std::int64_t i) {
  auto term = [&](std::int64_t j) { return j == i ? 0.0 : static_cast<double>(a[j]); };
  return lane_reduce(n, 0.0, term, lane_ops::Add{});
}

// dd_i from deg_i: sqrt, and 1 for an isolated node. A negative degree gives
// NaN (reported by the caller).
TL_HD double spectral_sqrt_degree(double deg) { return deg == 0.0 ? 1.0 : tl::num::sqrt(deg); }

template <class T>
TL_HD T spectral_entry(T a, double dd_i, double dd_j, bool diag) {
  if (diag) return T(1);
  return static_cast<T>(tl::num::div(tl::num::div(static_cast<double>(a), dd_j), dd_i));
}

template <class T>
void spectral_normalize_cpu(const Context& ctx, MatrixView<const T> A, MatrixView<T> S, double* dd);
template <class T>
void spectral_normalize_cuda(const Context& ctx, MatrixView<const T> A, MatrixView<T> S, double* dd);

}  // namespace tl::detail
