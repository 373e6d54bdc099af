// Array conversion for the bindings: nanobind ndarrays (NumPy through the
// buffer protocol; CuPy, PyTorch and anything else through DLPack) become
// typed views. No data is copied here: dtype and layout conversion is the
// Python layer's job (twinlearn/_io.py), which calls in with float32 or
// float64 arrays only.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
// struct_class's __repr__ returns a std::string: its caster, wherever a struct is bound.
#include <nanobind/stl/string.h>

#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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

// -- results: NumPy arrays that own their memory ------------------------------
// The one way the bindings allocate a result: a NumPy array of `shape` over a
// new buffer (freed with the array); *data points at it for the core to fill.
template <class U>
nb::ndarray<nb::numpy, U> new_array(std::initializer_list<std::size_t> shape, U** data) {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  U* buf = new U[n > 0 ? n : 1];
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<U*>(p); });
  *data = buf;
  return nb::ndarray<nb::numpy, U>(buf, shape.size(), shape.begin(), owner);
}

// A NumPy array that takes ownership of buf (allocated with new[]).
template <class V>
nb::ndarray<nb::numpy, V> owned_array(V* buf, std::initializer_list<std::size_t> shape) {
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<V*>(p); });
  return nb::ndarray<nb::numpy, V>(buf, shape.size(), shape.begin(), owner);
}

// A rows x cols NumPy array that owns buf (allocated with new[]).
template <class V>
nb::ndarray<nb::numpy, V, nb::ndim<2>> owned_matrix(V* buf, std::size_t rows, std::size_t cols) {
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<V*>(p); });
  return nb::ndarray<nb::numpy, V, nb::ndim<2>>(buf, {rows, cols}, owner);
}

// A NumPy array of `shape` (default: 1-D) holding a copy of v.
template <class T>
nb::ndarray<nb::numpy, T> copy_vector(const std::vector<T>& v, std::initializer_list<std::size_t> shape = {}) {
  T* buf = nullptr;
  const std::size_t n = v.size();
  auto a = shape.size() ? new_array<T>(shape, &buf) : new_array<T>({n}, &buf);
  if (n) std::memcpy(buf, v.data(), n * sizeof(T));
  return a;
}

// -- parameter and result structs -----------------------------------------------
// A parameter struct of the core bound once, field by field, so Python sets
// fields by name (no positional argument lists). Every bound struct carries
// `_fields` (the names in binding order); twinlearn._native.params fills one
// and refuses a missing or unknown name, and the tests check each
// estimator's parameters against those names.
//
//   params_class<tl::KMeansParams>(m, "KMeansParams", "...")
//       .field("n_clusters", &tl::KMeansParams::n_clusters, "k >= 1")
//       .enum_field("init", &tl::KMeansParams::init, parse_init, to_string)
//       .done();
//
// Result structs use the same builder with read-only fields (result_class).
template <class S, bool Writable = true>
class struct_class {
 public:
  struct_class(nb::module_& m, const char* name, const char* doc) : cls_(m, name, doc) {
    cls_.def(nb::init<>());
  }

  template <class V>
  struct_class& field(const char* name, V S::*member, const char* doc = "") {
    if constexpr (Writable)
      cls_.def_rw(name, member, doc);
    else
      cls_.def_ro(name, member, doc);
    names_.emplace_back(name);
    return *this;
  }

  // An enum field seen from Python as its name (a string).
  template <class E, class Parse, class Name>
  struct_class& enum_field(const char* name, E S::*member, Parse parse, Name to_name, const char* doc = "") {
    if constexpr (Writable)
      cls_.def_prop_rw(
          name, [member, to_name](const S& s) { return std::string(to_name(s.*member)); },
          [member, parse](S& s, const std::string& v) { s.*member = parse(v); }, doc);
    else
      cls_.def_prop_ro(name, [member, to_name](const S& s) { return std::string(to_name(s.*member)); }, doc);
    names_.emplace_back(name);
    return *this;
  }

  // A computed read-only field (a result array held beside the core struct, say).
  template <class Get>
  struct_class& computed(const char* name, Get get, const char* doc = "") {
    cls_.def_prop_ro(name, get, doc);
    names_.emplace_back(name);
    return *this;
  }

  nb::class_<S>& done() {
    nb::list names;
    for (const auto& n : names_) names.append(nb::str(n.c_str()));
    cls_.attr("_fields") = nb::tuple(names);
    cls_.def("__repr__", [](nb::handle self) {
      std::string r = nb::cast<std::string>(nb::str(nb::type_name(self.type()))) + "(";
      bool first = true;
      for (nb::handle n : self.attr("_fields")) {
        nb::object v = self.attr(n);
        if (nb::hasattr(v, "shape")) v = nb::str("<array {}>").format(v.attr("shape"));
        r += (first ? "" : ", ") + nb::cast<std::string>(nb::str(n)) + "=" + nb::cast<std::string>(nb::repr(v));
        first = false;
      }
      return r + ")";
    });
    return cls_;
  }

 private:
  nb::class_<S> cls_;
  std::vector<std::string> names_;
};

template <class S>
using params_class = struct_class<S, true>;
template <class S>
using result_class = struct_class<S, false>;

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

// -- shapes and optional inputs --------------------------------------------------
// Rows and columns of a 1-D or 2-D array (a 1-D array is one column).
template <class A>
std::int64_t rows_of(const A& a) {
  return a.ndim() >= 1 ? static_cast<std::int64_t>(a.shape(0)) : 0;
}
template <class A>
std::int64_t cols_of(const A& a) {
  return a.ndim() == 2 ? static_cast<std::int64_t>(a.shape(1)) : 1;
}

// A view of an optional 1-D array (sample weights, say); empty when absent.
template <class T>
tl::VectorView<const T> optional_vector(const std::optional<Arr>& a, const char* name) {
  return a ? as_vector<const T>(*a, name) : tl::VectorView<const T>();
}

// -- flattened trees ----------------------------------------------------------
// The tree count of a forest flattened into node arrays: offsets (n_trees + 1
// entries, from 0, each tree at least one node) and every node array as long
// as the last offset. `fn` names the binding in the error.
template <class Offsets, class... Nodes>
std::int64_t flat_tree_count(const char* fn, const Offsets& offsets, const Nodes&... nodes) {
  TL_REQUIRE(offsets.shape(0) >= 1, tl::ValueError, fn, ": offsets must have n_trees + 1 entries");
  const std::int64_t n_trees = static_cast<std::int64_t>(offsets.shape(0)) - 1;
  const std::int64_t total = offsets.data()[n_trees];
  TL_REQUIRE(offsets.data()[0] == 0 && total >= 0 && ((static_cast<std::int64_t>(nodes.shape(0)) == total) && ...),
             tl::ValueError, fn, ": the node arrays do not match offsets");
  for (std::int64_t t = 0; t < n_trees; ++t)
    TL_REQUIRE(offsets.data()[t + 1] > offsets.data()[t], tl::ValueError, fn, ": tree ", t, " has no nodes");
  return n_trees;
}

// -- registration ---------------------------------------------------------------
// Each bind_<family>.cpp opens its bindings with TL_BINDINGS(<family>) { ... m.def(...) ... };
// the module (module.cpp) runs "core" first and then every other family in name
// order, so a new family's file is the only place that names it.
using BindFn = void (*)(nanobind::module_&);
struct BindEntry {
  const char* name;
  BindFn fn;
};
inline std::vector<BindEntry>& bind_registry() {
  static std::vector<BindEntry> entries;
  return entries;
}
struct BindRegistrar {
  BindRegistrar(const char* name, BindFn fn) { bind_registry().push_back({name, fn}); }
};

}  // namespace tlb

#define TL_BINDINGS(family)                                                                  \
  static void tl_bind_##family(nanobind::module_& m);                                        \
  static const ::tlb::BindRegistrar tl_bind_registrar_##family(#family, &tl_bind_##family); \
  static void tl_bind_##family(nanobind::module_& m)
