// Bindings of agglomerative clustering.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <string>
#include <utility>

#include "convert.hpp"
#include "twinlearn/cluster/agglomerative.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostI64 = nb::ndarray<const std::int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
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
}
