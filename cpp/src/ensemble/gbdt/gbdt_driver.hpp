// The boosting loop shared by both backends, and host helpers. A backend
// supplies a trainer (CpuTrainer, CudaTrainer) with
//   void init(const std::vector<double>& base);  // approximations := base
//   const std::vector<int>& border_counts() const; // borders per feature
//   void grow_tree(int t, const std::vector<int>& nb); // fit tree t, update approximations; its splits
//                                                // may use feature f's first nb[f] borders (0: not f)
//   double loss(bool eval);                      // canonical mean loss (RMSE: its root)
//   void export_model(GbdtModel& m, int n_trees);// splits and leaves of trees [0, n_trees)
// and run_fit drives it: base score, rounds, early stopping.
#pragma once
#include <cstdint>
#include <vector>

#include "ensemble/gbdt/gbdt_common.hpp"

namespace tl::gbdt {

// Starting raw prediction per output: 0, or with boost_from_average the
// weighted mean of y (RMSE) or its log-odds (Logloss), from the canonical
// column reduction (the same bits on every backend and thread count).
std::vector<double> base_score(const GbdtParams& p, int n_outputs, const double* y, const double* w, std::int64_t n,
                               int n_threads);

// Sum of (weighted loss, weight) chunk partials along the canonical pairwise
// tree; returns the mean loss (the root of the mean for RMSE). partials holds
// 2 doubles per chunk and is consumed.
double finish_loss(GbdtLoss loss, std::vector<double>& partials);

// Per-tree offsets into the split and leaf arrays (n_trees + 1 entries each).
void tree_offsets(const GbdtModel& m, std::vector<std::int64_t>* split_off, std::vector<std::int64_t>* leaf_off);

// Borders in the padded layout (kMaxBordersPadded per feature) to the model's
// compact layout.
void set_borders(GbdtModel& m, int n_features, const std::vector<double>& padded, const std::vector<int>& counts);

// split_border from split_feature / split_bin and the borders.
void fill_split_borders(GbdtModel& m);

// The border counts tree t's split search may use: counts, with the features
// outside gbdt_feature_subset (rsm < 1) set to 0. Drawn on the host, the same
// for every backend.
std::vector<int> allowed_counts(const GbdtParams& p, const std::vector<int>& counts, std::int64_t tree);

// Number of outputs for a loss.
inline int outputs_of(const GbdtParams& p) { return gbdt_outputs(p.loss, p.n_classes); }

template <class Trainer>
GbdtModel run_fit(Trainer& tr, const GbdtParams& p, const double* y, const double* w, std::int64_t n, bool has_eval,
                  bool record_train_loss, int n_threads, GbdtFitInfo* info) {
  GbdtModel model;
  model.loss = p.loss;
  model.nan_mode = p.nan_mode;
  model.n_outputs = outputs_of(p);
  model.base_score = base_score(p, model.n_outputs, y, w, n, n_threads);
  tr.init(model.base_score);
  GbdtFitInfo local;
  GbdtFitInfo& fi = info ? *info : local;
  fi = GbdtFitInfo{};
  double best = 0.0;
  int done = 0;
  const std::vector<int> counts = tr.border_counts();
  for (int t = 0; t < p.n_estimators; ++t) {
    tr.grow_tree(t, p.rsm < 1.0 ? allowed_counts(p, counts, t) : counts);
    done = t + 1;
    if (record_train_loss) fi.train_loss.push_back(tr.loss(false));
    if (has_eval) {
      const double l = tr.loss(true);
      fi.eval_loss.push_back(l);
      if (fi.best_iteration < 0 || l < best) {
        best = l;
        fi.best_iteration = t;
      }
      if (p.early_stopping_rounds > 0 && t - fi.best_iteration >= p.early_stopping_rounds) {
        fi.stopped_early = t + 1 < p.n_estimators;
        break;
      }
    }
  }
  tr.export_model(model, done);
  fill_split_borders(model);
  return model;
}

}  // namespace tl::gbdt
