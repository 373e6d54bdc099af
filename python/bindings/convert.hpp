// Array conversion for the bindings: nanobind ndarrays (NumPy through the
// buffer protocol; CuPy, PyTorch and anything else through DLPack) become
// typed views. No data is copied here: dtype and layout conversion is the
// Python layer's job (twinlearn/_array.py), which calls in with float32 or
// float64 arrays only.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <type_traits>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/colstats.hpp"
#include "twinlearn/core/error.hpp"

namespace tlb {

namespace nb = nanobind;
using Arr = nb::ndarray<nb::ro>;  // inputs: read-only arrays accepted
using ArrW = nb::ndarray<>;       // outputs: must be writable

template <class A>
tl::Device device_of(const A& a, const char* name) {
  const int dt = a.device_type();
  if (dt == nb::device::cpu::value || dt == nb::device::cuda_host::value) return tl::Device{};
  if (dt == nb::device::cuda::value || dt == nb::device::cuda_managed::value)
    return tl::Device{tl::DeviceKind::CUDA, a.device_id()};
  throw tl::TypeError(std::string(name) + ": arrays on this device type are not supported (DLPack device type " +
                      std::to_string(dt) + ")");
}

enum class Kind { F32, F64, Other };
template <class A>
Kind kind_of(const A& a) {
  if (a.dtype() == nb::dtype<float>()) return Kind::F32;
  if (a.dtype() == nb::dtype<double>()) return Kind::F64;
  return Kind::Other;
}

template <class T, class A>
void check_dtype(const A& a, const char* name) {
  if (a.dtype() != nb::dtype<T>())
    throw tl::TypeError(std::string(name) + ": expected a " + tl::to_string(tl::dtype_of<T>::value) + " array");
}

// A view of a 1-D or 2-D array; T is const for inputs (Arr), non-const for outputs (ArrW).
template <class T, class A>
tl::MatrixView<T> as_matrix(const A& a, const char* name) {
  check_dtype<std::remove_const_t<T>>(a, name);
  if (a.ndim() != 2 && a.ndim() != 1)
    throw tl::ValueError(std::string(name) + ": expected a 1-D or 2-D array, got " + std::to_string(a.ndim()) + "-D");
  const std::int64_t rows = static_cast<std::int64_t>(a.shape(0));
  const std::int64_t cols = a.ndim() == 2 ? static_cast<std::int64_t>(a.shape(1)) : 1;
  const std::int64_t rs = a.stride(0);
  const std::int64_t cs = a.ndim() == 2 ? a.stride(1) : 1;
  return tl::MatrixView<T>(static_cast<T*>(const_cast<void*>(static_cast<const void*>(a.data()))), rows, cols, rs, cs,
                           device_of(a, name));
}

template <class T, class A>
tl::VectorView<T> as_vector(const A& a, const char* name) {
  check_dtype<std::remove_const_t<T>>(a, name);
  if (a.ndim() != 1) throw tl::ValueError(std::string(name) + ": expected a 1-D array");
  return tl::VectorView<T>(static_cast<T*>(const_cast<void*>(static_cast<const void*>(a.data()))),
                           static_cast<std::int64_t>(a.shape(0)), a.stride(0), device_of(a, name));
}

// Calls fn(T{}) with T = float or double according to the array's dtype.
template <class A, class Fn>
decltype(auto) by_float_dtype(const A& a, const char* name, Fn&& fn) {
  switch (kind_of(a)) {
    case Kind::F32: return fn(float{});
    case Kind::F64: return fn(double{});
    default: break;
  }
  throw tl::TypeError(std::string(name) + ": expected a float32 or float64 array");
}

// A rows x cols NumPy array that owns buf (allocated with new[]).
template <class V>
nanobind::ndarray<nanobind::numpy, V, nanobind::ndim<2>> owned_matrix(V* buf, std::size_t rows, std::size_t cols) {
  nanobind::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<V*>(p); });
  return nanobind::ndarray<nanobind::numpy, V, nanobind::ndim<2>>(buf, {rows, cols}, owner);
}

// Column statistics as a (5, cols) float64 NumPy array: rows weight sum,
// mean, m2, finite count, infinity count.
inline nanobind::ndarray<nanobind::numpy, double, nanobind::ndim<2>> colstats_array(const tl::ColStat* st,
                                                                                    std::int64_t cols) {
  auto* buf = new double[5 * cols];
  for (std::int64_t j = 0; j < cols; ++j) {
    buf[j] = st[j].w;
    buf[cols + j] = st[j].mean;
    buf[2 * cols + j] = st[j].m2;
    buf[3 * cols + j] = static_cast<double>(st[j].n);
    buf[4 * cols + j] = static_cast<double>(st[j].n_inf);
  }
  return owned_matrix(buf, 5, static_cast<std::size_t>(cols));
}

}  // namespace tlb
