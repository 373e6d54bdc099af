#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/optional.h>

#include <stdexcept>
#include <vector>

#include "convert.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/reduce.hpp"
#include "twinlearn/core/runtime.hpp"

namespace nb = nanobind;
using namespace tlb;

TL_BINDINGS(core) {
#if TWINLEARN_WITH_CUDA
  m.attr("has_cuda") = true;
#else
  m.attr("has_cuda") = false;
#endif
  m.attr("version") = TWINLEARN_VERSION;

  nb::class_<tl::Context>(m, "Context")
      .def(
          "__init__",
          [](tl::Context* self, const std::string& device, int n_threads, const std::string& mode,
             std::uint64_t seed, std::uintptr_t stream) {
            new (self) tl::Context(tl::parse_device(device), n_threads, tl::parse_numeric_mode(mode), seed, stream);
          },
          nb::arg("device") = "cpu", nb::arg("n_threads") = 0, nb::arg("mode") = "deterministic",
          nb::arg("seed") = 0, nb::arg("stream") = 0)
      .def_prop_ro("device", [](const tl::Context& c) { return c.device().str(); })
      .def_prop_ro("n_threads", &tl::Context::n_threads)
      .def_prop_ro("mode", [](const tl::Context& c) { return std::string(tl::to_string(c.mode())); })
      .def_prop_ro("seed", &tl::Context::seed)
      .def_prop_ro("stream", &tl::Context::stream)
      .def("__repr__", [](const tl::Context& c) {
        return "Context(device='" + c.device().str() + "', n_threads=" + std::to_string(c.n_threads()) +
               ", mode='" + tl::to_string(c.mode()) + "')";
      });

  m.def("cuda_status", [] {
    tl::CudaStatus s = tl::cuda_status();
    nb::dict d;
    d["compiled"] = s.compiled;
    d["arch"] = s.arch;
    d["runtime_version"] = s.runtime_version;
    d["driver_version"] = s.driver_version;
    d["device_count"] = s.device_count;
    d["error"] = s.error;
    return d;
  });
  m.def("cpu_isa", &tl::cpu_isa);
  m.def("cuda_devices", [] {
    nb::list out;
    for (const tl::GpuInfo& g : tl::cuda_devices()) {
      nb::dict d;
      d["id"] = g.id;
      d["name"] = g.name;
      d["compute_capability"] = nb::make_tuple(g.cc_major, g.cc_minor);
      d["total_memory"] = g.total_memory;
      d["free_memory"] = g.free_memory;
      d["multiprocessors"] = g.multiprocessors;
      out.append(d);
    }
    return out;
  });
  m.def("synchronize", [](const tl::Context& ctx) { tl::cuda_synchronize(ctx); });
  m.def("allocator_stats", [](int device) {
    tl::AllocatorStats s = tl::allocator_stats(device);
    nb::dict d;
    d["in_use_bytes"] = s.in_use_bytes;
    d["cached_bytes"] = s.cached_bytes;
    d["peak_bytes"] = s.peak_bytes;
    d["n_device_allocs"] = s.n_device_allocs;
    d["n_requests"] = s.n_requests;
    return d;
  }, nb::arg("device") = 0);
  m.def("allocator_release_cached", &tl::allocator_release_cached, nb::arg("device") = 0);
  m.def("_device_alloc_probe", [](int device, std::size_t bytes) {
    nb::gil_scoped_release release;
    tl::device_alloc_probe(device, bytes);
  });

  // column_stats(ctx, X, w=None) -> (weight_sum, mean, m2, n_finite, n_inf), each of shape (cols,)
  m.def(
      "column_stats",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w) {
        const std::int64_t cols = X.ndim() == 2 ? static_cast<std::int64_t>(X.shape(1)) : 1;
        std::vector<tl::ColStat> out(static_cast<std::size_t>(cols));
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          tl::VectorView<const T> wv;
          if (w) wv = as_vector<const T>(*w, "sample_weight");
          nb::gil_scoped_release release;
          tl::column_stats<T>(ctx, xv, wv, out.data());
        });
        return colstats_array(out.data(), cols);
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w") = nb::none());

  // Test hooks: exception mapping and exceptions thrown inside parallel regions.
  m.def("_raise", [](const std::string& kind) {
    if (kind == "value") throw tl::ValueError("test ValueError");
    if (kind == "type") throw tl::TypeError("test TypeError");
    if (kind == "memory") throw tl::OutOfMemory("test OutOfMemory");
    if (kind == "cuda") throw tl::CudaError("test CudaError");
    if (kind == "unavailable") throw tl::NotAvailable("test NotAvailable");
    throw std::runtime_error("test runtime_error");
  });
  m.def("_parallel_throw", [](const tl::Context& ctx, std::int64_t n, std::int64_t at) {
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    tl::parallel_for(ctx, n, [&](std::int64_t i) {
      seen[i] = 1;
      if (i == at) throw tl::ValueError("raised in iteration " + std::to_string(i));
    });
    return n;
  });
}
