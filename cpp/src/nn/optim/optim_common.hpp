// Shared by the CPU and CUDA backends of the optimizers: the per-step scalars
// and the per-element update functions (twinlearn/nn/optim.hpp gives the
// rules), and the chunk table both backends walk.
#pragma once
#include <cstdint>
#include <vector>

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/nn/optim.hpp"

namespace tl::optim_detail {

// The scalars of one step, rounded to float once on the host.
struct Scalars {
  int kind = 0;  // OptimKind, or kScale
  bool maximize = false, nesterov = false, amsgrad = false, first = false;
  bool has_wd = false, has_momentum = false;
  float neg_lr = 0.0f;          // SGD: -lr
  float wd = 0.0f;              // SGD, Adam: the L2 term's factor
  float momentum = 0.0f;        // SGD
  float one_minus_damp = 1.0f;  // SGD
  float decay = 1.0f;           // AdamW: 1 - lr * wd
  float w1 = 0.0f;              // Adam: 1 - beta1 (lerp weight)
  float beta2 = 0.0f, one_minus_beta2 = 0.0f;
  float bc2_sqrt = 1.0f;  // sqrt(1 - beta2^t)
  float eps = 0.0f;
  float neg_step_size = 0.0f;  // -(lr / (1 - beta1^t))
  float scale = 1.0f;          // kScale: grad *= scale
};
inline constexpr int kScale = 100;

Scalars make_scalars(const OptimParams& p);

// torch's lerp: a + w (b - a) for |w| < 0.5, else b - (b - a) (1 - w).
TL_HD float lerp(float a, float b, float w) {
  const float d = tl::num::sub(b, a);
  return (w < 0.5f && w > -0.5f) ? tl::num::add(a, tl::num::mul(w, d))
                                 : tl::num::sub(b, tl::num::mul(d, tl::num::sub(1.0f, w)));
}

// One element: p the parameter, g the gradient (written by kScale only),
// a, b, c the states (state1..3; unused ones are ignored and left as they are).
TL_HD void update_values(const Scalars& s, float& p, float& g, float& a, float& b, float& c) {
  using namespace tl::num;
  if (s.kind == kScale) {
    g = mul(g, s.scale);
    return;
  }
  float gi = s.maximize ? -g : g;
  float pi = p;
  if (s.kind == static_cast<int>(OptimKind::SGD)) {
    if (s.has_wd) gi = add(gi, mul(s.wd, pi));
    if (s.has_momentum) {
      a = s.first ? gi : add(mul(a, s.momentum), mul(s.one_minus_damp, gi));
      gi = s.nesterov ? add(gi, mul(s.momentum, a)) : a;
    }
    p = add(pi, mul(s.neg_lr, gi));
    return;
  }
  if (s.kind == static_cast<int>(OptimKind::AdamW)) {
    pi = mul(pi, s.decay);
  } else if (s.has_wd) {
    gi = add(gi, mul(s.wd, pi));
  }
  a = lerp(a, gi, s.w1);
  b = add(mul(b, s.beta2), mul(mul(s.one_minus_beta2, gi), gi));
  float v = b;
  if (s.amsgrad) {
    v = (c > v || is_nan(c)) ? c : v;  // torch.maximum: NaN propagates
    c = v;
  }
  const float denom = add(div(sqrt(v), s.bc2_sqrt), s.eps);
  p = add(pi, mul(s.neg_step_size, div(a, denom)));
}

// The pointers of one tensor (null where absent; param may be null for kScale).
struct Ptrs {
  float *param, *grad, *s1, *s2, *s3;
};

// Element i of one tensor.
TL_HD void update(const Scalars& s, const Ptrs& t, std::int64_t i) {
  float p = t.param ? t.param[i] : 0.0f, g = t.grad[i];
  float a = t.s1 ? t.s1[i] : 0.0f, b = t.s2 ? t.s2[i] : 0.0f, c = t.s3 ? t.s3[i] : 0.0f;
  update_values(s, p, g, a, b, c);
  if (s.kind == kScale) {
    t.grad[i] = g;
    return;
  }
  t.param[i] = p;
  if (t.s1) t.s1[i] = a;
  if (t.s2) t.s2[i] = b;
  if (t.s3) t.s3[i] = c;
}

// The chunk table: chunk c covers elements start .. start + len - 1 of
// tensor `tensor`. Both backends walk the same table (elements are
// independent: the table only spreads the work).
inline constexpr std::int64_t kChunk = std::int64_t(1) << 16;
struct Chunk {
  std::int64_t tensor, start, len;
};
std::vector<Chunk> chunk_table(const OptimTensor* tensors, std::int64_t count);

void step_cpu(const Context& ctx, const OptimTensor* tensors, std::int64_t count, const Scalars& s);
void step_cuda(const Context& ctx, const OptimTensor* tensors, std::int64_t count, const Scalars& s);

}  // namespace tl::optim_detail
