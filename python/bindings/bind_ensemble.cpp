#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <vector>

#include "convert.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

template <class T>
using HostVec = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using HostMatW = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// A NumPy array that owns a copy of v.
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(const std::vector<T>& v) {
  T* buf = new T[v.size() ? v.size() : 1];
  if (!v.empty()) std::memcpy(buf, v.data(), v.size() * sizeof(T));
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(buf, {v.size()}, owner);
}

template <class T>
std::vector<T> from_dict(const nb::dict& d, const char* key) {
  if (!d.contains(key)) throw tl::ValueError(std::string("GBDT model: missing '") + key + "'");
  auto a = nb::cast<HostVec<T>>(d[key]);
  return std::vector<T>(a.data(), a.data() + a.shape(0));
}

tl::GbdtModel model_from_dict(const nb::dict& d) {
  tl::GbdtModel m;
  m.loss = tl::parse_gbdt_loss(nb::cast<std::string>(d["loss"]));
  m.nan_mode = tl::parse_gbdt_nan_mode(nb::cast<std::string>(d["nan_mode"]));
  m.n_features = nb::cast<int>(d["n_features"]);
  m.n_outputs = nb::cast<int>(d["n_outputs"]);
  m.borders = from_dict<double>(d, "borders");
  m.border_offsets = from_dict<std::int32_t>(d, "border_offsets");
  m.tree_depth = from_dict<std::int32_t>(d, "tree_depth");
  m.split_feature = from_dict<std::int32_t>(d, "split_feature");
  m.split_bin = from_dict<std::int32_t>(d, "split_bin");
  m.split_border = from_dict<double>(d, "split_border");
  m.leaf_values = from_dict<double>(d, "leaf_values");
  m.base_score = from_dict<double>(d, "base_score");
  if (d.contains("split_gain")) m.split_gain = from_dict<double>(d, "split_gain");
  return m;
}

nb::dict model_to_dict(const tl::GbdtModel& m) {
  nb::dict d;
  d["loss"] = std::string(tl::to_string(m.loss));
  d["nan_mode"] = std::string(tl::to_string(m.nan_mode));
  d["n_features"] = m.n_features;
  d["n_outputs"] = m.n_outputs;
  d["borders"] = to_numpy(m.borders);
  d["border_offsets"] = to_numpy(m.border_offsets);
  d["tree_depth"] = to_numpy(m.tree_depth);
  d["split_feature"] = to_numpy(m.split_feature);
  d["split_bin"] = to_numpy(m.split_bin);
  d["split_border"] = to_numpy(m.split_border);
  d["split_gain"] = to_numpy(m.split_gain);
  d["leaf_values"] = to_numpy(m.leaf_values);
  d["base_score"] = to_numpy(m.base_score);
  return d;
}

tl::GbdtOutput parse_output(const std::string& s) {
  if (s == "raw") return tl::GbdtOutput::Raw;
  if (s == "probability") return tl::GbdtOutput::Probability;
  if (s == "exponent") return tl::GbdtOutput::Exponent;
  throw tl::ValueError("prediction kind must be 'raw', 'probability' or 'exponent'; got '" + s + "'");
}

const double* opt_ptr(const std::optional<HostVec<double>>& a, std::int64_t n, const char* name) {
  if (!a) return nullptr;
  if (static_cast<std::int64_t>(a->shape(0)) != n)
    throw tl::ValueError(std::string(name) + " has " + std::to_string(a->shape(0)) + " entries, expected " +
                         std::to_string(n));
  return a->data();
}

// Sampling fields of GbdtParams from a params dict (absent: no sampling).
void read_sampling(const nb::dict& params, tl::GbdtParams& p) {
  if (params.contains("bootstrap_type"))
    p.bootstrap = tl::parse_gbdt_bootstrap(nb::cast<std::string>(params["bootstrap_type"]));
  if (params.contains("subsample")) p.subsample = nb::cast<double>(params["subsample"]);
  if (params.contains("bagging_temperature")) p.bagging_temperature = nb::cast<double>(params["bagging_temperature"]);
  if (params.contains("rsm")) p.rsm = nb::cast<double>(params["rsm"]);
  if (params.contains("seed")) p.seed = nb::cast<std::uint64_t>(params["seed"]);
}

}  // namespace

void init_ensemble(nb::module_& m) {
  // gbdt_feature_subset(params, border_offsets, tree) -> uint8 array: the features tree `tree` may
  // split on (params: dict with rsm and seed).
  m.def(
      "gbdt_feature_subset",
      [](const nb::dict& params, const std::vector<std::int32_t>& border_offsets, std::int64_t tree) {
        tl::GbdtParams p;
        read_sampling(params, p);
        return to_numpy(tl::gbdt_feature_subset(p, border_offsets, tree));
      },
      nb::arg("params"), nb::arg("border_offsets"), nb::arg("tree"));

  // gbdt_fit(ctx, X, y, sample_weight, params, eval_X, eval_y, eval_weight, record_train_loss)
  //   -> (model dict, info dict). params: dict of GbdtParams fields (loss and nan_mode as names).
  m.def(
      "gbdt_fit",
      [](const tl::Context& ctx, Arr X, HostVec<double> y, std::optional<HostVec<double>> w, const nb::dict& params,
         std::optional<Arr> eval_X, std::optional<HostVec<double>> eval_y, std::optional<HostVec<double>> eval_w,
         bool record_train_loss) {
        tl::GbdtParams p;
        p.loss = tl::parse_gbdt_loss(nb::cast<std::string>(params["loss"]));
        p.n_estimators = nb::cast<int>(params["n_estimators"]);
        p.max_depth = nb::cast<int>(params["max_depth"]);
        p.learning_rate = nb::cast<double>(params["learning_rate"]);
        p.l2_leaf_reg = nb::cast<double>(params["l2_leaf_reg"]);
        p.border_count = nb::cast<int>(params["border_count"]);
        p.nan_mode = tl::parse_gbdt_nan_mode(nb::cast<std::string>(params["nan_mode"]));
        p.n_classes = nb::cast<int>(params["n_classes"]);
        if (params.contains("loss_param")) p.loss_param = nb::cast<double>(params["loss_param"]);
        p.boost_from_average = nb::cast<bool>(params["boost_from_average"]);
        p.early_stopping_rounds = nb::cast<int>(params["early_stopping_rounds"]);
        read_sampling(params, p);
        tl::GbdtFitInfo info;
        tl::GbdtModel model = by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          if (static_cast<std::int64_t>(y.shape(0)) != xv.rows)
            throw tl::ValueError("y has " + std::to_string(y.shape(0)) + " entries, X has " +
                                 std::to_string(xv.rows) + " rows");
          const double* wp = opt_ptr(w, xv.rows, "sample_weight");
          tl::GbdtEvalSet<T> ev;
          if (eval_X) {
            ev.X = as_matrix<const T>(*eval_X, "eval_set X");
            if (!eval_y) throw tl::ValueError("eval_set needs labels");
            ev.y = opt_ptr(eval_y, ev.X.rows, "eval_set y");
            ev.weight = opt_ptr(eval_w, ev.X.rows, "eval_set sample_weight");
          }
          nb::gil_scoped_release release;
          return tl::gbdt_fit<T>(ctx, xv, y.data(), wp, p, ev, record_train_loss, &info);
        });
        nb::dict inf;
        inf["train_loss"] = to_numpy(info.train_loss);
        inf["eval_loss"] = to_numpy(info.eval_loss);
        inf["best_iteration"] = info.best_iteration;
        inf["stopped_early"] = info.stopped_early;
        return nb::make_tuple(model_to_dict(model), inf);
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("y"), nb::arg("sample_weight").none(), nb::arg("params"),
      nb::arg("eval_X").none() = nb::none(), nb::arg("eval_y").none() = nb::none(),
      nb::arg("eval_weight").none() = nb::none(), nb::arg("record_train_loss") = false);

  // gbdt_predict(ctx, model, X, n_trees, kind, out): out (n x n_outputs float32) is written.
  m.def(
      "gbdt_predict",
      [](const tl::Context& ctx, const nb::dict& model, Arr X, std::int64_t n_trees, const std::string& kind,
         ArrW out) {
        tl::GbdtModel mdl = model_from_dict(model);
        const tl::GbdtOutput k = parse_output(kind);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto ov = as_matrix<float>(out, "out");
          nb::gil_scoped_release release;
          tl::gbdt_predict<T>(ctx, mdl, xv, n_trees, k, ov);
        });
      },
      nb::arg("ctx"), nb::arg("model"), nb::arg("X"), nb::arg("n_trees"), nb::arg("kind"), nb::arg("out"));

  // gbdt_predict_stage(ctx, model, X, tree_begin, tree_end, acc): acc (n x n_outputs float64, host) += trees.
  m.def(
      "gbdt_predict_stage",
      [](const tl::Context& ctx, const nb::dict& model, Arr X, std::int64_t t0, std::int64_t t1, HostMatW acc) {
        tl::GbdtModel mdl = model_from_dict(model);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          if (static_cast<std::int64_t>(acc.shape(0)) != xv.rows ||
              static_cast<std::int64_t>(acc.shape(1)) != mdl.n_outputs)
            throw tl::ValueError("gbdt_predict_stage: accumulator shape does not match");
          nb::gil_scoped_release release;
          tl::gbdt_predict_stage<T>(ctx, mdl, xv, t0, t1, acc.data());
        });
      },
      nb::arg("ctx"), nb::arg("model"), nb::arg("X"), nb::arg("tree_begin"), nb::arg("tree_end"), nb::arg("acc"));

  // gbdt_link(loss, acc, kind) -> float32 array of acc's shape (host arithmetic of gbdt_predict).
  m.def(
      "gbdt_link",
      [](const std::string& loss, nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> acc,
         const std::string& kind) {
        const tl::GbdtLoss l = tl::parse_gbdt_loss(loss);
        const tl::GbdtOutput k = parse_output(kind);
        const std::int64_t n = static_cast<std::int64_t>(acc.shape(0));
        const int D = static_cast<int>(acc.shape(1));
        std::vector<float> out(static_cast<std::size_t>(n * D));
        tl::gbdt_link(l, D, acc.data(), n, k, out.data());
        auto* buf = new float[out.size() ? out.size() : 1];
        if (!out.empty()) std::memcpy(buf, out.data(), out.size() * sizeof(float));
        nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<float*>(p); });
        return nb::ndarray<nb::numpy, float, nb::ndim<2>>(buf, {static_cast<std::size_t>(n), static_cast<std::size_t>(D)},
                                                         owner);
      },
      nb::arg("loss"), nb::arg("acc"), nb::arg("kind"));

  // gbdt_validate(model): raises ValueError naming the first inconsistency.
  m.def("gbdt_validate", [](const nb::dict& model) { model_from_dict(model).validate(); }, nb::arg("model"));

  // gbdt_borders(ctx, X, border_count, nan_mode) -> (borders, border_offsets)
  m.def(
      "gbdt_borders",
      [](const tl::Context& ctx, Arr X, int border_count, const std::string& nan_mode) {
        const tl::GbdtNanMode nm = tl::parse_gbdt_nan_mode(nan_mode);
        tl::GbdtModel mdl = by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          return tl::gbdt_borders<T>(ctx, xv, border_count, nm);
        });
        return nb::make_tuple(to_numpy(mdl.borders), to_numpy(mdl.border_offsets));
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("border_count"), nb::arg("nan_mode"));
}
