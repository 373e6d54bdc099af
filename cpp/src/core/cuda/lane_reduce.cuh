// The canonical row reduction of twinlearn/core/lane_reduce.hpp, computed by
// one full warp: lane l folds f(l), f(l + 32), ... and the partials are
// combined with __shfl_down_sync at offsets 16, 8, 4, 2, 1, which is exactly
// the reference's halving tree. All 32 lanes of the warp must call it; every
// lane gets the result.
#pragma once
#include <cuda_runtime.h>

#include "twinlearn/core/lane_reduce.hpp"

namespace tl::detail {

template <class F, class Op>
__device__ __forceinline__ double warp_lane_reduce(std::int64_t n, double init, F f, Op op) {
  const int lane = static_cast<int>(threadIdx.x) & (kLanes - 1);
  double acc = init;
  for (std::int64_t j = lane; j < n; j += kLanes) acc = op(acc, f(j));
  for (int off = kLanes / 2; off > 0; off >>= 1) {
    const double other = __shfl_down_sync(0xffffffffu, acc, off);
    acc = op(acc, other);
  }
  return __shfl_sync(0xffffffffu, acc, 0);
}

}  // namespace tl::detail
