// The canonical pairwise tree used to merge chunk partials (docs/NUMERICS.md,
// rule 1). Level by level, element i of the next level is merge(e[2i], e[2i+1]),
// or e[2i] alone when 2i+1 is past the end. The shape depends on the number
// of partials only, never on thread or block counts.
// One CUDA block computes the same tree level by level with block_tree
// (cpp/src/core/cuda/block_tree.cuh).
#pragma once
#include <cstdint>

#include "twinlearn/core/numerics.hpp"

namespace tl {

// Merges p[0], p[stride], ..., p[(n-1)*stride] in place; the result is left in p[0].
template <class T, class Merge>
TL_HD void tree_reduce_inplace(T* p, std::int64_t n, std::int64_t stride, Merge merge) {
  while (n > 1) {
    const std::int64_t half = n / 2;
    for (std::int64_t i = 0; i < half; ++i) p[i * stride] = merge(p[(2 * i) * stride], p[(2 * i + 1) * stride]);
    if (n & 1) p[half * stride] = p[(n - 1) * stride];
    n = half + (n & 1);
  }
}

}  // namespace tl
