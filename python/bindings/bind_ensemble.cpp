#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <limits>
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
  if (d.contains("grow_policy")) m.grow_policy = tl::parse_gbdt_grow_policy(nb::cast<std::string>(d["grow_policy"]));
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
  if (d.contains("split_nan_right")) m.split_nan_right = from_dict<std::uint8_t>(d, "split_nan_right");
  return m;
}

nb::dict model_to_dict(const tl::GbdtModel& m) {
  nb::dict d;
  d["loss"] = std::string(tl::to_string(m.loss));
  d["nan_mode"] = std::string(tl::to_string(m.nan_mode));
  d["grow_policy"] = std::string(tl::to_string(m.grow_policy));
  d["n_features"] = m.n_features;
  d["n_outputs"] = m.n_outputs;
  d["borders"] = to_numpy(m.borders);
  d["border_offsets"] = to_numpy(m.border_offsets);
  d["tree_depth"] = to_numpy(m.tree_depth);
  d["split_feature"] = to_numpy(m.split_feature);
  d["split_bin"] = to_numpy(m.split_bin);
  d["split_border"] = to_numpy(m.split_border);
  d["split_gain"] = to_numpy(m.split_gain);
  d["split_nan_right"] = to_numpy(m.split_nan_right);
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

  // gbdt_fit(ctx, X, y, sample_weight, params, eval_X, eval_y, eval_weight, record_train_loss,
  //          callback, train_loss_every) -> (model dict, info dict).
  // params: dict of GbdtParams fields (loss, nan_mode and eval_metric as names).
  // The fit runs without the GIL; after every round it takes the GIL briefly to
  // check for signals (Ctrl-C raises KeyboardInterrupt out of the fit) and to
  // call callback(info) when given, info = {round, n_rounds, train_loss (None
  // unless round % train_loss_every == 0, the last round or the round early
  // stopping ends on; train_loss_every 0: never), eval_loss, eval_metric,
  // best_iteration, best_metric (None without eval set), stopping}. A callback
  // returning False ends the fit after that round; an exception propagates.
  m.def(
      "gbdt_fit",
      [](const tl::Context& ctx, Arr X, HostVec<double> y, std::optional<HostVec<double>> w, const nb::dict& params,
         std::optional<Arr> eval_X, std::optional<HostVec<double>> eval_y, std::optional<HostVec<double>> eval_w,
         bool record_train_loss, std::optional<nb::callable> callback, int train_loss_every) {
        tl::GbdtParams p;
        p.loss = tl::parse_gbdt_loss(nb::cast<std::string>(params["loss"]));
        p.n_estimators = nb::cast<int>(params["n_estimators"]);
        p.max_depth = nb::cast<int>(params["max_depth"]);
        if (params.contains("grow_policy"))
          p.grow_policy = tl::parse_gbdt_grow_policy(nb::cast<std::string>(params["grow_policy"]));
        if (params.contains("max_leaves")) p.max_leaves = nb::cast<int>(params["max_leaves"]);
        if (params.contains("min_data_in_leaf")) p.min_data_in_leaf = nb::cast<int>(params["min_data_in_leaf"]);
        p.learning_rate = nb::cast<double>(params["learning_rate"]);
        p.l2_leaf_reg = nb::cast<double>(params["l2_leaf_reg"]);
        p.border_count = nb::cast<int>(params["border_count"]);
        p.nan_mode = tl::parse_gbdt_nan_mode(nb::cast<std::string>(params["nan_mode"]));
        p.n_classes = nb::cast<int>(params["n_classes"]);
        if (params.contains("loss_param")) p.loss_param = nb::cast<double>(params["loss_param"]);
        p.boost_from_average = nb::cast<bool>(params["boost_from_average"]);
        p.early_stopping_rounds = nb::cast<int>(params["early_stopping_rounds"]);
        if (params.contains("eval_metric")) p.eval_metric = tl::parse_gbdt_metric(nb::cast<std::string>(params["eval_metric"]));
        if (params.contains("min_child_weight")) p.min_child_weight = nb::cast<double>(params["min_child_weight"]);
        if (params.contains("min_split_gain") && !params["min_split_gain"].is_none())
          p.min_split_gain = nb::cast<double>(params["min_split_gain"]);
        read_sampling(params, p);
        tl::GbdtFitInfo info;
        const tl::GbdtCallback hook = [&](tl::GbdtRound& r) -> bool {
          const bool want_train = callback && train_loss_every > 0 &&
                                  (r.round % train_loss_every == 0 || r.round + 1 == r.n_rounds || r.stopping);
          const double train = want_train ? r.train_loss() : 0.0;  // a pass over the rows: without the GIL
          nb::gil_scoped_acquire gil;
          if (PyErr_CheckSignals() != 0) throw nb::python_error();
          if (!callback) return true;
          nb::dict d;
          d["round"] = r.round;
          d["n_rounds"] = r.n_rounds;
          d["train_loss"] = want_train ? nb::cast(train) : nb::none();
          d["eval_loss"] = r.has_eval ? nb::cast(r.eval_loss) : nb::none();
          d["eval_metric"] = r.has_eval ? nb::cast(r.eval_metric) : nb::none();
          d["best_iteration"] = r.has_eval ? nb::cast(r.best_iteration) : nb::none();
          d["best_metric"] = r.has_eval ? nb::cast(r.best_metric) : nb::none();
          d["stopping"] = r.stopping;
          nb::object res = (*callback)(d);
          return res.is_none() || nb::cast<bool>(res);
        };
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
          return tl::gbdt_fit<T>(ctx, xv, y.data(), wp, p, ev, record_train_loss, &info, hook);
        });
        nb::dict inf;
        inf["train_loss"] = to_numpy(info.train_loss);
        inf["eval_loss"] = to_numpy(info.eval_loss);
        inf["eval_metric"] = to_numpy(info.eval_metric);
        inf["best_iteration"] = info.best_iteration;
        inf["stopped_early"] = info.stopped_early;
        inf["stopped_by_callback"] = info.stopped_by_callback;
        return nb::make_tuple(model_to_dict(model), inf);
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("y"), nb::arg("sample_weight").none(), nb::arg("params"),
      nb::arg("eval_X").none() = nb::none(), nb::arg("eval_y").none() = nb::none(),
      nb::arg("eval_weight").none() = nb::none(), nb::arg("record_train_loss") = false,
      nb::arg("callback").none() = nb::none(), nb::arg("train_loss_every") = 0);

  // gbdt_metric(metric, loss, raw, y, weight) -> float: the eval metric of raw margins (m x n_outputs)
  // against labels and weights (the host arithmetic of gbdt_fit's per-round metric).
  m.def(
      "gbdt_metric",
      [](const std::string& metric, const std::string& loss,
         nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> raw, HostVec<double> y,
         std::optional<HostVec<double>> w) {
        const std::int64_t n = static_cast<std::int64_t>(raw.shape(0));
        if (static_cast<std::int64_t>(y.shape(0)) != n)
          throw tl::ValueError("gbdt_metric: y has " + std::to_string(y.shape(0)) + " entries, raw has " +
                               std::to_string(n) + " rows");
        return tl::gbdt_metric(tl::parse_gbdt_metric(metric), tl::parse_gbdt_loss(loss),
                               static_cast<int>(raw.shape(1)), raw.data(), y.data(), opt_ptr(w, n, "weight"), n);
      },
      nb::arg("metric"), nb::arg("loss"), nb::arg("raw"), nb::arg("y"), nb::arg("weight").none() = nb::none());

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

  // gbdt_link(loss, acc, kind, sklearn_shape=False, float64=False) -> the
  // float32 values of gbdt_predict from the margins acc (host arithmetic of
  // gbdt_predict), in acc's shape; with sklearn_shape, in scikit-learn's
  // (the rule of _proba_from_core and _raw_to_decision, in float32
  // arithmetic): one probability column p gives the two columns [1 - p, p];
  // two raw columns give their difference r1 - r0; any other single column
  // gives a vector. float64 gives the same float32 values as float64 (what
  // the accelerator hands scikit-learn code, without a conversion per stage).
  m.def(
      "gbdt_link",
      [](const std::string& loss, nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> acc,
         const std::string& kind, bool sklearn_shape, bool float64) -> nb::object {
        const tl::GbdtLoss l = tl::parse_gbdt_loss(loss);
        const tl::GbdtOutput k = parse_output(kind);
        const std::int64_t n = static_cast<std::int64_t>(acc.shape(0));
        const int D = static_cast<int>(acc.shape(1));
        std::vector<float> v(static_cast<std::size_t>(n * D));
        tl::gbdt_link(l, D, acc.data(), n, k, v.data());
        std::vector<std::size_t> shape = {static_cast<std::size_t>(n), static_cast<std::size_t>(D)};
        std::vector<float> shaped;
        if (sklearn_shape && D == 1 && k == tl::GbdtOutput::Probability) {
          shaped.resize(static_cast<std::size_t>(2 * n));
          for (std::int64_t i = 0; i < n; ++i) {
            shaped[2 * i] = 1.0f - v[i];
            shaped[2 * i + 1] = v[i];
          }
          shape = {static_cast<std::size_t>(n), 2};
        } else if (sklearn_shape && D == 2 && k == tl::GbdtOutput::Raw) {
          shaped.resize(static_cast<std::size_t>(n));
          for (std::int64_t i = 0; i < n; ++i) shaped[i] = v[2 * i + 1] - v[2 * i];
          shape = {static_cast<std::size_t>(n)};
        } else if (sklearn_shape && D == 1) {
          shape = {static_cast<std::size_t>(n)};
        }
        const std::vector<float>& out = shaped.empty() ? v : shaped;  // n == 0 leaves both empty
        auto emit = [&](auto tag) -> nb::object {
          using T = decltype(tag);
          auto* buf = new T[out.size() ? out.size() : 1];
          for (std::size_t i = 0; i < out.size(); ++i) buf[i] = static_cast<T>(out[i]);
          nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
          return nb::cast(nb::ndarray<nb::numpy, T>(buf, shape.size(), shape.data(), owner));
        };
        return float64 ? emit(double{}) : emit(float{});
      },
      nb::arg("loss"), nb::arg("acc"), nb::arg("kind"), nb::arg("sklearn_shape") = false, nb::arg("float64") = false);

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
