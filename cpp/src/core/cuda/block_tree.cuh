// The canonical pairwise tree of twinlearn/core/tree.hpp computed by one
// block: level by level, element i of the next level is merge(e[2i],
// e[2i+1]) (e[n-1] carried alone when n is odd), the block's threads
// computing one level's merges in parallel, ping-ponging between two buffers
// with a barrier between levels. The same merges in the same pairing as
// tl::tree_reduce_inplace, so the same bits.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace tl::detail {

// Merges the count >= 1 values a[0..count) (b: room for (count + 1) / 2 of
// them; both buffers are overwritten). Every thread of the block calls it;
// returns the buffer (a or b) whose element 0 holds the result, valid for
// every thread.
template <class T, class Merge>
__device__ __forceinline__ T* block_tree(T* a, T* b, std::int64_t count, Merge merge) {
  T* src = a;
  T* dst = b;
  std::int64_t n = count;
  while (n > 1) {
    const std::int64_t half = n / 2;
    for (std::int64_t i = threadIdx.x; i < half; i += blockDim.x) dst[i] = merge(src[2 * i], src[2 * i + 1]);
    if ((n & 1) && threadIdx.x == 0) dst[half] = src[n - 1];
    __syncthreads();
    n = half + (n & 1);
    T* tmp = src;
    src = dst;
    dst = tmp;
  }
  return src;
}

}  // namespace tl::detail
