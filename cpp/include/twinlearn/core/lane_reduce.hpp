// The canonical order of a reduction along one row (docs/NUMERICS.md, rule 1),
// shaped after a CUDA warp so that the GPU computes it with one warp per row.
//
// Lane l (0 <= l < 32) folds f(l), f(l + 32), f(l + 64), ... in that order,
// starting from `init`. The 32 lane partials are then combined by the fixed
// halving tree of a shuffle-down reduction: for off = 16, 8, 4, 2, 1,
// lane l < off takes op(lane l, lane l + off). The result is lane 0. The
// shape depends on nothing but the row length, never on thread counts.
//
// lane_reduce() below is the reference, run by the CPU backend (and usable
// in device code by one thread); core/cuda/lane_reduce.cuh is the same order
// computed by a whole warp.
#pragma once
#include <cstdint>

#include "twinlearn/core/numerics.hpp"

namespace tl {

inline constexpr int kLanes = 32;

template <class F, class Op>
TL_HD double lane_reduce(std::int64_t n, double init, F f, Op op) {
  double acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = init;
  for (std::int64_t j = 0; j < n; ++j) acc[j % kLanes] = op(acc[j % kLanes], f(j));
  for (int off = kLanes / 2; off > 0; off >>= 1)
    for (int l = 0; l < off; ++l) acc[l] = op(acc[l], acc[l + off]);
  return acc[0];
}

namespace lane_ops {
struct Add {
  TL_HD double operator()(double a, double b) const { return tl::num::add(a, b); }
};
// For non-negative, non-NaN operands.
struct Max {
  TL_HD double operator()(double a, double b) const { return b > a ? b : a; }
};
}  // namespace lane_ops

}  // namespace tl
