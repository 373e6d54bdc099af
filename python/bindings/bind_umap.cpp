// UMAP: the layout optimisation (twinlearn/manifold/umap.hpp).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <optional>
#include <string>

#include "convert.hpp"
#include "twinlearn/manifold/umap.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostF32M = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using HostF32MRo = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostF64 = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostI64 = nb::ndarray<std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
}  // namespace

TL_BINDINGS(umap) {
  params_class<tl::UmapLayoutParams>(m, "UmapLayoutParams", "Parameters of umap_layout (twinlearn/manifold/umap.hpp).")
      .field("a", &tl::UmapLayoutParams::a, "the curve 1 / (1 + a d^(2b))")
      .field("b", &tl::UmapLayoutParams::b)
      .field("gamma", &tl::UmapLayoutParams::gamma, "repulsion strength")
      .field("initial_alpha", &tl::UmapLayoutParams::initial_alpha, "learning rate of the first epoch")
      .field("negative_sample_rate", &tl::UmapLayoutParams::negative_sample_rate)
      .field("n_epochs", &tl::UmapLayoutParams::n_epochs)
      .field("seed", &tl::UmapLayoutParams::seed)
      .field("move_other", &tl::UmapLayoutParams::move_other, "both ends of an edge move (fit)")
      .done();

  // umap_layout(ctx, head, tail, indptr, indices, epochs_per_sample, rindptr, redges, params): head in place.
  m.def(
      "umap_layout",
      [](const tl::Context& ctx, HostF32M head, std::optional<HostF32MRo> tail, HostI64 indptr, HostI64 indices,
         HostF64 eps, std::optional<HostI64> rindptr, std::optional<HostI64> redges, const tl::UmapLayoutParams& p) {
        const std::int64_t n_head = static_cast<std::int64_t>(head.shape(0)),
                           dim = static_cast<std::int64_t>(head.shape(1));
        const std::int64_t n_tail = tail ? static_cast<std::int64_t>(tail->shape(0)) : n_head;
        if (tail && static_cast<std::int64_t>(tail->shape(1)) != dim)
          throw tl::ValueError("umap_layout: head and tail have different widths");
        if (static_cast<std::int64_t>(indptr.shape(0)) != n_head + 1)
          throw tl::ValueError("umap_layout: indptr must have n_head + 1 entries");
        const std::int64_t ne = indptr.data()[n_head];
        if (static_cast<std::int64_t>(indices.shape(0)) != ne || static_cast<std::int64_t>(eps.shape(0)) != ne)
          throw tl::ValueError("umap_layout: indices and epochs_per_sample must have indptr[-1] entries");
        if (rindptr && static_cast<std::int64_t>(rindptr->shape(0)) != n_head + 1)
          throw tl::ValueError("umap_layout: rindptr must have n_head + 1 entries");
        if (redges && static_cast<std::int64_t>(redges->shape(0)) != ne)
          throw tl::ValueError("umap_layout: redges must have indptr[-1] entries");
        nb::gil_scoped_release release;
        tl::umap_layout(ctx, head.data(), n_head, tail ? tail->data() : nullptr, n_tail, dim, indptr.data(),
                        indices.data(), eps.data(), rindptr ? rindptr->data() : nullptr,
                        redges ? redges->data() : nullptr, p);
      },
      nb::arg("ctx"), nb::arg("head"), nb::arg("tail").none(), nb::arg("indptr"), nb::arg("indices"),
      nb::arg("epochs_per_sample"), nb::arg("rindptr").none(), nb::arg("redges").none(), nb::arg("params"));
}
