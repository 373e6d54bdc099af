// The walk of one column over one chunk of rows that the column reductions
// share (column statistics, column extrema): fn(i, x) for rows i = r0 ..
// r1 - 1 in increasing order, x = X[i, j] of the row-major rows x cols X,
// with U rows' loads issued before their values are handed on.
#pragma once
#include <cstdint>

namespace tl::detail {

template <int U, class T, class Fn>
__device__ __forceinline__ void for_chunk_rows(const T* __restrict__ X, std::int64_t cols, std::int64_t j,
                                               std::int64_t r0, std::int64_t r1, Fn&& fn) {
  std::int64_t i = r0;
  for (; i + U <= r1; i += U) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = X[(i + u) * cols + j];
#pragma unroll
    for (int u = 0; u < U; ++u) fn(i + u, v[u]);
  }
  for (; i < r1; ++i) fn(i, X[i * cols + j]);
}

}  // namespace tl::detail
