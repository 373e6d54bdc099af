// Optimizers on the CPU: the chunk table in parallel, each chunk's elements
// in order (elements are independent, so the split changes no bit).
#include "nn/optim/optim_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::optim_detail {

void step_cpu(const Context& ctx, const OptimTensor* tensors, std::int64_t count, const Scalars& s) {
  const std::vector<Chunk> chunks = chunk_table(tensors, count);
  parallel_for(ctx, static_cast<std::int64_t>(chunks.size()), [&](std::int64_t c) {
    const Chunk& k = chunks[static_cast<std::size_t>(c)];
    const OptimTensor& t = tensors[k.tensor];
    // The grad is written by kScale only.
    const Ptrs p{t.param, const_cast<float*>(t.grad), t.state1, t.state2, t.state3};
    for (std::int64_t i = k.start; i < k.start + k.len; ++i) update(s, p, i);
  });
}

}  // namespace tl::optim_detail
