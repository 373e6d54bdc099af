// Isolation forest: fitting the isolation trees, scoring rows.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "convert.hpp"
#include "twinlearn/ensemble/iforest.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostF64 = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostI64 = nb::ndarray<std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;

// iforest_fit's result: the node arrays of all trees, concatenated.
struct IForestFit {
  nb::object offsets, children_left, children_right, feature, n_node_samples, depth;
  nb::object threshold, weighted_n_node_samples, path, samples, features;
};
}  // namespace

TL_BINDINGS(iforest) {
  params_class<tl::IForestParams>(m, "IForestParams", "Parameters of iforest_fit (twinlearn/ensemble/iforest.hpp).")
      .field("n_trees", &tl::IForestParams::n_trees)
      .field("first_tree", &tl::IForestParams::first_tree, "global index of the first tree (the RNG key)")
      .field("max_samples", &tl::IForestParams::max_samples, "rows drawn per tree")
      .field("max_features", &tl::IForestParams::max_features, "columns per tree")
      .field("bootstrap", &tl::IForestParams::bootstrap, "draw the rows with replacement")
      .field("seed", &tl::IForestParams::seed)
      .done();
  result_class<IForestFit>(m, "IForestFit", "Result of iforest_fit: every tree's nodes, concatenated.")
      .field("offsets", &IForestFit::offsets, "n_trees + 1, int64: tree t owns nodes offsets[t]..offsets[t+1]-1")
      .field("children_left", &IForestFit::children_left, "int64, tree-local, -1 at leaves")
      .field("children_right", &IForestFit::children_right, "int64, tree-local, -1 at leaves")
      .field("feature", &IForestFit::feature, "int64, the tree's own column index, -2 at leaves")
      .field("n_node_samples", &IForestFit::n_node_samples, "int64: distinct drawn rows reaching the node")
      .field("depth", &IForestFit::depth, "int64: the node's depth")
      .field("threshold", &IForestFit::threshold, "float64, -2 at leaves; left where x <= threshold")
      .field("weighted_n_node_samples", &IForestFit::weighted_n_node_samples, "float64: draws reaching the node")
      .field("path", &IForestFit::path, "float64: depth + c(n_node_samples)")
      .field("samples", &IForestFit::samples, "n_trees x max_samples int64: the drawn rows, in draw order")
      .field("features", &IForestFit::features, "n_trees x max_features int64: the trees' columns")
      .done();

  m.def("iforest_average_path_length", &tl::iforest_average_path_length, nb::arg("n"),
        "c(n): average path length of an unsuccessful BST search over n rows (the project's log).");

  // iforest_fit(ctx, X, weight, params) -> IForestFit
  m.def(
      "iforest_fit",
      [](const tl::Context& ctx, Arr X, std::optional<HostF64> weight, const tl::IForestParams& p) {
        const std::int64_t rows = rows_of(X);
        if (weight && static_cast<std::int64_t>(weight->shape(0)) != rows)
          throw tl::ValueError("iforest_fit: weight has " + std::to_string(weight->shape(0)) + " entries but X has " +
                               std::to_string(rows) + " rows");
        tl::IForestTrees f;
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          f = tl::iforest_fit<T>(ctx, xv, weight ? weight->data() : nullptr, p);
        });
        IForestFit r;
        r.offsets = nb::cast(copy_vector(f.offsets));
        r.children_left = nb::cast(copy_vector(f.children_left));
        r.children_right = nb::cast(copy_vector(f.children_right));
        r.feature = nb::cast(copy_vector(f.feature));
        r.n_node_samples = nb::cast(copy_vector(f.n_node_samples));
        r.depth = nb::cast(copy_vector(f.depth));
        r.threshold = nb::cast(copy_vector(f.threshold));
        r.weighted_n_node_samples = nb::cast(copy_vector(f.weighted_n_node_samples));
        r.path = nb::cast(copy_vector(f.path));
        const std::size_t nt = static_cast<std::size_t>(p.n_trees);
        r.samples = nb::cast(copy_vector(f.samples, {nt, static_cast<std::size_t>(p.max_samples)}));
        r.features = nb::cast(copy_vector(f.features, {nt, static_cast<std::size_t>(p.max_features)}));
        return r;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("weight").none(), nb::arg("params"));

  // iforest_score(ctx, X, offsets, left, right, feature, threshold, path, max_samples) -> float64 (rows,)
  m.def(
      "iforest_score",
      [](const tl::Context& ctx, Arr X, HostI64 offsets, HostI64 left, HostI64 right, HostI64 feature,
         HostF64 threshold, HostF64 path, std::int64_t max_samples) {
        const std::int64_t rows = rows_of(X);
        const std::int64_t n_trees = flat_tree_count("iforest_score", offsets, left, right, feature, threshold, path);
        double* buf = nullptr;
        auto out = new_array<double>({static_cast<std::size_t>(rows)}, &buf);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          tl::iforest_score<T>(ctx, xv, n_trees, offsets.data(), left.data(), right.data(), feature.data(),
                               threshold.data(), path.data(), max_samples, buf);
        });
        return out;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("offsets"), nb::arg("children_left"), nb::arg("children_right"),
      nb::arg("feature"), nb::arg("threshold"), nb::arg("path"), nb::arg("max_samples"));
}
