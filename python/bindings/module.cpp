// One extension module per backend: _core (CPU) and _cuda (CPU + CUDA) are
// built from these same sources; TL_MODULE_NAME says which.
#include <nanobind/nanobind.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "convert.hpp"

#include "twinlearn/core/error.hpp"

namespace nb = nanobind;

#ifndef TL_MODULE_NAME
#error "TL_MODULE_NAME must be defined"
#endif

NB_MODULE(TL_MODULE_NAME, m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tl::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const tl::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const tl::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const tl::CudaError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const tl::NotAvailable& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  // Every family's bindings (TL_BINDINGS in bind_<family>.cpp): the core
  // (contexts, streams) first, then the others in name order.
  auto entries = tlb::bind_registry();
  std::stable_sort(entries.begin(), entries.end(), [](const tlb::BindEntry& a, const tlb::BindEntry& b) {
    const bool ca = std::strcmp(a.name, "core") == 0, cb = std::strcmp(b.name, "core") == 0;
    return ca != cb ? ca : std::strcmp(a.name, b.name) < 0;
  });
  for (const auto& e : entries) e.fn(m);
}
