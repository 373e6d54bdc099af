// First-order optimizers over float32 parameters (torch.optim's SGD, Adam and
// AdamW update rules), applied to many tensors in one call.
//
// Every optimizer is one per-element update function (optim_update below,
// TL_HD, shared by the CPU and CUDA backends) built from tl::num add / sub /
// mul / div / sqrt only: no contraction into FMA, no library math. The
// per-step scalars (bias corrections, step size, decay factor) are computed
// once on the host in double (tl::num::pow, tl::num::sqrt) and rounded to
// float, so both backends read the same scalars. An element's new value
// depends on nothing but that element, its gradient, its state and the
// scalars: the result is the same bits for any thread count, block count or
// device, in every numeric mode.
//
// Update rules (g the gradient, p the parameter; float arithmetic, one
// rounding per operation, in this order):
//   SGD   g = -g if maximize; g = g + wd * p (wd != 0);
//         momentum != 0: buf = g on the first step, else
//           buf = momentum * buf + (1 - dampening) * g;
//           g = g + momentum * buf (nesterov) or g = buf;
//         p = p + (-lr) * g.
//   Adam  g = -g if maximize; g = g + wd * p (Adam, wd != 0);
//   AdamW p = p * (1 - lr * wd) (AdamW);
//         m = lerp(m, g, 1 - beta1) (torch's lerp: a + w (b - a) for w < 0.5,
//             else b - (b - a) (1 - w));
//         v = v * beta2 + ((1 - beta2) * g) * g;
//         amsgrad: vmax = max(vmax, v), v' = vmax, else v' = v;
//         denom = sqrt(v') / sqrt(1 - beta2^t) + eps;
//         p = p + (-(lr / (1 - beta1^t))) * (m / denom).
//
// Clipping: optim_grad_sq_norm is the sum of squares of all gradients in
// double: each tensor's by the canonical reduction (reduce_dot_double,
// core/reduce.hpp), the per-tensor sums added in tensor order.
#pragma once
#include <cstdint>

#include "twinlearn/core/context.hpp"

namespace tl {

enum class OptimKind : int { SGD = 0, Adam = 1, AdamW = 2 };

struct OptimParams {
  OptimKind kind = OptimKind::SGD;
  double lr = 1e-3;
  double momentum = 0.0;   // SGD
  double dampening = 0.0;  // SGD
  bool nesterov = false;   // SGD
  double beta1 = 0.9;      // Adam, AdamW
  double beta2 = 0.999;    // Adam, AdamW
  double eps = 1e-8;       // Adam, AdamW
  bool amsgrad = false;    // Adam, AdamW
  double weight_decay = 0.0;
  bool maximize = false;
  // The step being taken, counted from 1 (Adam's bias correction; SGD: the
  // momentum buffer starts as the gradient when step == 1).
  std::int64_t step = 1;
};

// One tensor of the call: n float32 elements each (contiguous), all on the
// host or all on the context's device. state1: SGD's momentum buffer (null
// when momentum == 0), Adam's exp_avg; state2: Adam's exp_avg_sq; state3:
// Adam's max_exp_avg_sq (null unless amsgrad).
struct OptimTensor {
  float* param = nullptr;
  const float* grad = nullptr;
  float* state1 = nullptr;
  float* state2 = nullptr;
  float* state3 = nullptr;
  std::int64_t n = 0;
  Device device{};
};

// One step of the optimizer over every tensor, in place.
void optim_step(const Context& ctx, const OptimTensor* tensors, std::int64_t count, const OptimParams& p);

// Sum of the squares of every tensor's grad (n elements), in double.
double optim_grad_sq_norm(const Context& ctx, const OptimTensor* tensors, std::int64_t count);

// grad = grad * coef (float) for every tensor (the grads are written: the
// tensors' grad pointers must be writable).
void optim_scale_grads(const Context& ctx, const OptimTensor* tensors, std::int64_t count, float coef);

}  // namespace tl
