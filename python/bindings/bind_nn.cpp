// Optimizers (twinlearn/nn/optim.hpp): one step over a list of float32
// tensors, the global gradient norm, gradient scaling. Tensors come as NumPy
// arrays (buffer protocol) or any DLPack producer (PyTorch, CuPy), never
// copied: they are updated in place.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "convert.hpp"
#include "twinlearn/nn/optim.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

tl::OptimKind parse_kind(const std::string& s) {
  if (s == "sgd") return tl::OptimKind::SGD;
  if (s == "adam") return tl::OptimKind::Adam;
  if (s == "adamw") return tl::OptimKind::AdamW;
  throw tl::ValueError("optimizer kind must be 'sgd', 'adam' or 'adamw', got '" + s + "'");
}
const char* kind_name(tl::OptimKind k) {
  switch (k) {
    case tl::OptimKind::SGD:
      return "sgd";
    case tl::OptimKind::Adam:
      return "adam";
    case tl::OptimKind::AdamW:
      return "adamw";
  }
  return "?";
}

struct Flat {
  float* data = nullptr;
  std::int64_t n = 0;
  tl::Device device{};
};

// A C-contiguous float32 array of any shape, seen flat. writable: refuse
// read-only arrays.
Flat flat_f32(nb::handle h, const std::string& name, bool writable) {
  nb::ndarray<> a;
  nb::ndarray<nb::ro> r;
  const bool ok = writable ? nb::try_cast(h, a) : nb::try_cast(h, r);
  if (!ok)
    throw tl::TypeError(name + ": expected a " + std::string(writable ? "writable " : "") +
                        "array (NumPy or DLPack), got " + std::string(nb::type_name(h.type()).c_str()));
  const auto info = [&](auto& x) {
    if (x.dtype() != nb::dtype<float>())
      throw tl::TypeError(name + ": expected a float32 array; parameters, gradients and state must all be float32");
    std::int64_t expect = 1;
    for (std::size_t d = x.ndim(); d-- > 0;) {
      if (x.size() != 0 && x.shape(d) != 1 && x.stride(d) != expect)
        throw tl::ValueError(name + ": the array must be C-contiguous");
      expect *= static_cast<std::int64_t>(x.shape(d));
    }
    return Flat{static_cast<float*>(const_cast<void*>(static_cast<const void*>(x.data()))),
                static_cast<std::int64_t>(x.size()), device_of(x, name.c_str())};
  };
  return writable ? info(a) : info(r);
}

// The tensor table from lists (params and grads of one length; each state
// list empty or of that length, entries None where absent).
std::vector<tl::OptimTensor> tensors_of(nb::list params, nb::list grads, nb::list s1, nb::list s2, nb::list s3,
                                        bool need_params, bool grads_writable) {
  const std::size_t n = grads.size();
  if (need_params && params.size() != n)
    throw tl::ValueError("got " + std::to_string(params.size()) + " parameters but " + std::to_string(n) +
                         " gradients");
  nb::list* states[3] = {&s1, &s2, &s3};
  for (int j = 0; j < 3; ++j)
    if (states[j]->size() != 0 && states[j]->size() != n)
      throw tl::ValueError("state list " + std::to_string(j + 1) + " has " + std::to_string(states[j]->size()) +
                           " entries for " + std::to_string(n) + " tensors");
  std::vector<tl::OptimTensor> out(n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::string ts = " " + std::to_string(t);
    const Flat g = flat_f32(grads[t], "grad" + ts, grads_writable);
    tl::OptimTensor& x = out[t];
    x.grad = g.data;
    x.n = g.n;
    x.device = g.device;
    auto same = [&](const Flat& f, const std::string& what) {
      if (f.n != g.n)
        throw tl::ValueError(what + ts + " has " + std::to_string(f.n) + " elements but its gradient has " +
                             std::to_string(g.n));
      if (f.device != g.device)
        throw tl::ValueError(what + ts + " is on " + f.device.str() + " but its gradient is on " + g.device.str());
      return f.data;
    };
    if (need_params) x.param = same(flat_f32(params[t], "param" + ts, true), "param");
    float** dst[3] = {&x.state1, &x.state2, &x.state3};
    const char* names[3] = {"state1", "state2", "state3"};
    for (int j = 0; j < 3; ++j)
      if (states[j]->size() && !(*states[j])[t].is_none())
        *dst[j] = same(flat_f32((*states[j])[t], std::string(names[j]) + ts, true), names[j]);
  }
  return out;
}

}  // namespace

TL_BINDINGS(nn) {
  params_class<tl::OptimParams>(m, "OptimParams", "Parameters of optim_step (twinlearn/nn/optim.hpp).")
      .enum_field("kind", &tl::OptimParams::kind, parse_kind, kind_name, "'sgd', 'adam' or 'adamw'")
      .field("lr", &tl::OptimParams::lr)
      .field("momentum", &tl::OptimParams::momentum, "SGD")
      .field("dampening", &tl::OptimParams::dampening, "SGD")
      .field("nesterov", &tl::OptimParams::nesterov, "SGD")
      .field("beta1", &tl::OptimParams::beta1, "Adam, AdamW")
      .field("beta2", &tl::OptimParams::beta2, "Adam, AdamW")
      .field("eps", &tl::OptimParams::eps, "Adam, AdamW")
      .field("amsgrad", &tl::OptimParams::amsgrad, "Adam, AdamW")
      .field("weight_decay", &tl::OptimParams::weight_decay, "L2 (SGD, Adam) or decoupled (AdamW)")
      .field("maximize", &tl::OptimParams::maximize)
      .field("step", &tl::OptimParams::step, "the step being taken, from 1")
      .done();

  // optim_step(ctx, params, grads, state1, state2, state3, params) -> None
  m.def(
      "optim_step",
      [](const tl::Context& ctx, nb::list params, nb::list grads, nb::list state1, nb::list state2, nb::list state3,
         const tl::OptimParams& p) {
        auto ts = tensors_of(params, grads, state1, state2, state3, true, false);
        nb::gil_scoped_release release;
        tl::optim_step(ctx, ts.data(), static_cast<std::int64_t>(ts.size()), p);
      },
      nb::arg("ctx"), nb::arg("params"), nb::arg("grads"), nb::arg("state1"), nb::arg("state2"), nb::arg("state3"),
      nb::arg("p"), "One optimizer step over every tensor, in place (float32, C-contiguous).");

  m.def(
      "optim_grad_sq_norm",
      [](const tl::Context& ctx, nb::list grads) {
        auto ts = tensors_of(nb::list(), grads, nb::list(), nb::list(), nb::list(), false, false);
        nb::gil_scoped_release release;
        return tl::optim_grad_sq_norm(ctx, ts.data(), static_cast<std::int64_t>(ts.size()));
      },
      nb::arg("ctx"), nb::arg("grads"), "Sum of squares of every gradient, in double (canonical order).");

  m.def(
      "optim_scale_grads",
      [](const tl::Context& ctx, nb::list grads, float coef) {
        auto ts = tensors_of(nb::list(), grads, nb::list(), nb::list(), nb::list(), false, true);
        nb::gil_scoped_release release;
        tl::optim_scale_grads(ctx, ts.data(), static_cast<std::int64_t>(ts.size()), coef);
      },
      nb::arg("ctx"), nb::arg("grads"), nb::arg("coef"), "grad *= coef (float32) for every gradient, in place.");
}
