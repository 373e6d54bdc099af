// The boosting loop shared by both backends, and host helpers. A backend
// supplies a trainer (CpuTrainer, CudaTrainer) with
//   void init(const std::vector<double>& base, const detail::GbdtInit* init);
//                                                // approximations := base, or init's (approx, eval_approx)
//   const std::vector<int>& border_counts() const; // borders per feature
//   void grow_tree(int t, std::int64_t tree, const std::vector<int>& nb);
//                                                // fit the t-th tree of this fit, tree `tree` of the model
//                                                // (its sampling streams), update approximations; its splits
//                                                // may use feature f's first nb[f] borders (0: not f)
//   double loss(bool eval);                      // canonical mean loss (RMSE: its root)
//   const double* eval_raw();                    // the eval set's raw predictions (m x D) on the host,
//                                                // valid until the next grow_tree (CUDA: one copy)
//   void export_model(GbdtModel& m, int n_trees);// splits, leaves and leaf_count of trees [0, n_trees)
// and run_fit drives it: base score, rounds, eval metric, early stopping,
// the per-round callback.
#pragma once
#include <cstdint>
#include <vector>

#include "ensemble/gbdt/gbdt_common.hpp"

namespace tl::gbdt {

// Starting raw prediction per output: 0, or with boost_from_average the
// weighted mean of y (RMSE) or its log-odds (Logloss), from the canonical
// column reduction (the same bits on every backend and thread count), or the
// weighted quantile of y (MAE, Quantile; see weighted_quantile).
std::vector<double> base_score(const GbdtParams& p, int n_outputs, const double* y, const double* w, std::int64_t n,
                               int n_threads);

// The weighted alpha-quantile of y[0..n) (w: weights or nullptr for 1): the
// smallest y_i among rows of positive weight such that the weights of the rows
// with y_j <= y_i sum to at least alpha times the total weight (a minimizer of
// the weighted pinball loss; for alpha = 1/2 the lower weighted median). Host
// code: a stable sort by value and sequential sums in that order.
double weighted_quantile(const double* y, const double* w, std::int64_t n, double alpha);

// The losses whose leaves are set from the rows' residuals instead of the
// gradient totals: MAE and Quantile (no hessian).
inline bool exact_leaves(GbdtLoss l) { return l == GbdtLoss::MAE || l == GbdtLoss::Quantile; }

// Exact leaves of tree `tree` (MAE, Quantile; one output), as scikit-learn's
// and CatBoost's default: once the tree's structure is grown on the
// gradients, values[j] = learning_rate * the weighted alpha-quantile
// (weighted_quantile; alpha 1/2 for MAE) of the residuals y_i - approx_i of
// the rows i with leaf[i] == j, each weighted by its weight in the tree
// (gbdt::row_weight: sample weight times bootstrap weight); 0 for a leaf
// without a row of positive weight. l2_leaf_reg does not enter. Host code on
// the rows' leaves and approximations before the tree is applied: a counting
// sort by leaf in row order, then weighted_quantile per leaf, so every
// backend with the same approximations gets the same bits.
void quantile_leaf_values(const GbdtParams& p, std::int64_t tree, const std::int32_t* leaf, const double* y,
                          const double* w, const double* approx, std::int64_t n, std::int64_t n_leaves,
                          double* values);

// Sum of (weighted loss, weight) chunk partials along the canonical pairwise
// tree; returns the mean loss (the root of the mean for RMSE). partials holds
// 2 doubles per chunk and is consumed.
double finish_loss(GbdtLoss loss, std::vector<double>& partials);

// Per-tree offsets into the split and leaf arrays (n_trees + 1 entries each).
void tree_offsets(const GbdtModel& m, std::vector<std::int64_t>* split_off, std::vector<std::int64_t>* leaf_off);

// Borders in the padded layout (kMaxBordersPadded per feature) to the model's
// compact layout.
void set_borders(GbdtModel& m, int n_features, const std::vector<double>& padded, const std::vector<int>& counts);

// split_border from split_feature / split_bin and the borders (0 for a
// Depthwise node that does not split).
void fill_split_borders(GbdtModel& m);

// The model's borders in the padded layout (kMaxBordersPadded per feature,
// +infinity past each feature's count), as the backends' border selections
// leave them: the inverse of set_borders. A continued fit bins with these.
void padded_borders(const GbdtModel& m, std::vector<double>& padded, std::vector<int>& counts);

// A continued fit's result: init's trees put before m's (the new trees), and
// init's borders and base_score. split_gain: init's entries, or 0 where init
// has none. leaf_count: init's then m's, or empty where init has none.
void prepend_trees(GbdtModel& m, const GbdtModel& init);

// nan_mode Learned: per feature, 1 where its padded borders (count[f] of
// them) start with the NaN bin's border (gbdt::has_nan_bin), else 0.
std::vector<std::uint8_t> nan_bins(const std::vector<double>& padded, const std::vector<int>& count);

// Bin slots per feature in the histogram layout (the most borders of any
// feature, plus one) and the depth the trees grow to: max_depth, or 0 when
// no feature has a border (nothing can split).
struct BinExtent {
  int bins = 1;
  int depth = 0;
};
BinExtent bin_extent(const std::vector<int>& count, int max_depth);

// split_bin from the split codes the backends export there (see
// gbdt::kNanRight), and under nan_mode Learned split_nan_right from their
// flags. Before trim_trees.
void split_nan_from_codes(GbdtModel& m);

// Depthwise trees are grown to max_depth, a node that does not split sending
// its rows left; this cuts each tree after its last level with a split (the
// rows of leaf p of that level all reach leaf p below it, whose value is then
// the same: the leaves at and above 2^depth hold no rows; leaf_count, when
// present, sums each leaf j of the grown tree into leaf j mod 2^depth of the
// cut one). The same model, smaller. SymmetricTree models are left as they are.
void trim_trees(GbdtModel& m);

// Lossguide on a grown per-node tree of `depth` levels (sf, sb, sg: its
// 2^depth - 1 split slots; tot: its final leaves' fixed-point gradient and
// hessian sums, 2 per leaf and output): removes the splits best-first growth
// does not make (gbdt_lossguide_keep; feature and bin -1, gain 0) and sums
// tot into the leaves of the cut tree (integers: exact). Returns the leaf map
// (grown leaf -> leaf of the cut tree) for moving the rows.
std::vector<std::int64_t> lossguide_cut(int depth, int max_leaves, int n_outputs, std::int32_t* sf, std::int32_t* sb,
                                        double* sg, std::vector<std::int64_t>& tot);

// values[e] = the leaf value of the fixed-point sums tot[2e], tot[2e + 1]
// (inverse quantization scales isg, ish), for e < count.
void values_from_totals(const std::vector<std::int64_t>& tot, double isg, double ish, double l2_leaf_reg,
                        double learning_rate, double* values, std::size_t count);

// The border counts tree t's split search may use: counts, with the features
// outside gbdt_feature_subset (rsm < 1) set to 0. Drawn on the host, the same
// for every backend.
std::vector<int> allowed_counts(const GbdtParams& p, const std::vector<int>& counts, std::int64_t tree);

// Number of outputs for a loss.
inline int outputs_of(const GbdtParams& p) { return gbdt_outputs(p.loss, p.n_classes); }

// The GbdtRound a callback sees: train loss and eval predictions on demand,
// each computed at most once per round.
template <class Trainer>
class RoundView final : public GbdtRound {
 public:
  explicit RoundView(Trainer& tr) : tr_(tr) {}
  void next_round(int t) {
    round = t;
    have_train_ = false;
    raw_ = nullptr;
    stopping = false;
  }
  double train_loss() override {
    if (!have_train_) {
      train_ = tr_.loss(false);
      have_train_ = true;
    }
    return train_;
  }
  const double* eval_raw() override {
    if (!has_eval) return nullptr;
    if (!raw_) raw_ = tr_.eval_raw();
    return raw_;
  }

 private:
  Trainer& tr_;
  bool have_train_ = false;
  double train_ = 0.0;
  const double* raw_ = nullptr;
};

// ey, ew: the eval set's labels and weights (host; m = 0 without eval set).
// init: a continued fit (gbdt_fit's init), or nullptr. The new trees are
// numbered from init's tree count on; base_score is init's.
template <class Trainer>
GbdtModel run_fit(Trainer& tr, const GbdtParams& p, const double* y, const double* w, std::int64_t n,
                  const double* ey, const double* ew, std::int64_t m, bool record_train_loss, int n_threads,
                  GbdtFitInfo* info, const GbdtCallback& callback, const detail::GbdtInit* init = nullptr) {
  GbdtModel model;
  model.loss = p.loss;
  model.nan_mode = p.nan_mode;
  model.grow_policy = p.grow_policy;
  model.n_outputs = outputs_of(p);
  model.base_score = init ? init->model->base_score : base_score(p, model.n_outputs, y, w, n, n_threads);
  const std::int64_t t0 = init ? init->model->n_trees() : 0;
  tr.init(model.base_score, init);
  GbdtFitInfo local;
  GbdtFitInfo& fi = info ? *info : local;
  fi = GbdtFitInfo{};
  const bool has_eval = m > 0;
  const bool host_metric = has_eval && p.eval_metric != GbdtMetric::Loss;
  const bool higher = gbdt_metric_higher_is_better(p.eval_metric);
  RoundView<Trainer> view(tr);
  view.n_rounds = p.n_estimators;
  view.has_eval = has_eval;
  double best = 0.0;
  int done = 0;
  const std::vector<int> counts = tr.border_counts();
  for (int t = 0; t < p.n_estimators; ++t) {
    tr.grow_tree(t, t0 + t, p.rsm < 1.0 ? allowed_counts(p, counts, t0 + t) : counts);
    done = t + 1;
    view.next_round(t);
    if (record_train_loss) fi.train_loss.push_back(view.train_loss());
    bool stop = false;
    if (has_eval) {
      const double l = tr.loss(true);
      fi.eval_loss.push_back(l);
      double v = l;
      if (host_metric) {
        v = gbdt_metric(p.eval_metric, p.loss, model.n_outputs, view.eval_raw(), ey, ew, m);
        fi.eval_metric.push_back(v);
      }
      if (fi.best_iteration < 0 || (higher ? v > best : v < best)) {
        best = v;
        fi.best_iteration = t;
      }
      view.eval_loss = l;
      view.eval_metric = v;
      view.best_iteration = fi.best_iteration;
      view.best_metric = best;
      if (p.early_stopping_rounds > 0 && t - fi.best_iteration >= p.early_stopping_rounds) {
        fi.stopped_early = t + 1 < p.n_estimators;
        stop = true;
      }
    }
    if (callback) {
      view.stopping = stop;
      if (!callback(view) && !stop) {
        fi.stopped_by_callback = t + 1 < p.n_estimators;
        stop = true;
      }
    }
    if (stop) break;
  }
  tr.export_model(model, done);
  split_nan_from_codes(model);
  trim_trees(model);
  fill_split_borders(model);
  if (init) prepend_trees(model, *init->model);
  return model;
}

}  // namespace tl::gbdt
