// Bindings of DBSCAN.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <vector>

#include "convert.hpp"
#include "twinlearn/cluster/dbscan.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostF64 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using HostI64 = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// dbscan_fit's and dbscan_graph's result.
struct DbscanFit {
  nb::object labels;                // n, int64: cluster id or -1
  nb::object core_sample_indices;   // int64, ascending
  std::int64_t n_pairs = 0;         // neighbour pairs (i, j) with j in N(i)
};

const double* weights_of(const std::optional<HostF64>& w, std::int64_t n) {
  if (!w) return nullptr;
  if (static_cast<std::int64_t>(w->shape(0)) != n)
    throw tl::ValueError("sample_weight has " + std::to_string(w->shape(0)) + " entries, expected " +
                         std::to_string(n));
  return w->data();
}

DbscanFit finish(std::int64_t n, const std::vector<std::uint8_t>& core,
                 std::int64_t pairs, nb::ndarray<nb::numpy, std::int64_t> labels) {
  std::vector<std::int64_t> idx;
  for (std::int64_t i = 0; i < n; ++i)
    if (core[static_cast<std::size_t>(i)]) idx.push_back(i);
  DbscanFit r;
  r.labels = nb::cast(labels);
  r.core_sample_indices = nb::cast(copy_vector(idx));
  r.n_pairs = pairs;
  return r;
}
}  // namespace

TL_BINDINGS(dbscan) {
  params_class<tl::DbscanParams>(m, "DbscanParams", "Parameters of DBSCAN (twinlearn/cluster/dbscan.hpp).")
      .field("eps", &tl::DbscanParams::eps, "> 0: neighbours are at distance <= eps")
      .field("min_samples", &tl::DbscanParams::min_samples, ">= 1: (weighted) neighbourhood size of a core point")
      .done();
  result_class<DbscanFit>(m, "DbscanFit", "Result of dbscan_fit and dbscan_graph.")
      .field("labels", &DbscanFit::labels, "n, int64: cluster id, or -1 for noise")
      .field("core_sample_indices", &DbscanFit::core_sample_indices, "int64, ascending: the core points")
      .field("n_pairs", &DbscanFit::n_pairs, "neighbour pairs of the eps-neighbourhood graph")
      .done();

  // dbscan_fit(ctx, X, w, metric, p, params) -> DbscanFit: metric and p as
  // tl::parse_metric takes them; (sq)euclidean by differences.
  m.def(
      "dbscan_fit",
      [](const tl::Context& ctx, Arr X, std::optional<HostF64> w, const std::string& metric, double p,
         const tl::DbscanParams& params) {
        tl::Metric mt = tl::parse_metric(metric, p);
        mt.direct = true;
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          const std::int64_t n = xv.rows;
          const double* wp = weights_of(w, n);
          std::int64_t* lp = nullptr;
          auto labels = new_array<std::int64_t>({static_cast<std::size_t>(n)}, &lp);
          std::vector<std::uint8_t> core(static_cast<std::size_t>(n));
          std::int64_t pairs = 0;
          {
            nb::gil_scoped_release release;
            pairs = tl::dbscan_fit<T>(ctx, xv, mt, wp, params, lp, core.data());
          }
          return finish(n, core, pairs, labels);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("w").none(), nb::arg("metric"), nb::arg("p"), nb::arg("params"));

  // dbscan_graph(ctx, offsets, indices, w, params) -> DbscanFit: the labels of
  // a given neighbourhood graph (CSR, rows strictly ascending).
  m.def(
      "dbscan_graph",
      [](const tl::Context& ctx, HostI64 offsets, HostI64 indices, std::optional<HostF64> w,
         const tl::DbscanParams& params) {
        const std::int64_t n = static_cast<std::int64_t>(offsets.shape(0)) - 1;
        if (n < 0) throw tl::ValueError("offsets must have n + 1 entries");
        if (offsets.data()[n] != static_cast<std::int64_t>(indices.shape(0)))
          throw tl::ValueError("offsets[n] must equal the number of indices");
        const double* wp = weights_of(w, n);
        std::int64_t* lp = nullptr;
        auto labels = new_array<std::int64_t>({static_cast<std::size_t>(n)}, &lp);
        std::vector<std::uint8_t> core(static_cast<std::size_t>(n));
        {
          nb::gil_scoped_release release;
          tl::dbscan_from_graph(ctx, n, offsets.data(), indices.data(), wp, params, lp, core.data());
        }
        return finish(n, core, static_cast<std::int64_t>(indices.shape(0)), labels);
      },
      nb::arg("ctx"), nb::arg("offsets"), nb::arg("indices"), nb::arg("w").none(), nb::arg("params"));
}
