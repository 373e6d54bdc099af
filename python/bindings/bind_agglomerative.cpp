// Bindings of agglomerative clustering.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <string>
#include <utility>

#include "convert.hpp"
#include "twinlearn/cluster/agglomerative.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostI64 = nb::ndarray<const std::int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using HostI64Vec = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using HostF64Vec = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Tree = std::pair<nb::ndarray<nb::numpy, std::int64_t>, nb::ndarray<nb::numpy, double>>;

template <class Fn>
Tree tree_of(std::int64_t n, Fn&& build) {
  if (n < 2) throw tl::ValueError("AgglomerativeClustering needs at least 2 samples, got " + std::to_string(n));
  std::int64_t* cp = nullptr;
  double* dp = nullptr;
  auto children = new_array<std::int64_t>({static_cast<std::size_t>(n - 1), 2}, &cp);
  auto distances = new_array<double>({static_cast<std::size_t>(n - 1)}, &dp);
  {
    nb::gil_scoped_release release;
    build(cp, dp);
  }
  return {children, distances};
}
}  // namespace

TL_BINDINGS(agglomerative) {
  // agglomerative_tree(ctx, X, metric, linkage) -> (children, distances):
  // X float64 (host or the context's device); metric 'euclidean' ('l2'),
  // 'manhattan' ('l1', 'cityblock') or 'cosine'; children (n - 1) x 2
  // int64, distances n - 1 float64.
  m.def(
      "agglomerative_tree",
      [](const tl::Context& ctx, Arr X, const std::string& metric, const std::string& linkage) {
        const tl::Metric mt = tl::parse_metric(metric, 2.0);
        const tl::Linkage lk = tl::parse_linkage(linkage);
        auto xv = as_matrix<const double>(X, "X");
        return tree_of(xv.rows, [&](std::int64_t* cp, double* dp) { tl::agglomerative_tree(ctx, xv, mt, lk, cp, dp); });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("metric"), nb::arg("linkage"));

  // agglomerative_tree_precomputed(ctx, D, linkage) -> (children, distances):
  // D a square float64 host matrix, its entries above the diagonal read.
  m.def(
      "agglomerative_tree_precomputed",
      [](const tl::Context& ctx, Arr D, const std::string& linkage) {
        const tl::Linkage lk = tl::parse_linkage(linkage);
        auto dv = as_matrix<const double>(D, "X");
        return tree_of(dv.rows, [&](std::int64_t* cp, double* dp) {
          tl::agglomerative_tree_precomputed(ctx, dv, lk, cp, dp);
        });
      },
      nb::arg("ctx"), nb::arg("D"), nb::arg("linkage"));

  // agglomerative_cut(children, n_clusters, n_leaves) -> labels (int64):
  // scikit-learn's _hc_cut of the tree.
  m.def(
      "agglomerative_cut",
      [](HostI64 children, std::int64_t n_clusters, std::int64_t n_leaves) {
        if (static_cast<std::int64_t>(children.shape(0)) != n_leaves - 1 || children.shape(1) != 2)
          throw tl::ValueError("children must have shape (n_leaves - 1, 2)");
        std::int64_t* lp = nullptr;
        auto labels = new_array<std::int64_t>({static_cast<std::size_t>(n_leaves > 0 ? n_leaves : 0)}, &lp);
        tl::agglomerative_cut(n_clusters, n_leaves, children.data(), lp);
        return labels;
      },
      nb::arg("children"), nb::arg("n_clusters"), nb::arg("n_leaves"));
  // agglomerative_tree_structured(X, precomputed, metric, linkage, offsets,
  // indices, n_nodes) -> (children, distances, parent): scikit-learn's
  // connectivity-constrained ward / complete / average tree on the host; X
  // float64 data (or the square distance matrix with precomputed), the graph
  // CSR (int64, indices ascending in each row, symmetric, connected).
  m.def(
      "agglomerative_tree_structured",
      [](Arr X, bool precomputed, const std::string& metric, const std::string& linkage, HostI64Vec offsets,
         HostI64Vec indices, std::int64_t n_nodes, bool float32_weights) {
        const tl::Metric mt = precomputed ? tl::Metric{} : tl::parse_metric(metric, 2.0);
        const tl::Linkage lk = tl::parse_linkage(linkage);
        auto xv = as_matrix<const double>(X, "X");
        const std::int64_t n = xv.rows;
        if (static_cast<std::int64_t>(offsets.shape(0)) != n + 1)
          throw tl::ValueError("connectivity: offsets must have n_samples + 1 entries");
        if (static_cast<std::int64_t>(indices.shape(0)) < offsets.data()[n])
          throw tl::ValueError("connectivity: indices shorter than the offsets say");
        if (n_nodes <= n || n_nodes > 2 * n - 1) throw tl::ValueError("n_nodes out of range");
        std::int64_t *cp = nullptr, *pp = nullptr;
        double* dp = nullptr;
        const auto steps = static_cast<std::size_t>(n_nodes - n);
        auto children = new_array<std::int64_t>({steps, 2}, &cp);
        auto distances = new_array<double>({steps}, &dp);
        auto parent = new_array<std::int64_t>({static_cast<std::size_t>(n_nodes)}, &pp);
        {
          nb::gil_scoped_release release;
          tl::agglomerative_tree_structured(xv, precomputed, mt, lk, offsets.data(), indices.data(), n_nodes,
                                            float32_weights, cp, dp, pp);
        }
        return nb::make_tuple(children, distances, parent);
      },
      nb::arg("X"), nb::arg("precomputed"), nb::arg("metric"), nb::arg("linkage"), nb::arg("offsets"),
      nb::arg("indices"), nb::arg("n_nodes"), nb::arg("float32_weights") = false);

  // agglomerative_edge_distances(X, precomputed, metric, rows, cols) -> w:
  // the structured trees' pair distances of the edges rows[e] - cols[e]
  // (rounded to float32 with float32_weights).
  m.def(
      "agglomerative_edge_distances",
      [](Arr X, bool precomputed, const std::string& metric, HostI64Vec rows, HostI64Vec cols, bool float32_weights) {
        const tl::Metric mt = precomputed ? tl::Metric{} : tl::parse_metric(metric, 2.0);
        auto xv = as_matrix<const double>(X, "X");
        if (rows.shape(0) != cols.shape(0)) throw tl::ValueError("rows and cols must have the same length");
        double* wp = nullptr;
        auto w = new_array<double>({rows.shape(0)}, &wp);
        {
          nb::gil_scoped_release release;
          tl::agglomerative_edge_distances(xv, precomputed, mt, rows.data(), cols.data(),
                                           static_cast<std::int64_t>(rows.shape(0)), float32_weights, wp);
        }
        return w;
      },
      nb::arg("X"), nb::arg("precomputed"), nb::arg("metric"), nb::arg("rows"), nb::arg("cols"),
      nb::arg("float32_weights") = false);

  // agglomerative_label_edges(n, a, b, w) -> (children, distances):
  // scikit-learn's _single_linkage_label of n - 1 spanning-tree edges.
  m.def(
      "agglomerative_label_edges",
      [](std::int64_t n, HostI64Vec a, HostI64Vec b, HostF64Vec w) {
        if (n < 2) throw tl::ValueError("AgglomerativeClustering needs at least 2 samples");
        const auto m = static_cast<std::size_t>(n - 1);
        if (a.shape(0) != m || b.shape(0) != m || w.shape(0) != m)
          throw tl::ValueError("a spanning tree of n nodes has n - 1 edges");
        return tree_of(n, [&](std::int64_t* cp, double* dp) {
          tl::agglomerative_label_edges(n, a.data(), b.data(), w.data(), cp, dp);
        });
      },
      nb::arg("n"), nb::arg("a"), nb::arg("b"), nb::arg("w"));
}
