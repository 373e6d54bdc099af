// Bindings of KMeans.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "convert.hpp"
#include "twinlearn/cluster/kmeans.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostF64 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

tl::KMeansInit parse_init(const std::string& s) {
  if (s == "k-means++") return tl::KMeansInit::KMeansPlusPlus;
  if (s == "random") return tl::KMeansInit::Random;
  if (s == "array") return tl::KMeansInit::Given;
  throw tl::ValueError("init must be 'k-means++', 'random' or 'array'; got '" + s + "'");
}

const char* init_name(tl::KMeansInit i) {
  switch (i) {
    case tl::KMeansInit::KMeansPlusPlus: return "k-means++";
    case tl::KMeansInit::Random: return "random";
    case tl::KMeansInit::Given: return "array";
  }
  return "?";
}

// kmeans_fit's result: the core's KMeansResult with the arrays it filled.
struct KMeansFit {
  nb::object centers;  // k x d, X's dtype
  nb::object labels;   // n, int32
  tl::KMeansResult info;
};

// kmeans_predict's result.
struct KMeansLabels {
  nb::object labels;   // n, int32
  nb::object inertia;  // float, or None when not asked for
};

// kmeans_assign_sums' result.
struct KMeansSums {
  nb::object labels;  // n, int32
  double inertia = 0.0;
  nb::object sums;  // k x d, float64
  nb::object wsum;  // k, float64
};

// kmeans_plusplus' result.
struct KMeansSeeds {
  nb::object centers;  // k x d, X's dtype
  nb::object indices;  // k, int64
};

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

TL_BINDINGS(cluster) {
  params_class<tl::KMeansParams>(m, "KMeansParams", "Parameters of kmeans_fit (twinlearn/cluster/kmeans.hpp).")
      .field("n_clusters", &tl::KMeansParams::n_clusters, "k >= 1")
      .enum_field("init", &tl::KMeansParams::init, parse_init, init_name, "'k-means++', 'random' or 'array'")
      .field("n_init", &tl::KMeansParams::n_init, "runs; the one of lowest inertia is kept")
      .field("max_iter", &tl::KMeansParams::max_iter, "Lloyd iterations per run")
      .field("tol", &tl::KMeansParams::tol, "absolute: compared with the sum of squared center shifts")
      .field("seed", &tl::KMeansParams::seed, "of the counter-based generator")
      .field("n_local_trials", &tl::KMeansParams::n_local_trials, "k-means++ candidates; 0 = 2 + int(log(k))")
      .done();
  result_class<KMeansFit>(m, "KMeansFit", "Result of kmeans_fit.")
      .field("centers", &KMeansFit::centers, "k x d, X's dtype")
      .field("labels", &KMeansFit::labels, "n, int32")
      .computed("inertia", [](const KMeansFit& r) { return r.info.inertia; })
      .computed("n_iter", [](const KMeansFit& r) { return r.info.n_iter; })
      .computed("best_init", [](const KMeansFit& r) { return r.info.best_init; }, "which run was kept")
      .computed("n_distinct", [](const KMeansFit& r) { return r.info.n_distinct; },
                "clusters holding at least one label")
      .computed("delivered", [](const KMeansFit& r) { return std::string(tl::to_string(r.info.delivered)); },
                "the numeric mode the fit delivered")
      .done();
  result_class<KMeansLabels>(m, "KMeansLabels", "Result of kmeans_predict.")
      .field("labels", &KMeansLabels::labels, "n, int32: the nearest center of each row")
      .field("inertia", &KMeansLabels::inertia, "weighted sum of squared distances, or None when not asked for")
      .done();
  result_class<KMeansSums>(m, "KMeansSums", "Result of kmeans_assign_sums.")
      .field("labels", &KMeansSums::labels, "n, int32")
      .field("inertia", &KMeansSums::inertia, "weighted sum of squared distances")
      .field("sums", &KMeansSums::sums, "k x d float64: weighted sum of the rows of each cluster")
      .field("wsum", &KMeansSums::wsum, "k float64: weight of each cluster")
      .done();
  result_class<KMeansSeeds>(m, "KMeansSeeds", "Result of kmeans_plusplus.")
      .field("centers", &KMeansSeeds::centers, "k x d, X's dtype")
      .field("indices", &KMeansSeeds::indices, "k, int64: the rows chosen")
      .done();

  // kmeans_fit(ctx, X, w, x_mean, init_centers, params: KMeansParams) -> KMeansFit
  m.def(
      "kmeans_fit",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, std::optional<HostF64> x_mean,
         std::optional<Arr> init_centers, const tl::KMeansParams& p) {
        const std::int64_t n_clusters = p.n_clusters;
        const int n_init = p.n_init;
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = optional_vector<T>(w, "sample_weight");
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
          KMeansFit r;
          {
            nb::gil_scoped_release release;
            r.info = tl::kmeans_fit<T>(ctx, xv, wv, x_mean ? x_mean->data() : nullptr, ic, p, cp, lp);
          }
          r.centers = nb::cast(centers);
          r.labels = nb::cast(labels);
          return r;
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("x_mean").none(), nb::arg("init_centers").none(),
      nb::arg("params"));

  // kmeans_predict(ctx, X, w, centers, want_inertia) -> KMeansLabels
  m.def(
      "kmeans_predict",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, Arr centers, bool want_inertia) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = optional_vector<T>(w, "sample_weight");
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
          KMeansLabels r;
          r.labels = nb::cast(labels);
          r.inertia = want_inertia ? nb::cast(inertia) : nb::none();
          return r;
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("centers"), nb::arg("want_inertia") = false);

  // kmeans_assign_sums(ctx, X, w, centers) -> KMeansSums
  m.def(
      "kmeans_assign_sums",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, Arr centers) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = optional_vector<T>(w, "sample_weight");
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
          KMeansSums r;
          {
            nb::gil_scoped_release release;
            r.inertia = tl::kmeans_assign_sums<T>(ctx, xv, wv, cv.data, cv.rows, lp, sp, wp);
          }
          r.labels = nb::cast(labels);
          r.sums = nb::cast(sums);
          r.wsum = nb::cast(wsum);
          return r;
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("centers"));

  // kmeans_plusplus(ctx, X, w, k, seed, n_local_trials) -> KMeansSeeds
  m.def(
      "kmeans_plusplus",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> w, std::int64_t k, std::uint64_t seed,
         int n_local_trials) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = optional_vector<T>(w, "sample_weight");
          const std::size_t kk = static_cast<std::size_t>(k > 0 ? k : 0);
          T* cp = nullptr;
          std::int64_t* ip = nullptr;
          auto centers = new_array<T>({kk, static_cast<std::size_t>(xv.cols)}, &cp);
          auto idx = new_array<std::int64_t>({kk}, &ip);
          {
            nb::gil_scoped_release release;
            tl::kmeans_plusplus<T>(ctx, xv, wv, k, seed, n_local_trials, cp, ip);
          }
          KMeansSeeds r;
          r.centers = nb::cast(centers);
          r.indices = nb::cast(idx);
          return r;
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("k"), nb::arg("seed"),
      nb::arg("n_local_trials") = 0);
}
