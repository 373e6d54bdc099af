// The CPU trainer of the gradient-boosted trees, shared by the files of its
// stages: borders and bins (gbdt_cpu_borders.cpp), gradients
// (gbdt_cpu_gradients.cpp), histograms (gbdt_cpu_hist.cpp), split search
// (gbdt_cpu_split.cpp), tree growth (gbdt_cpu_tree.cpp), applying trees
// (gbdt_cpu_predict.cpp), and the fit's glue (gbdt_cpu.cpp).
//
// The CPU backend is the reference the CUDA backend is tested against: the
// same steps in the same order, with OpenMP threads deciding only who
// computes which feature or row block.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ensemble/gbdt/gbdt_constraints.hpp"
#include "ensemble/gbdt/gbdt_driver.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::gbdt_cpu {

using gbdt::kMaxBordersPadded;
constexpr std::int64_t kRowBlock = 8192;  // rows per task in row-parallel loops (results do not depend on it)
constexpr std::int64_t kHistGroupBytes = 32 << 10;  // one task's features' histogram of a leaf, at most (speed)
constexpr std::int64_t kPrefetchRows = 16;          // how far ahead the histogram loop fetches a listed row (speed)

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// fn(i) for i in [0, n): on the context's threads, or serially when the
// work (an element count) is too small to pay for a parallel region. Every
// caller's result is the same either way.
template <class Fn>
void pfor(const Context& ctx, std::int64_t n, std::int64_t work, Fn&& fn) {
  if (n <= 1 || work < (std::int64_t(1) << 15) || ctx.n_threads() == 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  parallel_for(ctx, n, fn);
}

// ---------------------------------------------------------------------------
// Borders and bins
// ---------------------------------------------------------------------------
struct Borders {
  int F = 0;
  std::vector<double> padded;  // F * kMaxBordersPadded
  std::vector<int> count;      // F
  bool nan_max = false;
};

// Per-feature NaN counts over all rows; raises on infinities, and on NaN under nan_mode Forbidden.
template <class T>
std::vector<std::int64_t> count_nan(const Context& ctx, MatrixView<const T> X, GbdtNanMode nan_mode);

// Each feature's borders: at most border_count (gbdt::select_borders over a
// sample of its rows), plus NaN's own border where the feature has NaN. With
// row weights w (non-null), gbdt::weighted_feature_borders's instead.
template <class T>
Borders compute_borders(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode,
                        const double* w);

// Feature-major bins of X under the borders B: bins[f * n + i] (gbdt::bin_of).
template <class T>
void bin_matrix(const Context& ctx, MatrixView<const T> X, const Borders& B, std::vector<std::uint8_t>& bins);

// bins (feature-major, n x F) row-major: out[i * F + f] = bins[f * n + i].
std::vector<std::uint8_t> row_major(const Context& ctx, const std::vector<std::uint8_t>& bins, std::int64_t n, int F);

// ---------------------------------------------------------------------------
// Trainer
// ---------------------------------------------------------------------------
// The trainer gbdt::run_fit drives (gbdt_driver.hpp). Its members are defined
// in the files of their stages, named below.
template <class T>
class CpuTrainer {
 public:
  // Setup, loss and model export (gbdt_cpu.cpp).
  // init: a continued fit's model (its borders bin X and the eval set), or nullptr.
  CpuTrainer(const Context& ctx, MatrixView<const T> X, const double* y, const double* w, const GbdtParams& p,
             const GbdtEvalSet<T>& eval, const GbdtModel* init = nullptr);

  // Approximations: base for every row, or a continued fit's (init->approx, init->eval_approx).
  void init(const std::vector<double>& base, const detail::GbdtInit* init) {
    approx_ = detail::start_approx(base, n_, init ? &init->approx : nullptr);
    if (has_eval_) eapprox_ = detail::start_approx(base, m_, init ? &init->eval_approx : nullptr);
  }

  const std::vector<int>& border_counts() const { return B_.count; }

  double loss(bool eval);

  // The eval set's approximations themselves: no copy on the CPU.
  const double* eval_raw() { return eapprox_.data(); }

  void export_model(GbdtModel& m, int n_trees);

  // Tree growth (gbdt_cpu_tree.cpp): the t-th tree of this fit, tree `tree` of the model.
  void grow_tree(int t, std::int64_t tree, const std::vector<int>& nb);

 private:
  // Gradients (gbdt_cpu_gradients.cpp).
  void gradients(const gbdt::RowSampler& rs);

  // hist entry (leaf, f, bin, k) at 2 * (((leaf * F + f) * Bp + bin) * D + k) (+1 for h).
  std::size_t hidx(std::int64_t leaf, std::int64_t f, std::int64_t b, int k) const {
    return static_cast<std::size_t>(2 * (((leaf * F_ + f) * Bp_ + b) * Dh_ + k));
  }

  // Histograms (gbdt_cpu_hist.cpp).
  void choose_slots(int d, const std::vector<std::int64_t>& counts);
  void build_histograms(std::int64_t L);
  void build_order(std::int64_t L);
  void add_rows(std::int64_t r0, std::int64_t r1, int f0, int f1, std::int64_t* h, std::int64_t fstride) const;
  template <bool Indexed>
  void add_pairs(const std::int32_t* rows, std::int64_t r0, std::int64_t r1, int f0, int f1, std::int64_t* h,
                 std::int64_t fstride) const;
  void subtract_siblings(std::int64_t L);

  // Split search (gbdt_cpu_split.cpp).
  void leaf_gains(std::int64_t leaf, std::int64_t f, int nb, double* tl, double* tr) const;
  void best_split(std::int64_t L, std::int32_t* bf, std::int32_t* bb, double* bg);
  void best_splits(std::int64_t L, std::int32_t* bf, std::int32_t* bb, double* bg);

  // Tree growth (gbdt_cpu_tree.cpp).
  void update_leaves(int d, const std::int32_t* sf, const std::int32_t* sb, std::vector<std::int64_t>& counts,
                     bool want_counts);
  void leaf_totals(int depth, const std::int32_t* sf, const std::int32_t* sb, bool dw,
                   std::vector<std::int64_t>& tot);
  void keep_best_first(int depth, std::vector<std::int32_t>& sf, std::vector<std::int32_t>& sb,
                       std::vector<double>& sg, std::vector<std::int64_t>& tot);
  void total_values(std::int64_t L, std::vector<double>& values);
  void count_rows(std::int64_t tree, std::int64_t L);

  // Applying a tree (gbdt_cpu_predict.cpp).
  void apply_tree(const std::vector<double>& values);
  void apply_tree_eval(int depth, const std::vector<std::int32_t>& sf, const std::vector<std::int32_t>& sb,
                       const std::vector<double>& values);

  const Context& ctx_;
  GbdtParams p_;
  std::int64_t n_;
  int F_, D_;
  int Dh_;  // histogram channels per row: D_ outputs, plus the count channel under min_data_in_leaf > 1
  const double* y_;
  const double* w_;
  Borders B_;
  std::vector<std::uint8_t> bins_;
  int Bp_ = 1;
  int depth_ = 0;
  bool has_eval_ = false;
  std::int64_t m_ = 0;
  const double* ey_ = nullptr;
  const double* ew_ = nullptr;
  std::vector<std::uint8_t> ebins_;
  std::vector<double> eapprox_;
  std::vector<double> approx_, g_, h_;
  std::vector<std::int64_t> q_;  // fixed-point (g, h) pairs, Dh_ a row
  double isg_ = 1.0, ish_ = 1.0;
  std::vector<std::int32_t> leaf_;
  std::vector<std::uint8_t> built_;
  std::vector<std::uint8_t> rbins_;          // bins_ row-major: rbins_[i * F + f]
  std::vector<std::int32_t> order_;          // build_order: the built leaves' rows, leaf after leaf
  std::vector<std::int64_t> seg_;            // build_order: leaf l's rows at order_[seg_[l] .. seg_[l + 1])
  bool listed_ = false;                      // build_order: order_ lists the rows (else positions are rows)
  std::vector<std::int64_t> blk_counts_;     // update_leaves: rows per (row block, leaf) of the next level
  std::vector<int> nb_;  // borders per feature the current tree's splits may use
  std::vector<std::uint8_t> nan_bin_;  // nan_mode Learned: 1 where feature f has a NaN bin (bin 0); else empty
  std::vector<std::int64_t> prev_, cur_;
  std::vector<std::int32_t> tree_depth_;  // per grown tree
  std::vector<std::int32_t> split_feature_, split_bin_;
  std::vector<double> split_gain_, leaf_values_;
  std::vector<std::int64_t> leaf_count_;  // per grown tree's leaf: its rows of positive weight
  gbdt::TreeConstraints cons_;  // monotonic and interaction constraints (per-node trees)
};

}  // namespace tl::gbdt_cpu
