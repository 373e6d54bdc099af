// CPU backend of the gradient-boosted trees: the fit's glue. The trainer's
// setup, loss and model export, and the backend's fit entry point, which
// gbdt::run_fit drives (gbdt_driver.hpp). The stages are in the files
// gbdt_cpu_trainer.hpp lists.
#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"

namespace tl::gbdt_cpu {

template <class T>
CpuTrainer<T>::CpuTrainer(const Context& ctx, MatrixView<const T> X, const double* y, const double* w,
                          const GbdtParams& p, const GbdtEvalSet<T>& eval, const GbdtModel* init)
    : ctx_(ctx), p_(p), n_(X.rows), F_(static_cast<int>(X.cols)), D_(gbdt::outputs_of(p)),
      Dh_(gbdt::hist_channels(p, D_)), y_(y), w_(w) {
  if (init) {
    // A continued fit bins with the model's borders; X is checked as compute_borders checks it.
    count_nan(ctx, X, p.nan_mode);
    B_.F = F_;
    B_.nan_max = p.nan_mode == GbdtNanMode::Max;
    gbdt::padded_borders(*init, B_.padded, B_.count);
  } else {
    B_ = compute_borders(ctx, X, p.border_count, p.nan_mode, w);
  }
  bin_matrix(ctx, X, B_, bins_);
  const gbdt::BinExtent ext = gbdt::bin_extent(B_.count, p.max_depth);
  Bp_ = ext.bins;
  depth_ = ext.depth;
  if (p.nan_mode == GbdtNanMode::Learned) nan_bin_ = gbdt::nan_bins(B_.padded, B_.count);
  if (eval.X.rows > 0) {
    has_eval_ = true;
    m_ = eval.X.rows;
    ey_ = eval.y;
    ew_ = eval.weight;
    count_nan(ctx, eval.X, p.nan_mode);
    bin_matrix(ctx, eval.X, B_, ebins_);
  }
  const std::size_t nD = static_cast<std::size_t>(n_ * D_);
  approx_.resize(nD);
  g_.resize(nD);
  h_.resize(nD);
  q_.resize(static_cast<std::size_t>(n_ * 2 * Dh_));
  rbins_ = row_major(ctx, bins_, n_, F_);
  cons_.setup(p, F_);
  leaf_.resize(static_cast<std::size_t>(n_));
  if (depth_ > 0) {
    const std::size_t hs = (std::size_t(1) << (depth_ - 1)) * F_ * Bp_ * Dh_ * 2;
    prev_.resize(hs);
    cur_.resize(hs);
  }
}

template <class T>
double CpuTrainer<T>::loss(bool eval) {
  const std::int64_t n = eval ? m_ : n_;
  const double* a = eval ? eapprox_.data() : approx_.data();
  const double* y = eval ? ey_ : y_;
  const double* w = eval ? ew_ : w_;
  const std::int64_t nc = ceil_div(n, gbdt::kLossChunk);
  std::vector<double> part(static_cast<std::size_t>(2 * nc));
  pfor(ctx_, nc, n * D_ * 8, [&](std::int64_t c) {
    double s = 0.0, ws = 0.0;
    const std::int64_t r1 = std::min(n, (c + 1) * gbdt::kLossChunk);
    for (std::int64_t i = c * gbdt::kLossChunk; i < r1; ++i) {
      const double wi = w ? w[i] : 1.0;
      s = num::add(s, num::mul(wi, gbdt::row_loss(p_.loss, D_, a + i * D_, y[i], p_.loss_param)));
      ws = num::add(ws, wi);
    }
    part[2 * c] = s;
    part[2 * c + 1] = ws;
  });
  return gbdt::finish_loss(p_.loss, part);
}

template <class T>
void CpuTrainer<T>::export_model(GbdtModel& m, int n_trees) {
  gbdt::set_borders(m, F_, B_.padded, B_.count);
  m.tree_depth.assign(tree_depth_.begin(), tree_depth_.begin() + n_trees);
  std::size_t ns = 0, nl = 0;
  for (int t = 0; t < n_trees; ++t) {
    ns += static_cast<std::size_t>(gbdt_tree_splits(p_.grow_policy, tree_depth_[t]));
    nl += (std::size_t(1) << tree_depth_[t]) * D_;
  }
  m.leaf_count.assign(leaf_count_.begin(), leaf_count_.begin() + static_cast<std::ptrdiff_t>(nl / D_));
  m.split_feature.assign(split_feature_.begin(), split_feature_.begin() + ns);
  m.split_bin.assign(split_bin_.begin(), split_bin_.begin() + ns);
  m.split_gain.assign(split_gain_.begin(), split_gain_.begin() + ns);
  m.leaf_values.assign(leaf_values_.begin(), leaf_values_.begin() + nl);
}

// The members defined here and in the class; each stage's file instantiates its own.
template class CpuTrainer<float>;
template class CpuTrainer<double>;

}  // namespace tl::gbdt_cpu

namespace tl::detail {

template <class T>
GbdtModel gbdt_fit_cpu(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                       const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                       GbdtFitInfo* info, const GbdtCallback& callback, const GbdtInit* init) {
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  gbdt_cpu::CpuTrainer<T> tr(ctx, X, y, weight, params, eval, init ? init->model : nullptr);
  return gbdt::run_fit(tr, params, y, weight, X.rows, eval.y, eval.weight, eval.X.rows, record_train_loss,
                       ctx.n_threads(), info, callback, init);
}

#define TL_GBDT_INSTANTIATE(T)                                                                          \
  template GbdtModel gbdt_fit_cpu<T>(const Context&, MatrixView<const T>, const double*, const double*, \
                                     const GbdtParams&, const GbdtEvalSet<T>&, bool, GbdtFitInfo*,      \
                                     const GbdtCallback&, const GbdtInit*);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::detail
