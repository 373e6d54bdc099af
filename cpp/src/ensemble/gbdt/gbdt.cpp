// Validation and dispatch of the gradient-boosted trees.
#include <cmath>
#include <limits>
#include <vector>

#include "ensemble/gbdt/gbdt_common.hpp"
#include "ensemble/gbdt/gbdt_constraints.hpp"
#include "ensemble/gbdt/gbdt_driver.hpp"

namespace tl {
namespace {

void check_params(const GbdtParams& p) {
  TL_REQUIRE(p.n_estimators >= 1, ValueError, "n_estimators must be >= 1, got ", p.n_estimators);
  TL_REQUIRE(p.max_depth >= 1 && p.max_depth <= gbdt::kMaxDepth, ValueError, "max_depth must be in [1, ",
             gbdt::kMaxDepth, "], got ", p.max_depth);
  TL_REQUIRE(p.grow_policy == GbdtGrowPolicy::SymmetricTree || p.grow_policy == GbdtGrowPolicy::Depthwise ||
                 p.grow_policy == GbdtGrowPolicy::Lossguide,
             ValueError, "grow_policy must be 'SymmetricTree', 'Depthwise' or 'Lossguide'");
  TL_REQUIRE(p.nan_mode != GbdtNanMode::Learned || gbdt_per_node(p.grow_policy), ValueError,
             "nan_mode 'Learned' needs grow_policy 'Depthwise' or 'Lossguide' (an oblivious level has one split "
             "for all its nodes), got '", to_string(p.grow_policy), "'");
  TL_REQUIRE(p.min_data_in_leaf >= 1, ValueError, "min_data_in_leaf must be >= 1, got ", p.min_data_in_leaf);
  TL_REQUIRE(p.min_data_in_leaf == 1 || gbdt_per_node(p.grow_policy), ValueError,
             "min_data_in_leaf applies to grow_policy 'Depthwise' and 'Lossguide' only; with '",
             to_string(p.grow_policy), "' leave it at 1");
  TL_REQUIRE(p.max_leaves == 0 || p.max_leaves >= 2, ValueError, "max_leaves must be >= 2 (or 0: 2^max_depth), got ",
             p.max_leaves);
  TL_REQUIRE(std::isfinite(p.learning_rate) && p.learning_rate > 0.0, ValueError,
             "learning_rate must be a finite number > 0, got ", p.learning_rate);
  TL_REQUIRE(std::isfinite(p.l2_leaf_reg) && p.l2_leaf_reg >= 0.0, ValueError,
             "l2_leaf_reg must be a finite number >= 0, got ", p.l2_leaf_reg);
  TL_REQUIRE(p.border_count >= 1 && p.border_count <= 255, ValueError, "border_count must be in [1, 255], got ",
             p.border_count);
  TL_REQUIRE(!gbdt::is_multiclass(p.loss) || (p.n_classes >= 2 && p.n_classes <= 65536), ValueError,
             to_string(p.loss), " needs n_classes in [2, 65536], got ", p.n_classes);
  TL_REQUIRE(p.loss != GbdtLoss::Tweedie || (p.loss_param > 1.0 && p.loss_param < 2.0), ValueError,
             "Tweedie needs variance_power in (1, 2), got ", p.loss_param);
  TL_REQUIRE(p.loss != GbdtLoss::Huber || (std::isfinite(p.loss_param) && p.loss_param > 0.0), ValueError,
             "Huber needs delta > 0, got ", p.loss_param);
  TL_REQUIRE(p.loss != GbdtLoss::Quantile || (p.loss_param > 0.0 && p.loss_param < 1.0), ValueError,
             "Quantile needs alpha in (0, 1), got ", p.loss_param);
  TL_REQUIRE(!std::isnan(p.min_split_gain) && p.min_split_gain < HUGE_VAL, ValueError,
             "min_split_gain must be a number (or -infinity: no constraint), got ", p.min_split_gain);
  TL_REQUIRE(std::isfinite(p.min_child_weight) && p.min_child_weight >= 0.0, ValueError,
             "min_child_weight must be a finite number >= 0, got ", p.min_child_weight);
  {
    const bool binary = p.loss == GbdtLoss::Logloss || p.loss == GbdtLoss::CrossEntropy;
    const bool classification = binary || gbdt::is_multiclass(p.loss);
    const GbdtMetric m = p.eval_metric;
    TL_REQUIRE(m == GbdtMetric::Loss || m == GbdtMetric::AUC || m == GbdtMetric::Accuracy ||
                   m == GbdtMetric::RMSE || m == GbdtMetric::MAE,
               ValueError, "eval_metric: unknown metric ", static_cast<int>(m));
    TL_REQUIRE(m != GbdtMetric::AUC || binary, ValueError,
               "eval_metric 'AUC' needs a binary loss (Logloss, CrossEntropy), got ", to_string(p.loss));
    TL_REQUIRE(m != GbdtMetric::Accuracy || classification, ValueError,
               "eval_metric 'Accuracy' needs a classification loss, got ", to_string(p.loss));
    TL_REQUIRE((m != GbdtMetric::RMSE && m != GbdtMetric::MAE) || !classification, ValueError, "eval_metric '",
               to_string(m), "' needs a regression loss, got ", to_string(p.loss));
  }
  TL_REQUIRE(p.early_stopping_rounds >= 0, ValueError, "early_stopping_rounds must be >= 0, got ",
             p.early_stopping_rounds);
  TL_REQUIRE(p.bootstrap == GbdtBootstrap::No || p.bootstrap == GbdtBootstrap::Bernoulli ||
                 p.bootstrap == GbdtBootstrap::Bayesian,
             ValueError, "bootstrap_type must be 'No', 'Bernoulli' or 'Bayesian'");
  TL_REQUIRE(p.subsample > 0.0 && p.subsample <= 1.0, ValueError, "subsample must be in (0, 1], got ", p.subsample);
  TL_REQUIRE(std::isfinite(p.bagging_temperature) && p.bagging_temperature >= 0.0, ValueError,
             "bagging_temperature must be a finite number >= 0, got ", p.bagging_temperature);
  TL_REQUIRE(p.rsm > 0.0 && p.rsm <= 1.0, ValueError, "rsm must be in (0, 1], got ", p.rsm);
}

// Monotonic and interaction constraints against the data's n_features.
void check_constraints(const GbdtParams& p, std::int64_t n_features) {
  const bool mono = gbdt::has_monotone(p);
  if (!p.monotone_constraints.empty()) {
    TL_REQUIRE(static_cast<std::int64_t>(p.monotone_constraints.size()) == n_features, ValueError,
               "monotone_constraints has ", p.monotone_constraints.size(), " entries, X has ", n_features,
               " features");
    for (std::size_t f = 0; f < p.monotone_constraints.size(); ++f) {
      const int c = p.monotone_constraints[f];
      TL_REQUIRE(c == -1 || c == 0 || c == 1, ValueError, "monotone_constraints must hold -1, 0 or 1; entry ", f,
                 " is ", c);
    }
  }
  if (mono) {
    TL_REQUIRE(gbdt_per_node(p.grow_policy), ValueError,
               "monotone_constraints need grow_policy 'Depthwise' or 'Lossguide' (per-node trees), got '",
               to_string(p.grow_policy), "'");
    TL_REQUIRE(gbdt_outputs(p.loss, p.n_classes) == 1, ValueError,
               "monotone_constraints are not supported for multiclass losses (", to_string(p.loss), ")");
    TL_REQUIRE(!gbdt::exact_leaves(p.loss), ValueError, "monotone_constraints are not supported with loss '",
               to_string(p.loss), "' (its leaves are quantiles of the residuals, which the bounds do not enter)");
  }
  if (gbdt::has_interaction(p)) {
    TL_REQUIRE(gbdt_per_node(p.grow_policy), ValueError,
               "interaction_constraints need grow_policy 'Depthwise' or 'Lossguide' (per-node trees), got '",
               to_string(p.grow_policy), "'");
    for (std::size_t g = 0; g < p.interaction_constraints.size(); ++g)
      for (int f : p.interaction_constraints[g])
        TL_REQUIRE(f >= 0 && f < n_features, ValueError, "interaction_constraints group ", g,
                   " holds feature index ", f, ", outside [0, ", n_features, ")");
  }
}

void check_labels(const GbdtParams& p, const double* y, std::int64_t n, const char* name) {
  TL_REQUIRE(y != nullptr, ValueError, name, ": labels are required");
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = y[i];
    TL_REQUIRE(std::isfinite(v), ValueError, name, " contains NaN or infinity (entry ", i, ")");
    if (p.loss == GbdtLoss::Logloss) {
      TL_REQUIRE(v == 0.0 || v == 1.0, ValueError, "loss 'Logloss' needs labels 0 or 1; ", name, "[", i, "] = ", v);
    } else if (p.loss == GbdtLoss::CrossEntropy) {
      TL_REQUIRE(v >= 0.0 && v <= 1.0, ValueError, "loss 'CrossEntropy' needs labels in [0, 1]; ", name, "[", i,
                 "] = ", v);
    } else if (gbdt::is_multiclass(p.loss)) {
      TL_REQUIRE(v >= 0.0 && v < p.n_classes && v == std::floor(v), ValueError, "loss '", to_string(p.loss),
                 "' needs labels 0..", p.n_classes - 1, "; ", name, "[", i, "] = ", v);
    } else if (p.loss == GbdtLoss::Poisson || p.loss == GbdtLoss::Tweedie) {
      TL_REQUIRE(v >= 0.0, ValueError, "loss '", to_string(p.loss), "' needs labels >= 0; ", name, "[", i, "] = ", v);
    }
  }
}

void check_weights(const double* w, std::int64_t n, const char* name) {
  if (!w) return;
  double total = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    TL_REQUIRE(std::isfinite(w[i]) && w[i] >= 0.0, ValueError, name, " must be finite and >= 0; entry ", i, " is ",
               w[i]);
    total += w[i];
  }
  TL_REQUIRE(total > 0.0, ValueError, name, " sums to zero");
}

template <class T>
void check_X(const Context& ctx, MatrixView<const T> X, const char* name) {
  TL_REQUIRE(X.rows >= 1, ValueError, name, " has 0 samples");
  TL_REQUIRE(X.cols >= 1, ValueError, name, " has 0 features");
  TL_REQUIRE(X.rows <= gbdt::kMaxRows, ValueError, name, " has ", X.rows, " rows; at most ", gbdt::kMaxRows,
             " are supported (int64 histogram sums would overflow beyond)");
  TL_REQUIRE(X.cols <= 1000000, ValueError, name, " has ", X.cols, " features; at most 1000000 are supported");
  check_placement(ctx, X, name);
}

}  // namespace

namespace {
// AUC on an eval set without both classes (of positive weight) is undefined.
void check_auc_labels(const double* y, const double* w, std::int64_t m) {
  bool pos = false, neg = false;
  for (std::int64_t i = 0; i < m && !(pos && neg); ++i) {
    if (w && !(w[i] > 0.0)) continue;
    (y[i] > 0.5 ? pos : neg) = true;
  }
  TL_REQUIRE(pos && neg, ValueError,
             "eval_metric 'AUC' needs both classes (with positive weight) in the eval set; it has only ",
             pos ? "positives" : "negatives");
}
}  // namespace

namespace {
// gbdt_fit's init: a valid model the continued fit can extend.
void check_init(const GbdtModel& init, const GbdtParams& p, std::int64_t n_features) {
  init.validate();
  TL_REQUIRE(init.loss == p.loss, ValueError, "init model: its loss is '", to_string(init.loss),
             "', the fit's is '", to_string(p.loss), "'");
  TL_REQUIRE(init.n_outputs == gbdt_outputs(p.loss, p.n_classes), ValueError, "init model: it has ",
             init.n_outputs, " outputs, the fit has ", gbdt_outputs(p.loss, p.n_classes));
  TL_REQUIRE(init.nan_mode == p.nan_mode, ValueError, "init model: its nan_mode is '", to_string(init.nan_mode),
             "', the fit's is '", to_string(p.nan_mode), "'");
  TL_REQUIRE(init.grow_policy == p.grow_policy, ValueError, "init model: its grow_policy is '",
             to_string(init.grow_policy), "', the fit's is '", to_string(p.grow_policy), "'");
  TL_REQUIRE(init.n_features == n_features, ValueError, "init model: it has ", init.n_features,
             " features, X has ", n_features);
  TL_REQUIRE(init.n_trees() + p.n_estimators <= std::numeric_limits<std::int32_t>::max(), ValueError,
             "init model: ", init.n_trees(), " trees plus n_estimators ", p.n_estimators, " is too many trees");
}

// The raw predictions of init's trees for the rows of X (n x n_outputs):
// base_score, then gbdt_predict_stage over all its trees.
template <class T>
std::vector<double> init_approx(const Context& ctx, const GbdtModel& init, MatrixView<const T> X) {
  const int D = init.n_outputs;
  std::vector<double> acc(static_cast<std::size_t>(X.rows * D));
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (int k = 0; k < D; ++k) acc[static_cast<std::size_t>(i * D + k)] = init.base_score[k];
  gbdt_predict_stage(ctx, init, X, 0, init.n_trees(), acc.data());
  return acc;
}
}  // namespace

template <class T>
GbdtModel gbdt_fit(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                   const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss, GbdtFitInfo* info,
                   const GbdtCallback& callback, const GbdtModel* init) {
  check_params(params);
  check_X(ctx, X, "X");
  check_constraints(params, X.cols);
  check_labels(params, y, X.rows, "y");
  if (params.loss == GbdtLoss::Poisson || params.loss == GbdtLoss::Tweedie) {
    bool positive = false;
    for (std::int64_t i = 0; i < X.rows && !positive; ++i) positive = y[i] > 0.0;
    TL_REQUIRE(positive, ValueError, "loss '", to_string(params.loss),
               "' needs labels >= 0 with a positive sum; every label is 0 (the log link has no finite start)");
  }
  check_weights(weight, X.rows, "sample_weight");
  if (eval.X.rows > 0) {
    check_X(ctx, eval.X, "eval_set X");
    TL_REQUIRE(eval.X.cols == X.cols, ValueError, "eval_set X has ", eval.X.cols, " features, X has ", X.cols);
    check_labels(params, eval.y, eval.X.rows, "eval_set y");
    check_weights(eval.weight, eval.X.rows, "eval_set sample_weight");
    if (params.eval_metric == GbdtMetric::AUC) check_auc_labels(eval.y, eval.weight, eval.X.rows);
  }
  detail::GbdtInit start;
  if (init) {
    check_init(*init, params, X.cols);
    start.model = init;
    start.approx = init_approx(ctx, *init, X);
    if (eval.X.rows > 0) start.eval_approx = init_approx(ctx, *init, eval.X);
  }
  const detail::GbdtInit* st = init ? &start : nullptr;
  return ctx.dispatch(
      [&] { return detail::gbdt_fit_cpu<T>(ctx, X, y, weight, params, eval, record_train_loss, info, callback, st); },
      [&] {
        return detail::gbdt_fit_cuda<T>(ctx, X, y, weight, params, eval, record_train_loss, info, callback, st);
      });
}

namespace {
template <class T>
void check_predict(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                   std::int64_t tree_end) {
  model.validate();
  TL_REQUIRE(X.cols == model.n_features, ValueError, "X has ", X.cols, " features, but the model is expecting ",
             model.n_features, " features as input.");
  TL_REQUIRE(X.rows <= gbdt::kMaxRows, ValueError, "X has too many rows (", X.rows, ")");
  TL_REQUIRE(0 <= tree_begin && tree_begin <= tree_end && tree_end <= model.n_trees(), ValueError,
             "tree range [", tree_begin, ", ", tree_end, ") is outside the model's ", model.n_trees(), " trees");
  check_placement(ctx, X, "X");
}
}  // namespace

template <class T>
void gbdt_predict(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t n_trees,
                  GbdtOutput kind, MatrixView<double> out) {
  if (n_trees < 0) n_trees = model.n_trees();
  check_predict(ctx, model, X, 0, n_trees);
  TL_REQUIRE(out.rows == X.rows && out.cols == model.n_outputs, ValueError, "gbdt_predict: output shape (", out.rows,
             ", ", out.cols, ") should be (", X.rows, ", ", model.n_outputs, ")");
  const bool classifier = model.loss == GbdtLoss::Logloss || model.loss == GbdtLoss::CrossEntropy ||
                          gbdt::is_multiclass(model.loss);
  const bool log_link = model.loss == GbdtLoss::Poisson || model.loss == GbdtLoss::Tweedie;
  TL_REQUIRE(kind != GbdtOutput::Probability || classifier, ValueError,
             "probabilities need a classification loss; the model's loss is ", to_string(model.loss));
  TL_REQUIRE(kind != GbdtOutput::Exponent || log_link, ValueError,
             "the exponent output is for Poisson and Tweedie; the model's loss is ", to_string(model.loss));
  check_placement(ctx, out, "out");
  if (X.rows == 0) return;
  ctx.dispatch([&] { detail::gbdt_predict_cpu<T>(ctx, model, X, 0, n_trees, nullptr, kind, out); },
               [&] { detail::gbdt_predict_cuda<T>(ctx, model, X, 0, n_trees, nullptr, kind, out); });
}

template <class T>
void gbdt_predict_stage(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                        std::int64_t tree_end, double* acc) {
  check_predict(ctx, model, X, tree_begin, tree_end);
  TL_REQUIRE(acc != nullptr || X.rows == 0, ValueError, "gbdt_predict_stage: no accumulator");
  if (X.rows == 0 || tree_begin == tree_end) return;
  ctx.dispatch(
      [&] {
        detail::gbdt_predict_cpu<T>(ctx, model, X, tree_begin, tree_end, acc, GbdtOutput::Raw, MatrixView<double>());
      },
      [&] {
        detail::gbdt_predict_cuda<T>(ctx, model, X, tree_begin, tree_end, acc, GbdtOutput::Raw, MatrixView<double>());
      });
}

template <class T>
GbdtModel gbdt_borders(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode) {
  check_X(ctx, X, "X");
  TL_REQUIRE(border_count >= 1 && border_count <= 255, ValueError, "border_count must be in [1, 255], got ",
             border_count);
  return ctx.dispatch([&] { return detail::gbdt_borders_cpu<T>(ctx, X, border_count, nan_mode); },
                      [&] { return detail::gbdt_borders_cuda<T>(ctx, X, border_count, nan_mode); });
}

#define TL_GBDT_INSTANTIATE(T)                                                                                      \
  template GbdtModel gbdt_fit<T>(const Context&, MatrixView<const T>, const double*, const double*,                  \
                                 const GbdtParams&, const GbdtEvalSet<T>&, bool, GbdtFitInfo*, const GbdtCallback&,  \
                                 const GbdtModel*);                                                                  \
  template void gbdt_predict<T>(const Context&, const GbdtModel&, MatrixView<const T>, std::int64_t, GbdtOutput,     \
                                MatrixView<double>);                                                                 \
  template void gbdt_predict_stage<T>(const Context&, const GbdtModel&, MatrixView<const T>, std::int64_t,           \
                                      std::int64_t, double*);                                                        \
  template GbdtModel gbdt_borders<T>(const Context&, MatrixView<const T>, int, GbdtNanMode);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl
