// One extension module per backend: _core (CPU) and _cuda (CPU + CUDA) are
// built from these same sources; TL_MODULE_NAME says which.
#include <nanobind/nanobind.h>

#include <new>

#include "twinlearn/core/error.hpp"

namespace nb = nanobind;

void init_core(nb::module_& m);
void init_preprocessing(nb::module_& m);
void init_cluster(nb::module_& m);
void init_neighbors(nb::module_& m);
void init_naive_bayes(nb::module_& m);
void init_reduce(nb::module_& m);
void init_numerics(nb::module_& m);
void init_linalg(nb::module_& m);
void init_ensemble(nb::module_& m);
void init_linear_model(nb::module_& m);

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
  init_core(m);
  init_preprocessing(m);
  init_cluster(m);
  init_neighbors(m);
  init_naive_bayes(m);
  init_reduce(m);
  init_numerics(m);
  init_linalg(m);
  init_ensemble(m);
  init_linear_model(m);
}
