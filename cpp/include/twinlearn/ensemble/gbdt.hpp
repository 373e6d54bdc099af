// Gradient-boosted decision trees, CatBoost-shaped: features quantized into
// at most 256 bins, oblivious (symmetric) trees grown level by level from
// histograms of fixed-point gradients, Newton or gradient leaf values.
//
// Every numeric mode delivers `identical` (docs/NUMERICS.md): histogram sums
// are exact int64 sums of quantized gradients, so their order does not matter
// and the CUDA backend may use integer atomics; every floating-point step is
// spelled out with tl::num operations and the project's own exp, shared by
// both backends; ties between candidate splits go to the lowest
// (feature, bin) index. The CPU and CUDA backends therefore produce the same
// model, bit for bit, for any thread count.
//
// Shapes: X is n x d (row-major view, host or device); y and sample_weight
// have n entries (host). A fitted model lives in host memory.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

enum class GbdtLoss : int {
  Logloss = 0,             // binary classification, labels 0/1, one raw output
  RMSE = 1,                // regression, one raw output
  MultiClass = 2,          // softmax over n_classes raw outputs, labels 0..n_classes-1
  CrossEntropy = 3,        // Logloss with probabilistic labels in [0, 1]
  MultiClassOneVsAll = 4,  // n_classes independent sigmoids, labels 0..n_classes-1
  Poisson = 5,             // counts (labels >= 0), log link: prediction exp(raw)
  Tweedie = 6,             // labels >= 0, log link; loss_param = variance power in (1, 2)
  Huber = 7,               // regression; loss_param = delta > 0
  // Pinball losses, one raw output, without a hessian: the trees are grown on
  // the gradients with the row's weight as its hessian; each leaf is then set
  // to learning_rate times the weighted alpha-quantile of its rows' residuals
  // y - f (gbdt::quantile_leaf_values; CatBoost's leaf_estimation_method
  // 'Exact', scikit-learn's leaves). l2_leaf_reg does not enter the leaves.
  MAE = 8,       // Quantile with alpha 0.5 (the same gradients, hence the same trees); its loss value is mean |y - f|
  Quantile = 9,  // loss_param = alpha in (0, 1); loss value: mean pinball loss
};

// Number of raw outputs of a loss (n_classes for the multiclass losses).
inline int gbdt_outputs(GbdtLoss l, int n_classes) {
  return (l == GbdtLoss::MultiClass || l == GbdtLoss::MultiClassOneVsAll) ? n_classes : 1;
}

// Where NaN feature values go. Forbidden: NaN in X is an error. Min: NaN is
// below every value (its own lowest bin; at prediction it takes the left
// branch of every split). Max: above every value (highest bin; right branch).
// Learned (Depthwise and Lossguide only): NaN has its own bin as under Min,
// and every node learns where its NaN rows go: for each candidate border b
// of a feature that has NaN in the training data, the node's gain with its
// NaN rows on the left (as Min) and on the right are both computed, and the
// larger wins (left on ties; a border b = 0, the one that separates NaN from
// every value, keeps NaN left). The choice is the split's split_nan_right.
enum class GbdtNanMode : int { Forbidden = 0, Min = 1, Max = 2, Learned = 3 };

// Row sampling per tree (CatBoost's bootstrap_type, sampling_frequency
// PerTree). The weight of row i in tree t multiplies its sample weight (and so
// its gradient and hessian) while tree t is grown; the loss values reported
// per round use the sample weights alone.
//   No:        every weight is 1 (nothing is drawn).
//   Bernoulli: weight 1 when u < subsample, else 0; u uniform in [0, 1).
//   Bayesian:  weight (-log u) ^ bagging_temperature, u uniform in (0, 1];
//              temperature 0 gives 1 everywhere, 1 exponential weights.
// The draws are pure functions of (seed, stream, position); see
// gbdt_sampling.hpp (RowSampler) and docs/NUMERICS.md.
enum class GbdtBootstrap : int { No = 0, Bernoulli = 1, Bayesian = 2 };

// The metric an eval set is scored with each round (early stopping, the best
// iteration). Loss: the loss itself (as gbdt_fit always reports). AUC: binary
// losses (Logloss, CrossEntropy), the weighted area under the ROC curve of the
// raw margins with ties counted half; a label is positive when > 0.5. Accuracy:
// classification losses, the weighted share of rows whose predicted class
// (margin > 0, or the largest margin, lowest class on ties, both on the
// margins rounded to float32, as they were before predictions were float64;
// kept so that fits keep their bits) is the label (binary: label > 0.5). RMSE,
// MAE: regression losses, on the prediction (exp of the margin under a log
// link). AUC and Accuracy are better when higher.
enum class GbdtMetric : int { Loss = 0, AUC = 1, Accuracy = 2, RMSE = 3, MAE = 4 };

// How trees grow, level by level from histograms in both cases.
//   SymmetricTree: oblivious trees, one split per level shared by all its
//     nodes: the (feature, border) whose gain summed over the level's nodes
//     is largest.
//   Depthwise: each node of a level picks its own best (feature, border) by
//     its own gain; a node splits only when that gain is > 0 (so both
//     children have rows) and passes the split constraints, else its rows
//     all go left. The tree stops at the first level where no node splits.
//   Lossguide: best-first growth within max_depth: from the root, the node
//     whose best split has the largest gain (lowest node slot on ties) among
//     the leaves so far splits next, until the tree has max_leaves leaves or
//     no leaf can split. Each node's best split depends on its rows alone,
//     so the tree is the Depthwise tree with the splits that best-first
//     growth never reaches removed (gbdt_lossguide_keep); a removed node's
//     rows all go left, as a Depthwise node that does not split.
// All keep the oblivious leaf numbering (see GbdtModel); Depthwise and
// Lossguide share the per-node layout.
enum class GbdtGrowPolicy : int { SymmetricTree = 0, Depthwise = 1, Lossguide = 2 };

const char* to_string(GbdtLoss l);
GbdtLoss parse_gbdt_loss(const std::string& s);
const char* to_string(GbdtNanMode m);
GbdtNanMode parse_gbdt_nan_mode(const std::string& s);
const char* to_string(GbdtBootstrap b);
GbdtBootstrap parse_gbdt_bootstrap(const std::string& s);
const char* to_string(GbdtMetric m);
GbdtMetric parse_gbdt_metric(const std::string& s);
const char* to_string(GbdtGrowPolicy g);
GbdtGrowPolicy parse_gbdt_grow_policy(const std::string& s);

// One split entry per node (Depthwise, Lossguide) rather than per level.
inline bool gbdt_per_node(GbdtGrowPolicy g) { return g != GbdtGrowPolicy::SymmetricTree; }

// Split entries of a tree of `depth` levels: one per level (SymmetricTree)
// or one per node, 2^depth - 1 (Depthwise, Lossguide).
inline std::int64_t gbdt_tree_splits(GbdtGrowPolicy g, int depth) {
  return gbdt_per_node(g) ? (std::int64_t(1) << depth) - 1 : depth;
}

// Lossguide's choice on a grown per-node tree of `depth` levels: split_feature
// and split_gain of its 2^depth - 1 slots (feature -1: the node does not
// split). keep[s] = 1 for the splits best-first growth makes with at most
// max_leaves leaves (max_leaves <= 0: no limit), else 0. leaf_map[j] (2^depth
// entries): the leaf that the rows of leaf j of the grown tree reach once the
// other splits are removed. Host code, the same for every backend.
void gbdt_lossguide_keep(const std::int32_t* split_feature, const double* split_gain, int depth, int max_leaves,
                         std::vector<std::uint8_t>& keep, std::vector<std::int64_t>& leaf_map);
inline bool gbdt_metric_higher_is_better(GbdtMetric m) { return m == GbdtMetric::AUC || m == GbdtMetric::Accuracy; }

struct GbdtParams {
  GbdtLoss loss = GbdtLoss::Logloss;
  int n_estimators = 1000;      // boosting rounds (trees; MultiClass trees carry n_classes outputs per leaf)
  GbdtGrowPolicy grow_policy = GbdtGrowPolicy::SymmetricTree;
  int max_depth = 6;            // levels of each tree, 1..16
  int max_leaves = 31;          // Lossguide: leaves per tree, >= 2 (0 = 2^max_depth)
  double learning_rate = 0.03;  // > 0
  double l2_leaf_reg = 3.0;     // >= 0, lambda in the leaf value -G / (H + lambda)
  int border_count = 128;       // borders per feature, 1..255 (at most border_count + 1 bins)
  GbdtNanMode nan_mode = GbdtNanMode::Min;
  int n_classes = 2;            // MultiClass, MultiClassOneVsAll: number of classes (>= 2)
  double loss_param = 0.0;      // Tweedie: variance power in (1, 2); Huber: delta > 0; Quantile: alpha in (0, 1)
  // Start from the best constant instead of 0: the weighted mean of y (RMSE,
  // Huber), its log-odds (Logloss, CrossEntropy), its log (Poisson, Tweedie),
  // its weighted median (MAE) or weighted alpha-quantile (Quantile).
  bool boost_from_average = false;
  // Early stopping on the eval set (when one is given): stop after this many
  // rounds without improvement of the eval metric; 0 = never stop early.
  int early_stopping_rounds = 0;
  // What the eval set is scored with (best_iteration, early stopping).
  GbdtMetric eval_metric = GbdtMetric::Loss;
  // Split constraints, shared by both backends (gbdt_common.hpp). A candidate
  // split of a level is rejected when, for some output, one of the leaves it
  // makes has a hessian sum that is positive and below min_child_weight
  // (0 = no constraint; a leaf with hessian sum 0 holds no rows, or only rows
  // of zero hessian, and is exempt). The tree stops growing at the first level
  // whose best split score (the sum over the level's leaves of the split gain,
  // see split_gain) is not above min_split_gain, or where every candidate is
  // rejected; its depth is then that level's index. -infinity = no constraint.
  double min_child_weight = 0.0;
  double min_split_gain = -std::numeric_limits<double>::infinity();
  // Depthwise and Lossguide only (as in CatBoost): a node's candidate split is
  // rejected when one of its children would hold fewer than this many rows
  // that take part in the tree (row weight, sample weight times bootstrap
  // weight, > 0). 1 = no constraint beyond the positive gain. Counted exactly,
  // as an extra integer channel of the histograms (only when > 1).
  int min_data_in_leaf = 1;
  // Depthwise and Lossguide only (scikit-learn's monotonic_cst and
  // interaction_cst; see gbdt_constraints.hpp and docs/NUMERICS.md).
  // monotone_constraints: empty (none) or one entry per feature, -1, 0 or 1:
  // the model's prediction is non-increasing (-1) or non-decreasing (1) in
  // that feature. Children's values are clipped to bounds inherited from
  // their ancestors, a split whose children break the constraint is
  // rejected. One-output losses other than MAE and Quantile only.
  std::vector<int> monotone_constraints;
  // interaction_constraints: empty (none) or groups of feature indices; the
  // features listed in no group form one more group. A node may split only on
  // the features of the groups that hold every feature split on along its path.
  std::vector<std::vector<int>> interaction_constraints;
  // Sampling (training only; a fitted model does not depend on how it was drawn).
  GbdtBootstrap bootstrap = GbdtBootstrap::No;
  double subsample = 1.0;            // Bernoulli: probability that a row takes part in a tree, (0, 1]
  double bagging_temperature = 1.0;  // Bayesian: >= 0
  // Random subspace: fraction of the features (of those with at least one
  // border) that tree t may split on, (0, 1]; 1 = all, nothing drawn.
  double rsm = 1.0;
  std::uint64_t seed = 0;            // of every draw above
};

// A fitted model. Tree t has depth tree_depth[t] and
// gbdt_tree_splits(grow_policy, depth) split entries starting at
// split_offset(t); its 2^depth leaves x n_outputs values start at
// leaf_offset(t). The leaf of a row is sum over levels l of
// goes_right(level l) << l, where at level l the row, whose leaf prefix
// (bits 0..l-1) is p, uses the split entry l (SymmetricTree) or
// (2^l - 1) + p (Depthwise, Lossguide: level-major, nodes in prefix order), and goes
// right when its value of split_feature exceeds split_border (NaN: right
// iff nan_mode == Max; under Learned, iff the split's split_nan_right is 1).
// A per-node tree's node that does not split has split_feature = split_bin =
// -1, split_border = split_gain = 0 (split_nan_right 0), and sends every row left. Raw prediction = base_score + sum over trees of the leaf
// values, accumulated in double in tree order.
struct GbdtModel {
  GbdtLoss loss = GbdtLoss::Logloss;
  GbdtNanMode nan_mode = GbdtNanMode::Min;
  GbdtGrowPolicy grow_policy = GbdtGrowPolicy::SymmetricTree;
  int n_features = 0;
  int n_outputs = 1;
  std::vector<double> borders;               // all features' borders, increasing within a feature
  std::vector<std::int32_t> border_offsets;  // n_features + 1: feature j's borders at [off[j], off[j+1])
  std::vector<std::int32_t> tree_depth;      // n_trees
  std::vector<std::int32_t> split_feature;   // sum of depths
  std::vector<std::int32_t> split_bin;       // index of the border within its feature's list
  std::vector<double> split_border;          // the border value itself (borders[off[f] + bin])
  std::vector<double> split_gain;            // score gain of each split when it was chosen
  // nan_mode Learned: 1 where the split sends NaN right (one entry per split;
  // only on a split of a feature whose first border is -infinity, the NaN
  // bin's, at a split_bin >= 1). Empty under every other nan_mode.
  std::vector<std::uint8_t> split_nan_right;
  std::vector<double> leaf_values;           // sum over trees of 2^depth * n_outputs
  std::vector<double> base_score;            // n_outputs
  // Training rows per leaf (sum over trees of 2^depth, the leaf order of
  // leaf_values without the outputs): the rows that took part in the tree
  // (weight gbdt::row_weight > 0: sample weight times bootstrap weight) and
  // reached the leaf, exact integers on every backend; the default SHAP
  // covers. Empty when unknown (a model built by hand, read from an older
  // file, or continued from one without counts).
  std::vector<std::int64_t> leaf_count;

  std::int64_t n_trees() const { return static_cast<std::int64_t>(tree_depth.size()); }
  // Checks that the arrays are consistent with each other (sizes, indices,
  // offsets); raises ValueError naming the first inconsistency.
  void validate() const;
};

// Training history returned beside the model.
struct GbdtFitInfo {
  std::vector<double> train_loss;    // per round, when record_train_loss
  std::vector<double> eval_loss;     // per round, when an eval set is given
  std::vector<double> eval_metric;   // per round, when an eval set is given and eval_metric != Loss
  std::int64_t best_iteration = -1;  // 0-based round with the best eval metric (-1 without eval set);
                                     // a round of this fit: an init model's trees are not counted
  bool stopped_early = false;        // by early_stopping_rounds
  bool stopped_by_callback = false;  // the callback returned false
};

// What a per-round callback sees after round `round` (0-based) has been
// added to the model. Values that cost a pass over data are computed on
// demand, at most once per round: train_loss() walks the training rows,
// eval_raw() copies the eval set's raw predictions to the host (CUDA: one
// device-to-host copy; CPU: none).
class GbdtRound {
 public:
  int round = 0;
  int n_rounds = 0;              // params.n_estimators
  bool has_eval = false;
  double eval_loss = 0.0;        // with an eval set
  double eval_metric = 0.0;      // with an eval set: the metric (eval_loss when eval_metric is Loss)
  std::int64_t best_iteration = -1;
  double best_metric = 0.0;      // the eval metric at best_iteration
  bool stopping = false;         // early stopping ends the fit after this round
  virtual double train_loss() = 0;
  virtual const double* eval_raw() = 0;  // m x n_outputs, host, valid during the call; nullptr without eval set

 protected:
  ~GbdtRound() = default;
};

// Called after every round on the thread that called gbdt_fit (never inside a
// parallel region). Returning false ends the fit after this round; an
// exception propagates out of gbdt_fit (the partial model is discarded).
using GbdtCallback = std::function<bool(GbdtRound&)>;

// Optional evaluation data for early stopping and use_best_model.
template <class T>
struct GbdtEvalSet {
  MatrixView<const T> X;           // m x d, host or device; rows == 0 means none
  const double* y = nullptr;       // m entries, host
  const double* weight = nullptr;  // m entries, host, or nullptr
};

// Fits a model. y: n labels (host; Logloss 0/1, MultiClass 0..n_classes-1,
// RMSE any finite value). weight: n non-negative weights (host) or nullptr.
// record_train_loss: also compute the training loss after every round.
// callback: called after every round (see GbdtCallback), or empty.
//
// init (or nullptr): continue boosting from this fitted model, of the same
// loss, number of outputs, nan_mode and grow_policy as params and with
// X.cols features. The fit then bins X (and the eval set) with init's
// borders (border_count is not used), starts every training and eval row's
// approximation from init's raw prediction, computed as gbdt_predict_stage
// does (base_score, then += the leaf values of init's trees in tree order, in
// double), and grows params.n_estimators new trees numbered from
// init.n_trees() on: tree init.n_trees() + t draws its rows and features
// (bootstrap, rsm) from the streams of that index. On the same X, y, weights
// and params, fitting n1 trees and continuing with n2 more therefore gives
// the model of one fit of n1 + n2 trees, bit for bit. The result holds init's
// borders and base_score, init's trees, then the new ones. The eval history
// (info) covers the new rounds only: best_iteration is a round of this fit
// (0-based, init's trees not counted) and early stopping counts from there.
template <class T>
GbdtModel gbdt_fit(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                   const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss, GbdtFitInfo* info,
                   const GbdtCallback& callback = GbdtCallback(), const GbdtModel* init = nullptr);

// The eval metric of raw margins raw (m x n_outputs, host) against labels y
// and weights w (m entries, host; w may be nullptr), for a model of `loss`
// (see GbdtMetric; Loss is not accepted here: the backends compute it). Host
// arithmetic in a fixed order: the same bits for the same inputs everywhere.
double gbdt_metric(GbdtMetric metric, GbdtLoss loss, int n_outputs, const double* raw, const double* y,
                   const double* w, std::int64_t m);

// The features tree `tree` may split on under params.rsm (1 = allowed), given
// the borders of a fit (model.border_offsets: feature j has
// border_offsets[j+1] - border_offsets[j] borders). Features without borders
// are never allowed; with rsm = 1 every other one is. Otherwise the
// k = max(1, floor(rsm * m + 1/2)) of the m features with borders whose keys
// rng::permutation_key(seed, stream, j) are smallest (ties: lower j), with
// stream = (2 << 32) | tree. The fit draws exactly this subset.
std::vector<std::uint8_t> gbdt_feature_subset(const GbdtParams& params, const std::vector<std::int32_t>& border_offsets,
                                              std::int64_t tree);

// Raw: the margin. Probability: sigmoid (Logloss, CrossEntropy), softmax
// (MultiClass), per-class sigmoids normalized to sum to 1 (OneVsAll).
// Exponent: exp of the margin (Poisson, Tweedie: the expected value).
enum class GbdtOutput : int { Raw = 0, Probability = 1, Exponent = 2 };

// Predictions of trees [0, n_trees) (n_trees < 0: all) for X (n x d, host or
// device). out: n x n_outputs float64, host or on the context's device. Per
// row, acc = base_score, then acc += leaf value of each tree in tree order,
// in double; Raw writes acc, Probability and Exponent write link(acc) with
// the link above, computed in double with the project's exp (gbdt::link,
// shared by both backends; gbdt_link on the host gives the same bits).
template <class T>
void gbdt_predict(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t n_trees,
                  GbdtOutput kind, MatrixView<double> out);

// Staged prediction: acc (n x n_outputs doubles, host) += the leaf values of
// trees [tree_begin, tree_end), tree by tree, in the same order as
// gbdt_predict. Starting from acc = base_score and adding all trees gives the
// accumulator gbdt_predict rounds.
template <class T>
void gbdt_predict_stage(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                        std::int64_t tree_end, double* acc);

// out[i] = acc[i] (Raw) or link(acc row) (Probability, Exponent), rows of
// n_outputs entries; host arrays, the same arithmetic as gbdt_predict.
void gbdt_link(GbdtLoss loss, int n_outputs, const double* acc, std::int64_t n, GbdtOutput kind, double* out);

// SHAP values (exact TreeSHAP, Lundberg et al. 2018, Algorithm 2; host code
// shared by every backend). The branches are weighed by leaf covers: the
// model's training leaf_count as doubles (LightGBM's rule, the Python
// default), or those of a reference set: gbdt_leaf_cover returns, per leaf (sum over trees of 2^depth entries, the leaf order of
// leaf_values without the outputs), the sum of the weights (nullptr: 1 per
// row) of X's rows (host) that reach it, in row order. gbdt_shap_values writes
// out (n x n_outputs x (n_features + 1), host): out[i][k][j] is feature j's
// contribution to output k's raw margin of row i (host X), out[i][k][F] the
// expected value, base_score[k] plus each tree's cover-weighted mean leaf
// value; a row's values sum to its margin up to rounding. A node's cover is
// its leaves' sum; a per-node split of feature -1 is no split (its rows go
// left); a branch of cover 0 the row does not take adds nothing. Rows run in
// parallel, each in a fixed order: the bits do not depend on the thread count.
template <class T>
std::vector<double> gbdt_leaf_cover(const Context& ctx, const GbdtModel& model, MatrixView<const T> X,
                                    const double* weight);
template <class T>
void gbdt_shap_values(const Context& ctx, const GbdtModel& model, MatrixView<const T> X,
                      const std::vector<double>& leaf_cover, double* out);

// The borders the fit would compute for X (diagnostics and tests):
// model.borders / model.border_offsets only.
template <class T>
GbdtModel gbdt_borders(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode);

}  // namespace tl
