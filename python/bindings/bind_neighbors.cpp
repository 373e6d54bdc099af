// Bindings of pairwise distances and nearest-neighbour search.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <vector>

#include "convert.hpp"
#include "twinlearn/neighbors/distance.hpp"

namespace nb = nanobind;
using namespace tlb;

void init_neighbors(nb::module_& m) {
  // pairwise_distances(ctx, X, Y, metric, p, out, direct=True): out[i, j] = distance(X[i], Y[j]);
  // direct: (sq)euclidean by differences (accurate) rather than dot products (fast).
  m.def(
      "pairwise_distances",
      [](const tl::Context& ctx, Arr X, Arr Y, const std::string& metric, double p, ArrW out, bool direct) {
        tl::Metric mt = tl::parse_metric(metric, p);
        mt.direct = direct;
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto yv = as_matrix<const T>(Y, "Y");
          auto ov = as_matrix<T>(out, "out");
          nb::gil_scoped_release release;
          tl::pairwise_distances<T>(ctx, xv, yv, mt, ov);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("Y"), nb::arg("metric"), nb::arg("p"), nb::arg("out"),
      nb::arg("direct") = true);

  // knn_search(ctx, index, queries, metric, p, k) -> (distances m x k, indices m x k int64)
  m.def(
      "knn_search",
      [](const tl::Context& ctx, Arr index, Arr queries, const std::string& metric, double p, std::int64_t k) {
        const tl::Metric mt = tl::parse_metric(metric, p);
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
          return nb::make_tuple(dist, ind);
        });
      },
      nb::arg("ctx"), nb::arg("index"), nb::arg("queries"), nb::arg("metric"), nb::arg("p"), nb::arg("k"));

  // radius_search(ctx, index, queries, metric, p, radius) -> (offsets m+1, indices, distances)
  m.def(
      "radius_search",
      [](const tl::Context& ctx, Arr index, Arr queries, const std::string& metric, double p, double radius) {
        const tl::Metric mt = tl::parse_metric(metric, p);
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
          std::int64_t* ip = nullptr;
          T* dp = nullptr;
          auto ia = new_array<std::int64_t>({ind.size()}, &ip);
          auto da = new_array<T>({dist.size()}, &dp);
          std::copy(ind.begin(), ind.end(), ip);
          std::copy(dist.begin(), dist.end(), dp);
          return nb::make_tuple(offsets, ia, da);
        });
      },
      nb::arg("ctx"), nb::arg("index"), nb::arg("queries"), nb::arg("metric"), nb::arg("p"), nb::arg("radius"));
}
