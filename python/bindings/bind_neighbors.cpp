// Bindings of pairwise distances and nearest-neighbour search.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "convert.hpp"
#include "twinlearn/neighbors/distance.hpp"
#include "twinlearn/neighbors/kde.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

// A metric as Python names it: tl::parse_metric's name and p (minkowski
// only), and the form of (sq)euclidean distances.
struct MetricParams {
  std::string metric = "euclidean";
  double p = 2.0;
  bool direct = false;

  tl::Metric parse() const {
    tl::Metric mt = tl::parse_metric(metric, p);
    mt.direct = direct;
    return mt;
  }
};

// knn_search's result.
struct KnnResult {
  nb::object distances;  // m x k, the index's dtype
  nb::object indices;    // m x k, int64
};

// radius_search's result: query i's neighbours are entries offsets[i] to
// offsets[i + 1] of indices and distances.
struct RadiusResult {
  nb::object offsets;    // m + 1, int64
  nb::object indices;    // int64, ascending within each query
  nb::object distances;  // the index's dtype
};

}  // namespace

TL_BINDINGS(neighbors) {
  params_class<MetricParams>(m, "MetricParams", "A distance metric (twinlearn/neighbors/distance.hpp).")
      .field("metric", &MetricParams::metric,
             "'euclidean', 'l2', 'sqeuclidean', 'manhattan', 'cityblock', 'l1', 'cosine', 'chebyshev', 'minkowski'")
      .field("p", &MetricParams::p, "minkowski's p >= 1 (1, 2 and infinity: manhattan, euclidean, chebyshev)")
      .field("direct", &MetricParams::direct,
             "(sq)euclidean by differences (accurate) rather than dot products (fast)")
      .done();
  result_class<KnnResult>(m, "KnnResult", "Result of knn_search.")
      .field("distances", &KnnResult::distances, "m x k, the index's dtype, nearest first")
      .field("indices", &KnnResult::indices, "m x k, int64; equal distances in increasing index order")
      .done();
  result_class<RadiusResult>(m, "RadiusResult", "Result of radius_search.")
      .field("offsets", &RadiusResult::offsets, "m + 1, int64: query i's entries are offsets[i]:offsets[i + 1]")
      .field("indices", &RadiusResult::indices, "int64, ascending within each query")
      .field("distances", &RadiusResult::distances, "the index's dtype")
      .done();

  // pairwise_distances(ctx, X, Y, metric: MetricParams, out): out[i, j] = distance(X[i], Y[j]).
  m.def(
      "pairwise_distances",
      [](const tl::Context& ctx, Arr X, Arr Y, const MetricParams& metric, ArrW out) {
        const tl::Metric mt = metric.parse();
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto yv = as_matrix<const T>(Y, "Y");
          auto ov = as_matrix<T>(out, "out");
          nb::gil_scoped_release release;
          tl::pairwise_distances<T>(ctx, xv, yv, mt, ov);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("Y"), nb::arg("metric"), nb::arg("out"));

  // knn_search(ctx, index, queries, metric: MetricParams, k) -> KnnResult
  m.def(
      "knn_search",
      [](const tl::Context& ctx, Arr index, Arr queries, const MetricParams& metric, std::int64_t k) {
        const tl::Metric mt = metric.parse();
        return by_float_dtype(index, "X", [&](auto tag) {
          using T = decltype(tag);
          auto iv = as_matrix<const T>(index, "the fitted data");
          auto qv = as_matrix<const T>(queries, "X");
          const std::size_t m = static_cast<std::size_t>(qv.rows), kk = static_cast<std::size_t>(k > 0 ? k : 0);
          T* dp = nullptr;
          std::int64_t* ip = nullptr;
          auto dist = new_array<T>({m, kk}, &dp);
          auto ind = new_array<std::int64_t>({m, kk}, &ip);
          {
            nb::gil_scoped_release release;
            tl::knn_search<T>(ctx, iv, qv, mt, k, dp, ip);
          }
          KnnResult r;
          r.distances = nb::cast(dist);
          r.indices = nb::cast(ind);
          return r;
        });
      },
      nb::arg("ctx"), nb::arg("index"), nb::arg("queries"), nb::arg("metric"), nb::arg("k"));

  // radius_search(ctx, index, queries, metric: MetricParams, radius) -> RadiusResult
  m.def(
      "radius_search",
      [](const tl::Context& ctx, Arr index, Arr queries, const MetricParams& metric, double radius) {
        const tl::Metric mt = metric.parse();
        return by_float_dtype(index, "X", [&](auto tag) {
          using T = decltype(tag);
          auto iv = as_matrix<const T>(index, "the fitted data");
          auto qv = as_matrix<const T>(queries, "X");
          std::int64_t* op = nullptr;
          auto offsets = new_array<std::int64_t>({static_cast<std::size_t>(qv.rows + 1)}, &op);
          std::vector<std::int64_t> ind;
          std::vector<T> dist;
          {
            nb::gil_scoped_release release;
            tl::radius_search<T>(ctx, iv, qv, mt, radius, op, ind, dist);
          }
          RadiusResult r;
          r.offsets = nb::cast(offsets);
          r.indices = nb::cast(copy_vector(ind));
          r.distances = nb::cast(copy_vector(dist));
          return r;
        });
      },
      nb::arg("ctx"), nb::arg("index"), nb::arg("queries"), nb::arg("metric"), nb::arg("radius"));

  // kde_log_sum(ctx, train, weights, queries, metric: MetricParams, kernel, bandwidth)
  //   -> log of each query's (weighted) kernel sum, m entries, the data's dtype
  //   (twinlearn/neighbors/kde.hpp). weights: None or n host values.
  m.def(
      "kde_log_sum",
      [](const tl::Context& ctx, Arr train, std::optional<Arr> weights, Arr queries, const MetricParams& metric,
         const std::string& kernel, double bandwidth) {
        const tl::Metric mt = metric.parse();
        const tl::KdeKernel kk = tl::parse_kde_kernel(kernel);
        return by_float_dtype(train, "X", [&](auto tag) {
          using T = decltype(tag);
          auto tv = as_matrix<const T>(train, "the fitted data");
          auto qv = as_matrix<const T>(queries, "X");
          auto wv = optional_vector<T>(weights, "sample_weight");
          TL_REQUIRE(!weights || (wv.on_host() && wv.size == tv.rows && wv.is_contiguous()), tl::ValueError,
                     "sample_weight: ", tv.rows, " contiguous host values expected");
          T* op = nullptr;
          auto out = new_array<T>({static_cast<std::size_t>(qv.rows)}, &op);
          {
            nb::gil_scoped_release release;
            tl::kde_log_sum<T>(ctx, tv, weights ? wv.data : nullptr, qv, mt, kk, bandwidth, op);
          }
          return nb::object(nb::cast(out));
        });
      },
      nb::arg("ctx"), nb::arg("train"), nb::arg("weights").none(), nb::arg("queries"), nb::arg("metric"),
      nb::arg("kernel"), nb::arg("bandwidth"));
}
