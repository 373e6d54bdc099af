// Vectorised access to the numeric contract's building blocks (own
// transcendentals, counter-based random draws, tie rules), mainly for tests
// that compare the CPU and CUDA backends from Python.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "convert.hpp"
#include "twinlearn/core/math_array.hpp"
#include "twinlearn/core/random.hpp"
#include "twinlearn/core/rng.hpp"
#include "twinlearn/core/ties.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

// A new 1-D NumPy array of n elements of T, and its data pointer.
template <class T>
std::pair<nb::ndarray<nb::numpy, T, nb::ndim<1>>, T*> new_numpy(std::int64_t n) {
  if (n < 0) throw tl::ValueError("the number of draws must be non-negative, got " + std::to_string(n));
  T* buf = new T[n > 0 ? n : 1];
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return {nb::ndarray<nb::numpy, T, nb::ndim<1>>(buf, {static_cast<std::size_t>(n)}, owner), buf};
}

std::string dtype_name(const nb::object& dtype) {
  return nb::cast<std::string>(nb::module_::import_("numpy").attr("dtype")(dtype).attr("name"));
}

template <class T>
nb::object ties_call(const Arr& x, const char* what, std::int64_t k, bool flag) {
  auto v = as_vector<const T>(x, "x");
  if (!v.on_host()) throw tl::ValueError(std::string(what) + ": x must be a host (NumPy) array");
  std::vector<T> c(static_cast<std::size_t>(v.size));
  for (std::int64_t i = 0; i < v.size; ++i) c[i] = v[i];
  const std::string w(what);
  if (w == "argmin") return nb::int_(tl::ties::argmin(c.data(), v.size));
  if (w == "argmax") return nb::int_(tl::ties::argmax(c.data(), v.size));
  std::vector<std::int64_t> idx =
      w == "argsort" ? tl::ties::stable_argsort(c.data(), v.size, flag) : tl::ties::top_k(c.data(), v.size, k, flag);
  auto [arr, buf] = new_numpy<std::int64_t>(static_cast<std::int64_t>(idx.size()));
  std::copy(idx.begin(), idx.end(), buf);
  return nb::cast(arr);
}

}  // namespace

TL_BINDINGS(numerics) {
  // math_apply(ctx, name, x, out): out[i] = name(x[i]); x and out float32 or
  // float64 1-D arrays of one dtype (NumPy, or CUDA arrays on ctx's device).
  m.def(
      "math_apply",
      [](const tl::Context& ctx, const std::string& name, Arr x, ArrW out) {
        const tl::MathFn fn = tl::parse_math_fn(name);
        by_float_dtype(x, "x", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          auto ov = as_vector<T>(out, "out");
          nb::gil_scoped_release release;
          tl::math_apply<T>(ctx, fn, xv, ov);
        });
      },
      nb::arg("ctx"), nb::arg("name"), nb::arg("x"), nb::arg("out"));

  // math_pow(ctx, x, y, out): out[i] = x[i] ** y[i].
  m.def(
      "math_pow",
      [](const tl::Context& ctx, Arr x, Arr y, ArrW out) {
        by_float_dtype(x, "x", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          auto yv = as_vector<const T>(y, "y");
          auto ov = as_vector<T>(out, "out");
          nb::gil_scoped_release release;
          tl::math_pow<T>(ctx, xv, yv, ov);
        });
      },
      nb::arg("ctx"), nb::arg("x"), nb::arg("y"), nb::arg("out"));

  // math_rows(ctx, name, X, out): row-wise logsumexp (out: rows x 1),
  // softmax or log_softmax (out: rows x cols).
  m.def(
      "math_rows",
      [](const tl::Context& ctx, const std::string& name, Arr X, ArrW out) {
        const tl::RowFn fn = tl::parse_row_fn(name);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto ov = as_matrix<T>(out, "out");
          nb::gil_scoped_release release;
          tl::math_rows<T>(ctx, fn, xv, ov);
        });
      },
      nb::arg("ctx"), nb::arg("name"), nb::arg("X"), nb::arg("out"));

  // rng_philox(seed, stream, block, lane=0) -> the block's four 32-bit words.
  m.def(
      "rng_philox",
      [](std::uint64_t seed, std::uint64_t stream, std::uint64_t block, std::uint32_t lane) {
        const tl::rng::Block4 b = tl::rng::block(seed, stream, block, lane);
        return nb::make_tuple(b.w[0], b.w[1], b.w[2], b.w[3]);
      },
      nb::arg("seed"), nb::arg("stream"), nb::arg("block"), nb::arg("lane") = 0);

  // rng_uniform / rng_normal(ctx, seed, stream, offset, n, dtype): draws at
  // positions offset .. offset + n - 1, as a NumPy array of dtype.
  auto real_draws = [](bool normal) {
    return [normal](const tl::Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                    std::int64_t n, nb::object dtype) -> nb::object {
      const std::string dt = dtype_name(dtype);
      auto run = [&](auto tag) -> nb::object {
        using T = decltype(tag);
        auto [arr, buf] = new_numpy<T>(n);
        {
          nb::gil_scoped_release release;
          tl::VectorView<T> v(buf, n);
          if (normal)
            tl::random_normal<T>(ctx, seed, stream, offset, v);
          else
            tl::random_uniform<T>(ctx, seed, stream, offset, v);
        }
        return nb::cast(arr);
      };
      if (dt == "float32") return run(float{});
      if (dt == "float64") return run(double{});
      throw tl::TypeError("dtype must be float32 or float64, got " + dt);
    };
  };
  m.def("rng_uniform", real_draws(false), nb::arg("ctx"), nb::arg("seed"), nb::arg("stream"), nb::arg("offset"),
        nb::arg("n"), nb::arg("dtype") = nb::str("float64"));
  m.def("rng_normal", real_draws(true), nb::arg("ctx"), nb::arg("seed"), nb::arg("stream"), nb::arg("offset"),
        nb::arg("n"), nb::arg("dtype") = nb::str("float64"));

  // rng_integers(ctx, seed, stream, offset, n, high): int64 in [0, high).
  m.def(
      "rng_integers",
      [](const tl::Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, std::int64_t n,
         std::int64_t high) {
        auto [arr, buf] = new_numpy<std::int64_t>(n);
        {
          nb::gil_scoped_release release;
          tl::random_integers(ctx, seed, stream, offset, high, tl::VectorView<std::int64_t>(buf, n));
        }
        return arr;
      },
      nb::arg("ctx"), nb::arg("seed"), nb::arg("stream"), nb::arg("offset"), nb::arg("n"), nb::arg("high"));

  m.def(
      "rng_permutation",
      [](const tl::Context& ctx, std::uint64_t seed, std::uint64_t stream, std::int64_t n) {
        auto [arr, buf] = new_numpy<std::int64_t>(n);
        {
          nb::gil_scoped_release release;
          tl::random_permutation(ctx, seed, stream, tl::VectorView<std::int64_t>(buf, n));
        }
        return arr;
      },
      nb::arg("ctx"), nb::arg("seed"), nb::arg("stream"), nb::arg("n"));

  // rng_choice(ctx, seed, stream, n, k, replace): k indices from range(n).
  m.def(
      "rng_choice",
      [](const tl::Context& ctx, std::uint64_t seed, std::uint64_t stream, std::int64_t n, std::int64_t k,
         bool replace) {
        auto [arr, buf] = new_numpy<std::int64_t>(k);
        {
          nb::gil_scoped_release release;
          tl::random_choice(ctx, seed, stream, n, replace, tl::VectorView<std::int64_t>(buf, k));
        }
        return arr;
      },
      nb::arg("ctx"), nb::arg("seed"), nb::arg("stream"), nb::arg("n"), nb::arg("k"), nb::arg("replace"));

  // rng_weighted_choice(ctx, seed, stream, weights, k, replace).
  m.def(
      "rng_weighted_choice",
      [](const tl::Context& ctx, std::uint64_t seed, std::uint64_t stream, Arr weights, std::int64_t k,
         bool replace) {
        auto [arr, buf] = new_numpy<std::int64_t>(k);
        by_float_dtype(weights, "weights", [&](auto tag) {
          using T = decltype(tag);
          auto wv = as_vector<const T>(weights, "weights");
          nb::gil_scoped_release release;
          tl::random_weighted_choice<T>(ctx, seed, stream, wv, replace, tl::VectorView<std::int64_t>(buf, k));
        });
        return arr;
      },
      nb::arg("ctx"), nb::arg("seed"), nb::arg("stream"), nb::arg("weights"), nb::arg("k"), nb::arg("replace"));

  // Tie rules on host arrays (see twinlearn/core/ties.hpp).
  auto ties = [](const char* what) {
    return [what](Arr x, std::int64_t k, bool flag) {
      return by_float_dtype(x, "x", [&](auto tag) { return ties_call<decltype(tag)>(x, what, k, flag); });
    };
  };
  m.def("ties_argmin", [t = ties("argmin")](Arr x) { return t(x, 0, false); }, nb::arg("x"));
  m.def("ties_argmax", [t = ties("argmax")](Arr x) { return t(x, 0, false); }, nb::arg("x"));
  m.def("ties_argsort", [t = ties("argsort")](Arr x, bool descending) { return t(x, 0, descending); }, nb::arg("x"),
        nb::arg("descending") = false);
  m.def("ties_top_k", [t = ties("top_k")](Arr x, std::int64_t k, bool largest) { return t(x, k, largest); },
        nb::arg("x"), nb::arg("k"), nb::arg("largest") = true);
}
