// Bindings of KMeans.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "convert.hpp"
#include "twinlearn/cluster/kmeans.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
template <class U>
nb::ndarray<nb::numpy, U> new_array(std::initializer_list<std::size_t> shape, U** data) {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  U* buf = new U[n > 0 ? n : 1];
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<U*>(p); });
  *data = buf;
  return nb::ndarray<nb::numpy, U>(buf, shape.size(), shape.begin(), owner);
}

using HostF64 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

tl::KMeansInit parse_init(const std::string& s) {
  if (s == "k-means++") return tl::KMeansInit::KMeansPlusPlus;
  if (s == "random") return tl::KMeansInit::Random;
  if (s == "array") return tl::KMeansInit::Given;
  throw tl::ValueError("init must be 'k-means++', 'random' or 'array'; got '" + s + "'");
}

template <class T>
tl::VectorView<const T> weights(const std::optional<Arr>& w) {
  return w ? as_vector<const T>(*w, "sample_weight") : tl::VectorView<const T>();
}

template <class T>
const T* host_matrix(const std::optional<Arr>& a, std::size_t expected, const char* name) {
  if (!a) return nullptr;
  check_dtype<T>(*a, name);
  if (a->device_type() != nb::device::cpu::value) throw tl::ValueError(std::string(name) + " must be a host array");
  if (a->size() != expected)
    throw tl::ValueError(std::string(name) + " has " + std::to_string(a->size()) + " entries, expected " +
                         std::to_string(expected));
  return static_cast<const T*>(a->data());
}
}  // namespace

void init_cluster(nb::module_& m) {
  // kmeans_fit(ctx, X, w, x_mean, init_centers, n_clusters, init, n_init, max_iter, tol, seed, n_local_trials)
  //   -> (centers k x d, labels int32, inertia, n_iter, best_init, delivered numeric mode,
  //       number of clusters holding a label)
  m.def(
      "kmeans_fit",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, std::optional<HostF64> x_mean,
         std::optional<Arr> init_centers, std::int64_t n_clusters, const std::string& init, int n_init, int max_iter,
         double tol, std::uint64_t seed, int n_local_trials) {
        tl::KMeansParams p;
        p.n_clusters = n_clusters;
        p.init = parse_init(init);
        p.n_init = n_init;
        p.max_iter = max_iter;
        p.tol = tol;
        p.seed = seed;
        p.n_local_trials = n_local_trials;
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = weights<T>(w);
          const std::size_t k = static_cast<std::size_t>(n_clusters > 0 ? n_clusters : 0);
          const std::size_t d = static_cast<std::size_t>(xv.cols);
          if (x_mean && static_cast<std::int64_t>(x_mean->shape(0)) != xv.cols)
            throw tl::ValueError("x_mean has the wrong length");
          const T* ic = host_matrix<T>(init_centers, static_cast<std::size_t>(n_init > 0 ? n_init : 0) * k * d,
                                       "init");
          T* cp = nullptr;
          std::int32_t* lp = nullptr;
          auto centers = new_array<T>({k, d}, &cp);
          auto labels = new_array<std::int32_t>({static_cast<std::size_t>(xv.rows)}, &lp);
          tl::KMeansResult r;
          {
            nb::gil_scoped_release release;
            r = tl::kmeans_fit<T>(ctx, xv, wv, x_mean ? x_mean->data() : nullptr, ic, p, cp, lp);
          }
          return nb::make_tuple(centers, labels, r.inertia, r.n_iter, r.best_init, tl::to_string(r.delivered),
                                r.n_distinct);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("x_mean").none(), nb::arg("init_centers").none(),
      nb::arg("n_clusters"), nb::arg("init"), nb::arg("n_init"), nb::arg("max_iter"), nb::arg("tol"),
      nb::arg("seed"), nb::arg("n_local_trials") = 0);

  // kmeans_predict(ctx, X, w, centers, want_inertia) -> (labels int32, inertia or None)
  m.def(
      "kmeans_predict",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, Arr centers, bool want_inertia) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = weights<T>(w);
          auto cv = as_matrix<const T>(centers, "cluster_centers_");
          if (!cv.on_host() || !cv.is_c_contiguous()) throw tl::ValueError("centers must be a C-contiguous host array");
          if (cv.cols != xv.cols)
            throw tl::ValueError("X has " + std::to_string(xv.cols) + " features, but the centers have " +
                                 std::to_string(cv.cols));
          std::int32_t* lp = nullptr;
          auto labels = new_array<std::int32_t>({static_cast<std::size_t>(xv.rows)}, &lp);
          double inertia = 0.0;
          {
            nb::gil_scoped_release release;
            tl::kmeans_predict<T>(ctx, xv, wv, cv.data, cv.rows, lp, want_inertia ? &inertia : nullptr);
          }
          return nb::make_tuple(labels, want_inertia ? nb::cast(inertia) : nb::none());
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("centers"), nb::arg("want_inertia") = false);

  // kmeans_assign_sums(ctx, X, w, centers) -> (labels int32, inertia, sums k x d float64, wsum k float64)
  m.def(
      "kmeans_assign_sums",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, Arr centers) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = weights<T>(w);
          auto cv = as_matrix<const T>(centers, "cluster_centers_");
          if (!cv.on_host() || !cv.is_c_contiguous()) throw tl::ValueError("centers must be a C-contiguous host array");
          if (cv.cols != xv.cols) throw tl::ValueError("X and the centers have different numbers of features");
          const std::size_t k = static_cast<std::size_t>(cv.rows), d = static_cast<std::size_t>(xv.cols);
          std::int32_t* lp = nullptr;
          double* sp = nullptr;
          double* wp = nullptr;
          auto labels = new_array<std::int32_t>({static_cast<std::size_t>(xv.rows)}, &lp);
          auto sums = new_array<double>({k, d}, &sp);
          auto wsum = new_array<double>({k}, &wp);
          double inertia = 0.0;
          {
            nb::gil_scoped_release release;
            inertia = tl::kmeans_assign_sums<T>(ctx, xv, wv, cv.data, cv.rows, lp, sp, wp);
          }
          return nb::make_tuple(labels, inertia, sums, wsum);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("centers"));

  // kmeans_plusplus(ctx, X, w, k, seed, n_local_trials) -> (centers k x d, indices int64)
  m.def(
      "kmeans_plusplus",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, std::int64_t k, std::uint64_t seed,
         int n_local_trials) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = weights<T>(w);
          const std::size_t kk = static_cast<std::size_t>(k > 0 ? k : 0);
          T* cp = nullptr;
          std::int64_t* ip = nullptr;
          auto centers = new_array<T>({kk, static_cast<std::size_t>(xv.cols)}, &cp);
          auto idx = new_array<std::int64_t>({kk}, &ip);
          {
            nb::gil_scoped_release release;
            tl::kmeans_plusplus<T>(ctx, xv, wv, k, seed, n_local_trials, cp, ip);
          }
          return nb::make_tuple(centers, idx);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("k"), nb::arg("seed"),
      nb::arg("n_local_trials") = 0);
}
