// Random forests and extra trees: fitting the trees, routing rows to leaves.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "convert.hpp"
#include "twinlearn/ensemble/forest.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostI32 = nb::ndarray<std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
// Targets: (rows,) or (rows, n_outputs).
using HostI32Y = nb::ndarray<std::int32_t, nb::c_contig, nb::device::cpu, nb::ro>;
using HostF64Y = nb::ndarray<double, nb::c_contig, nb::device::cpu, nb::ro>;
using HostF64 = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostI64 = nb::ndarray<std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;

tl::ForestCriterion parse_criterion(const std::string& s) {
  if (s == "gini") return tl::ForestCriterion::Gini;
  if (s == "entropy") return tl::ForestCriterion::Entropy;
  if (s == "squared_error") return tl::ForestCriterion::SquaredError;
  if (s == "poisson") return tl::ForestCriterion::Poisson;
  if (s == "absolute_error") return tl::ForestCriterion::AbsoluteError;
  throw tl::ValueError("criterion must be 'gini', 'entropy', 'squared_error', 'poisson' or 'absolute_error', got '" +
                       s + "'");
}
const char* criterion_name(tl::ForestCriterion c) {
  switch (c) {
    case tl::ForestCriterion::Gini:
      return "gini";
    case tl::ForestCriterion::Entropy:
      return "entropy";
    case tl::ForestCriterion::Poisson:
      return "poisson";
    case tl::ForestCriterion::AbsoluteError:
      return "absolute_error";
    default:
      return "squared_error";
  }
}
tl::ForestSplitter parse_splitter(const std::string& s) {
  if (s == "best") return tl::ForestSplitter::Best;
  if (s == "random") return tl::ForestSplitter::Random;
  throw tl::ValueError("splitter must be 'best' or 'random', got '" + s + "'");
}
const char* splitter_name(tl::ForestSplitter s) { return s == tl::ForestSplitter::Best ? "best" : "random"; }

// forest_fit's result: the node arrays of all trees, concatenated.
struct ForestFit {
  nb::object offsets, children_left, children_right, feature, n_node_samples;
  nb::object threshold, impurity, weighted_n_node_samples, value, in_bag;
};
}  // namespace

TL_BINDINGS(forest) {
  params_class<tl::ForestParams>(m, "ForestParams", "Parameters of forest_fit (twinlearn/ensemble/forest.hpp).")
      .enum_field("criterion", &tl::ForestParams::criterion, parse_criterion, criterion_name,
                  "'gini', 'entropy', 'squared_error', 'poisson' or 'absolute_error'")
      .enum_field("splitter", &tl::ForestParams::splitter, parse_splitter, splitter_name,
                  "'best' (random forest) or 'random' (extra trees)")
      .field("n_trees", &tl::ForestParams::n_trees)
      .field("first_tree", &tl::ForestParams::first_tree, "global index of the first tree (the RNG key)")
      .field("max_depth", &tl::ForestParams::max_depth, "-1: unlimited")
      .field("max_leaf_nodes", &tl::ForestParams::max_leaf_nodes, "-1: unlimited (depth first); else best first")
      .field("min_samples_split", &tl::ForestParams::min_samples_split)
      .field("min_samples_leaf", &tl::ForestParams::min_samples_leaf)
      .field("min_weight_fraction_leaf", &tl::ForestParams::min_weight_fraction_leaf)
      .field("min_impurity_decrease", &tl::ForestParams::min_impurity_decrease)
      .field("max_features", &tl::ForestParams::max_features, "features tried per node")
      .field("bootstrap", &tl::ForestParams::bootstrap)
      .field("n_samples_bootstrap", &tl::ForestParams::n_samples_bootstrap)
      .field("balanced_subsample", &tl::ForestParams::balanced_subsample)
      .field("seed", &tl::ForestParams::seed)
      .field("keep_in_bag", &tl::ForestParams::keep_in_bag, "return the bootstrap counts")
      .done();
  result_class<ForestFit>(m, "ForestFit", "Result of forest_fit: every tree's nodes, concatenated.")
      .field("offsets", &ForestFit::offsets, "n_trees + 1, int64: tree t owns nodes offsets[t]..offsets[t+1]-1")
      .field("children_left", &ForestFit::children_left, "int64, tree-local, -1 at leaves")
      .field("children_right", &ForestFit::children_right, "int64, tree-local, -1 at leaves")
      .field("feature", &ForestFit::feature, "int64, -2 at leaves")
      .field("n_node_samples", &ForestFit::n_node_samples, "int64: distinct training rows reaching the node")
      .field("threshold", &ForestFit::threshold, "float64, -2 at leaves; left where x <= threshold")
      .field("impurity", &ForestFit::impurity, "float64")
      .field("weighted_n_node_samples", &ForestFit::weighted_n_node_samples, "float64")
      .field("value", &ForestFit::value,
             "nodes x n_values float64: n_outputs x max(n_classes) class weights, or n_outputs means (absolute_error: "
             "medians) of y")
      .field("in_bag", &ForestFit::in_bag, "n_trees x rows int32 bootstrap counts, or None")
      .done();

  // forest_fit(ctx, X, y_class, y_reg, weight, n_classes, params) -> ForestFit
  // y_class / y_reg: (rows,) or (rows, n_outputs); n_classes: each output's
  // class count (classification) or empty (regression).
  m.def(
      "forest_fit",
      [](const tl::Context& ctx, Arr X, std::optional<HostI32Y> y_class, std::optional<HostF64Y> y_reg,
         std::optional<HostF64> weight, const std::vector<std::int64_t>& n_classes, const tl::ForestParams& p) {
        const std::int64_t rows = rows_of(X);
        auto check_len = [&](std::size_t n, const char* name) {
          if (static_cast<std::int64_t>(n) != rows)
            throw tl::ValueError(std::string("forest_fit: ") + name + " has " + std::to_string(n) +
                                 " entries but X has " + std::to_string(rows) + " rows");
        };
        std::int64_t n_outputs = 1;
        auto check_y = [&](std::size_t ndim, std::size_t len, std::size_t cols, const char* name) {
          if (ndim != 1 && ndim != 2) throw tl::ValueError(std::string("forest_fit: ") + name + " must be 1-D or 2-D");
          check_len(len, name);
          n_outputs = ndim == 2 ? static_cast<std::int64_t>(cols) : 1;
          if (n_outputs < 1) throw tl::ValueError(std::string("forest_fit: ") + name + " has no outputs");
        };
        if (y_class)
          check_y(y_class->ndim(), y_class->shape(0), y_class->ndim() == 2 ? y_class->shape(1) : 1, "y_class");
        if (y_reg) check_y(y_reg->ndim(), y_reg->shape(0), y_reg->ndim() == 2 ? y_reg->shape(1) : 1, "y_reg");
        if (weight) check_len(weight->shape(0), "weight");
        if (!n_classes.empty() && static_cast<std::int64_t>(n_classes.size()) != n_outputs)
          throw tl::ValueError("forest_fit: n_classes has " + std::to_string(n_classes.size()) + " entries but y has " +
                               std::to_string(n_outputs) + " outputs");
        tl::ForestTrees f;
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          f = tl::forest_fit<T>(ctx, xv, y_class ? y_class->data() : nullptr, y_reg ? y_reg->data() : nullptr,
                                weight ? weight->data() : nullptr, n_outputs,
                                n_classes.empty() ? nullptr : n_classes.data(), p);
        });
        const std::size_t nodes = f.children_left.size(), V = static_cast<std::size_t>(f.n_values);
        ForestFit r;
        r.offsets = nb::cast(copy_vector(f.offsets));
        r.children_left = nb::cast(copy_vector(f.children_left));
        r.children_right = nb::cast(copy_vector(f.children_right));
        r.feature = nb::cast(copy_vector(f.feature));
        r.n_node_samples = nb::cast(copy_vector(f.n_node_samples));
        r.threshold = nb::cast(copy_vector(f.threshold));
        r.impurity = nb::cast(copy_vector(f.impurity));
        r.weighted_n_node_samples = nb::cast(copy_vector(f.weighted_n_node_samples));
        r.value = nb::cast(copy_vector(f.value, {nodes, V}));
        r.in_bag =
            p.keep_in_bag
                ? nb::cast(copy_vector(f.in_bag, {static_cast<std::size_t>(p.n_trees), static_cast<std::size_t>(rows)}))
                : nb::none();
        return r;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("y_class").none(), nb::arg("y_reg").none(), nb::arg("weight").none(),
      nb::arg("n_classes"), nb::arg("params"));

  // forest_apply(ctx, X, offsets, left, right, feature, threshold) -> int64 (rows, n_trees)
  m.def(
      "forest_apply",
      [](const tl::Context& ctx, Arr X, HostI64 offsets, HostI64 left, HostI64 right, HostI64 feature,
         HostF64 threshold) {
        const std::int64_t rows = rows_of(X);
        const std::int64_t n_trees = flat_tree_count("forest_apply", offsets, left, right, feature, threshold);
        std::int64_t* buf = nullptr;
        auto out = new_array<std::int64_t>({static_cast<std::size_t>(rows), static_cast<std::size_t>(n_trees)}, &buf);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          tl::forest_apply<T>(ctx, xv, n_trees, offsets.data(), left.data(), right.data(), feature.data(),
                              threshold.data(), buf);
        });
        return out;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("offsets"), nb::arg("children_left"), nb::arg("children_right"),
      nb::arg("feature"), nb::arg("threshold"));
}
