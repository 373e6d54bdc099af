#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

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

// A NumPy array (as a Python object) holding a copy of v.
template <class T>
nb::object array_of(const std::vector<T>& v) {
  return nb::cast(copy_vector(v));
}

// gbdt_fit's result: the fitted model and its training history.
struct GbdtFit {
  tl::GbdtModel model;
  tl::GbdtFitInfo info;
};

// gbdt_borders's result.
struct GbdtBorders {
  nb::object borders;         // float64, every feature's borders, increasing within a feature
  nb::object border_offsets;  // int32, n_features + 1
};

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
  if (d.contains("leaf_count")) m.leaf_count = from_dict<std::int64_t>(d, "leaf_count");
  return m;
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

}  // namespace

TL_BINDINGS(ensemble) {
  const auto loss_name = [](tl::GbdtLoss v) { return tl::to_string(v); };
  const auto nan_mode_name = [](tl::GbdtNanMode v) { return tl::to_string(v); };
  const auto grow_policy_name = [](tl::GbdtGrowPolicy v) { return tl::to_string(v); };
  const auto metric_name = [](tl::GbdtMetric v) { return tl::to_string(v); };
  const auto bootstrap_name = [](tl::GbdtBootstrap v) { return tl::to_string(v); };
  using P = tl::GbdtParams;
  params_class<P>(m, "GbdtParams", "Parameters of gbdt_fit (twinlearn/ensemble/gbdt.hpp).")
      .enum_field("loss", &P::loss, tl::parse_gbdt_loss, loss_name, "CatBoost's name ('Logloss', 'RMSE', ...)")
      .field("n_estimators", &P::n_estimators, "boosting rounds")
      .enum_field("grow_policy", &P::grow_policy, tl::parse_gbdt_grow_policy, grow_policy_name,
                  "'SymmetricTree', 'Depthwise' or 'Lossguide'")
      .field("max_depth", &P::max_depth, "levels of each tree, 1..16")
      .field("max_leaves", &P::max_leaves, "Lossguide: leaves per tree, >= 2 (0 = 2^max_depth)")
      .field("learning_rate", &P::learning_rate, "> 0")
      .field("l2_leaf_reg", &P::l2_leaf_reg, ">= 0")
      .field("border_count", &P::border_count, "borders per feature, 1..255")
      .enum_field("nan_mode", &P::nan_mode, tl::parse_gbdt_nan_mode, nan_mode_name,
                  "'Min', 'Max', 'Learned' or 'Forbidden'")
      .field("n_classes", &P::n_classes, "MultiClass, MultiClassOneVsAll: number of classes (>= 2)")
      .field("loss_param", &P::loss_param, "Tweedie's variance power, Huber's delta, Quantile's alpha")
      .field("boost_from_average", &P::boost_from_average, "start from the best constant instead of 0")
      .field("early_stopping_rounds", &P::early_stopping_rounds, "0 = never stop early")
      .enum_field("eval_metric", &P::eval_metric, tl::parse_gbdt_metric, metric_name,
                  "'Loss', 'AUC', 'Accuracy', 'RMSE' or 'MAE'")
      .field("min_child_weight", &P::min_child_weight, "0 = no constraint")
      .field("min_split_gain", &P::min_split_gain, "-inf = no constraint")
      .field("min_data_in_leaf", &P::min_data_in_leaf, "Depthwise, Lossguide: 1 = no constraint")
      .field("monotone_constraints", &P::monotone_constraints,
             "Depthwise, Lossguide: empty (none) or -1, 0, 1 per feature")
      .field("interaction_constraints", &P::interaction_constraints,
             "Depthwise, Lossguide: empty (none) or groups of feature indices; unlisted features form one more group")
      .enum_field("bootstrap", &P::bootstrap, tl::parse_gbdt_bootstrap, bootstrap_name,
                  "'No', 'Bernoulli' or 'Bayesian'")
      .field("subsample", &P::subsample, "Bernoulli: probability that a row takes part in a tree")
      .field("bagging_temperature", &P::bagging_temperature, "Bayesian: >= 0")
      .field("rsm", &P::rsm, "fraction of the features a tree may split on; 1 = all, nothing drawn")
      .field("seed", &P::seed, "of every draw")
      .done();

  // The model arrays carry the names (and dtypes) gbdt_predict's model dict takes.
  result_class<GbdtFit>(m, "GbdtFit", "Result of gbdt_fit: the model and its training history.")
      .computed("loss", [](const GbdtFit& r) { return std::string(tl::to_string(r.model.loss)); })
      .computed("nan_mode", [](const GbdtFit& r) { return std::string(tl::to_string(r.model.nan_mode)); })
      .computed("grow_policy", [](const GbdtFit& r) { return std::string(tl::to_string(r.model.grow_policy)); })
      .computed("n_features", [](const GbdtFit& r) { return r.model.n_features; })
      .computed("n_outputs", [](const GbdtFit& r) { return r.model.n_outputs; })
      .computed("borders", [](const GbdtFit& r) { return array_of(r.model.borders); }, "float64")
      .computed("border_offsets", [](const GbdtFit& r) { return array_of(r.model.border_offsets); },
                "int32, n_features + 1")
      .computed("tree_depth", [](const GbdtFit& r) { return array_of(r.model.tree_depth); }, "int32, n_trees")
      .computed("split_feature", [](const GbdtFit& r) { return array_of(r.model.split_feature); }, "int32")
      .computed("split_bin", [](const GbdtFit& r) { return array_of(r.model.split_bin); }, "int32")
      .computed("split_border", [](const GbdtFit& r) { return array_of(r.model.split_border); }, "float64")
      .computed("split_gain", [](const GbdtFit& r) { return array_of(r.model.split_gain); }, "float64")
      .computed("split_nan_right", [](const GbdtFit& r) { return array_of(r.model.split_nan_right); },
                "uint8; empty unless nan_mode is 'Learned'")
      .computed("leaf_values", [](const GbdtFit& r) { return array_of(r.model.leaf_values); }, "float64")
      .computed("base_score", [](const GbdtFit& r) { return array_of(r.model.base_score); }, "float64, n_outputs")
      .computed("leaf_count", [](const GbdtFit& r) { return array_of(r.model.leaf_count); },
                "int64, one per leaf: the training rows of positive weight in the tree reaching it")
      .computed("train_loss", [](const GbdtFit& r) { return array_of(r.info.train_loss); },
                "per round, with record_train_loss")
      .computed("eval_loss", [](const GbdtFit& r) { return array_of(r.info.eval_loss); }, "per round, with an eval set")
      .computed("eval_metric", [](const GbdtFit& r) { return array_of(r.info.eval_metric); },
                "per round, with an eval set and an eval_metric other than 'Loss'")
      .computed("best_iteration", [](const GbdtFit& r) { return r.info.best_iteration; },
                "0-based round of the best eval metric (-1 without eval set), of this fit's rounds (init_model's "
                "trees not counted)")
      .computed("stopped_early", [](const GbdtFit& r) { return r.info.stopped_early; }, "by early_stopping_rounds")
      .computed("stopped_by_callback", [](const GbdtFit& r) { return r.info.stopped_by_callback; },
                "the callback returned False")
      .done();

  result_class<GbdtBorders>(m, "GbdtBorders", "Result of gbdt_borders.")
      .field("borders", &GbdtBorders::borders, "float64, every feature's borders, increasing within a feature")
      .field("border_offsets", &GbdtBorders::border_offsets, "int32, n_features + 1")
      .done();

  // gbdt_feature_subset(params, border_offsets, tree) -> uint8 array: the features tree `tree` may
  // split on (by params.rsm and params.seed).
  m.def(
      "gbdt_feature_subset",
      [](const tl::GbdtParams& p, const std::vector<std::int32_t>& border_offsets, std::int64_t tree) {
        return copy_vector(tl::gbdt_feature_subset(p, border_offsets, tree));
      },
      nb::arg("params"), nb::arg("border_offsets"), nb::arg("tree"));

  // gbdt_fit(ctx, X, y, sample_weight, params: GbdtParams, eval_X, eval_y, eval_weight,
  //          record_train_loss, callback, train_loss_every, init_model) -> GbdtFit.
  // init_model: a model dict (as gbdt_predict takes) to continue boosting from
  // (gbdt_fit's init: its borders, its raw predictions as the start, the new
  // trees numbered after its own), or None.
  // The fit runs without the GIL; after every round it takes the GIL briefly to
  // check for signals (Ctrl-C raises KeyboardInterrupt out of the fit) and to
  // call callback(info) when given, info = {round, n_rounds, train_loss (None
  // unless round % train_loss_every == 0, the last round or the round early
  // stopping ends on; train_loss_every 0: never), eval_loss, eval_metric,
  // best_iteration, best_metric (None without eval set), stopping}. A callback
  // returning False ends the fit after that round; an exception propagates.
  m.def(
      "gbdt_fit",
      [](const tl::Context& ctx, Arr X, HostVec<double> y, std::optional<HostVec<double>> w, const tl::GbdtParams& p,
         std::optional<Arr> eval_X, std::optional<HostVec<double>> eval_y, std::optional<HostVec<double>> eval_w,
         bool record_train_loss, std::optional<nb::callable> callback, int train_loss_every,
         std::optional<nb::dict> init_model) {
        GbdtFit fit;
        std::optional<tl::GbdtModel> init;
        if (init_model) init = model_from_dict(*init_model);
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
        fit.model = by_float_dtype(X, "X", [&](auto tag) {
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
          return tl::gbdt_fit<T>(ctx, xv, y.data(), wp, p, ev, record_train_loss, &fit.info, hook,
                                 init ? &*init : nullptr);
        });
        return fit;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("y"), nb::arg("sample_weight").none(), nb::arg("params"),
      nb::arg("eval_X").none() = nb::none(), nb::arg("eval_y").none() = nb::none(),
      nb::arg("eval_weight").none() = nb::none(), nb::arg("record_train_loss") = false,
      nb::arg("callback").none() = nb::none(), nb::arg("train_loss_every") = 0,
      nb::arg("init_model").none() = nb::none());

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

  // gbdt_predict(ctx, model, X, n_trees, kind, out): out (n x n_outputs float64) is written.
  m.def(
      "gbdt_predict",
      [](const tl::Context& ctx, const nb::dict& model, Arr X, std::int64_t n_trees, const std::string& kind,
         ArrW out) {
        tl::GbdtModel mdl = model_from_dict(model);
        const tl::GbdtOutput k = parse_output(kind);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto ov = as_matrix<double>(out, "out");
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

  // gbdt_link(loss, acc, kind, sklearn_shape=False) -> the float64 values of
  // gbdt_predict from the margins acc (host arithmetic of gbdt_predict), in
  // acc's shape; with sklearn_shape, in scikit-learn's (the rule of
  // proba_from_core and raw_to_decision, in float64 arithmetic): one
  // probability column p gives the two columns [1 - p, p]; two raw columns
  // give their difference r1 - r0; any other single column gives a vector.
  m.def(
      "gbdt_link",
      [](const std::string& loss, nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> acc,
         const std::string& kind, bool sklearn_shape) -> nb::object {
        const tl::GbdtLoss l = tl::parse_gbdt_loss(loss);
        const tl::GbdtOutput k = parse_output(kind);
        const std::int64_t n = static_cast<std::int64_t>(acc.shape(0));
        const int D = static_cast<int>(acc.shape(1));
        std::vector<double> v(static_cast<std::size_t>(n * D));
        tl::gbdt_link(l, D, acc.data(), n, k, v.data());
        std::vector<std::size_t> shape = {static_cast<std::size_t>(n), static_cast<std::size_t>(D)};
        std::vector<double> shaped;
        if (sklearn_shape && D == 1 && k == tl::GbdtOutput::Probability) {
          shaped.resize(static_cast<std::size_t>(2 * n));
          for (std::int64_t i = 0; i < n; ++i) {
            shaped[2 * i] = 1.0 - v[i];
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
        const std::vector<double>& out = shaped.empty() ? v : shaped;  // n == 0 leaves both empty
        double* buf = nullptr;
        auto a = shape.size() == 1 ? new_array<double>({shape[0]}, &buf)
                                   : new_array<double>({shape[0], shape[1]}, &buf);
        for (std::size_t i = 0; i < out.size(); ++i) buf[i] = out[i];
        return nb::cast(a);
      },
      nb::arg("loss"), nb::arg("acc"), nb::arg("kind"), nb::arg("sklearn_shape") = false);

  // gbdt_leaf_cover(ctx, model, X, weight=None) -> float64 per leaf: the weight of X's rows (host) reaching it.
  m.def(
      "gbdt_leaf_cover",
      [](const tl::Context& ctx, const nb::dict& model, Arr X, std::optional<HostVec<double>> w) {
        tl::GbdtModel mdl = model_from_dict(model);
        std::vector<double> cover = by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          const double* wp = opt_ptr(w, xv.rows, "weight");
          nb::gil_scoped_release release;
          return tl::gbdt_leaf_cover<T>(ctx, mdl, xv, wp);
        });
        return copy_vector(cover);
      },
      nb::arg("ctx"), nb::arg("model"), nb::arg("X"), nb::arg("weight").none() = nb::none());

  // gbdt_shap_values(ctx, model, X, leaf_cover) -> float64 (n, n_outputs, n_features + 1): TreeSHAP
  // contributions of X's rows (host), the expected value last.
  m.def(
      "gbdt_shap_values",
      [](const tl::Context& ctx, const nb::dict& model, Arr X, HostVec<double> leaf_cover) {
        tl::GbdtModel mdl = model_from_dict(model);
        const std::vector<double> cover(leaf_cover.data(), leaf_cover.data() + leaf_cover.shape(0));
        return by_float_dtype(X, "X", [&](auto tag) -> nb::object {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          double* buf = nullptr;
          auto a = new_array<double>({static_cast<std::size_t>(xv.rows), static_cast<std::size_t>(mdl.n_outputs),
                                      static_cast<std::size_t>(mdl.n_features) + 1},
                                     &buf);
          {
            nb::gil_scoped_release release;
            tl::gbdt_shap_values<T>(ctx, mdl, xv, cover, buf);
          }
          return nb::cast(a);
        });
      },
      nb::arg("ctx"), nb::arg("model"), nb::arg("X"), nb::arg("leaf_cover"));

  // gbdt_validate(model): raises ValueError naming the first inconsistency.
  m.def("gbdt_validate", [](const nb::dict& model) { model_from_dict(model).validate(); }, nb::arg("model"));

  // gbdt_borders(ctx, X, border_count, nan_mode) -> GbdtBorders
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
        return GbdtBorders{array_of(mdl.borders), array_of(mdl.border_offsets)};
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("border_count"), nb::arg("nan_mode"));
}
