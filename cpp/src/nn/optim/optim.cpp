// Optimizers: validation, the per-step scalars, dispatch, clipping.
#include <algorithm>
#include <limits>

#include "nn/optim/optim_common.hpp"
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/reduce.hpp"

namespace tl {
namespace optim_detail {

namespace {
float to_f(double x) { return static_cast<float>(x); }
}  // namespace

Scalars make_scalars(const OptimParams& p) {
  Scalars s;
  s.kind = static_cast<int>(p.kind);
  s.maximize = p.maximize;
  s.nesterov = p.nesterov;
  s.amsgrad = p.amsgrad;
  s.first = p.step == 1;
  s.has_wd = p.weight_decay != 0.0;
  s.has_momentum = p.momentum != 0.0;
  s.neg_lr = to_f(-p.lr);
  s.wd = to_f(p.weight_decay);
  s.momentum = to_f(p.momentum);
  s.one_minus_damp = to_f(tl::num::sub(1.0, p.dampening));
  s.decay = to_f(tl::num::sub(1.0, tl::num::mul(p.lr, p.weight_decay)));
  s.w1 = to_f(tl::num::sub(1.0, p.beta1));
  s.beta2 = to_f(p.beta2);
  s.one_minus_beta2 = to_f(tl::num::sub(1.0, p.beta2));
  const double t = static_cast<double>(p.step);
  const double bc1 = tl::num::sub(1.0, tl::num::pow(p.beta1, t));
  const double bc2 = tl::num::sub(1.0, tl::num::pow(p.beta2, t));
  s.bc2_sqrt = to_f(tl::num::sqrt(bc2));
  s.eps = to_f(p.eps);
  s.neg_step_size = to_f(-tl::num::div(p.lr, bc1));
  return s;
}

std::vector<Chunk> chunk_table(const OptimTensor* tensors, std::int64_t count) {
  std::vector<Chunk> out;
  for (std::int64_t t = 0; t < count; ++t)
    for (std::int64_t s = 0; s < tensors[t].n; s += kChunk) out.push_back({t, s, std::min(kChunk, tensors[t].n - s)});
  return out;
}

namespace {

bool finite(double x) { return !tl::num::is_nan(x) && !tl::num::is_inf(x); }

// Every tensor: n >= 0, the pointers the rule needs, placement.
void check_tensors(const Context& ctx, const OptimTensor* tensors, std::int64_t count, bool need_param, int n_states,
                   bool third, const char* who) {
  TL_REQUIRE(count >= 0 && (count == 0 || tensors), ValueError, who, ": bad tensor list");
  for (std::int64_t t = 0; t < count; ++t) {
    const OptimTensor& x = tensors[t];
    TL_REQUIRE(x.n >= 0, ValueError, who, ": tensor ", t, " has a negative size");
    if (x.n == 0) continue;
    TL_REQUIRE(x.grad, ValueError, who, ": tensor ", t, " has no gradient");
    TL_REQUIRE(!need_param || x.param, ValueError, who, ": tensor ", t, " has no parameter");
    TL_REQUIRE(n_states < 1 || x.state1, ValueError, who, ": tensor ", t, " lacks its first state buffer");
    TL_REQUIRE(n_states < 2 || x.state2, ValueError, who, ": tensor ", t, " lacks its second state buffer");
    TL_REQUIRE(!third || x.state3, ValueError, who, ": tensor ", t, " lacks its max_exp_avg_sq buffer");
    check_placement(ctx, x, who);
    TL_REQUIRE(x.device == tensors[0].device, ValueError, who, ": tensor ", t, " is on ", x.device.str(),
               " but tensor 0 is on ", tensors[0].device.str(), "; all tensors of a call must share a device");
  }
}

}  // namespace
}  // namespace optim_detail

void optim_step(const Context& ctx, const OptimTensor* tensors, std::int64_t count, const OptimParams& p) {
  using optim_detail::finite;
  TL_REQUIRE(p.kind == OptimKind::SGD || p.kind == OptimKind::Adam || p.kind == OptimKind::AdamW, ValueError,
             "optim_step: unknown optimizer kind");
  TL_REQUIRE(finite(p.lr) && p.lr >= 0.0, ValueError, "optim_step: lr must be finite and >= 0, got ", p.lr);
  TL_REQUIRE(finite(p.weight_decay) && p.weight_decay >= 0.0, ValueError,
             "optim_step: weight_decay must be finite and >= 0, got ", p.weight_decay);
  TL_REQUIRE(p.step >= 1, ValueError, "optim_step: step counts from 1, got ", p.step);
  int n_states = 0;
  if (p.kind == OptimKind::SGD) {
    TL_REQUIRE(finite(p.momentum) && p.momentum >= 0.0, ValueError, "optim_step: momentum must be finite and >= 0");
    TL_REQUIRE(finite(p.dampening), ValueError, "optim_step: dampening must be finite");
    TL_REQUIRE(!p.nesterov || (p.momentum > 0.0 && p.dampening == 0.0), ValueError,
               "optim_step: nesterov momentum requires a momentum and zero dampening");
    n_states = p.momentum != 0.0 ? 1 : 0;
  } else {
    TL_REQUIRE(finite(p.beta1) && p.beta1 >= 0.0 && p.beta1 < 1.0, ValueError,
               "optim_step: beta1 must lie in [0, 1), got ", p.beta1);
    TL_REQUIRE(finite(p.beta2) && p.beta2 >= 0.0 && p.beta2 < 1.0, ValueError,
               "optim_step: beta2 must lie in [0, 1), got ", p.beta2);
    TL_REQUIRE(finite(p.eps) && p.eps >= 0.0, ValueError, "optim_step: eps must be finite and >= 0, got ", p.eps);
    n_states = 2;
  }
  optim_detail::check_tensors(ctx, tensors, count, true, n_states, p.kind != OptimKind::SGD && p.amsgrad, "optim_step");
  const optim_detail::Scalars s = optim_detail::make_scalars(p);
  ctx.dispatch([&] { optim_detail::step_cpu(ctx, tensors, count, s); },
               [&] { optim_detail::step_cuda(ctx, tensors, count, s); });
}

double optim_grad_sq_norm(const Context& ctx, const OptimTensor* tensors, std::int64_t count) {
  optim_detail::check_tensors(ctx, tensors, count, false, 0, false, "optim_grad_sq_norm");
  double total = 0.0;  // per-tensor canonical sums, added in tensor order
  for (std::int64_t t = 0; t < count; ++t) {
    if (tensors[t].n == 0) continue;
    const VectorView<const float> g(tensors[t].grad, tensors[t].n, tensors[t].device);
    total = tl::num::add(total, reduce_dot_double<float>(ctx, g, g));
  }
  return total;
}

void optim_scale_grads(const Context& ctx, const OptimTensor* tensors, std::int64_t count, float coef) {
  optim_detail::check_tensors(ctx, tensors, count, false, 0, false, "optim_scale_grads");
  optim_detail::Scalars s;
  s.kind = optim_detail::kScale;
  s.scale = coef;
  ctx.dispatch([&] { optim_detail::step_cpu(ctx, tensors, count, s); },
               [&] { optim_detail::step_cuda(ctx, tensors, count, s); });
}

}  // namespace tl
