// CUDA backend of the gradient-boosted trees: the trainer, its device
// buffers, setup, loss and model export.
// Included by gbdt_cuda.cu alone: the trainer's kernels and the host code
// that launches them form one translation unit.
#pragma once
#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cuda_common.cuh"
#include "ensemble/gbdt/gbdt_cuda_rows.cuh"
#include "ensemble/gbdt/gbdt_cuda_split.cuh"

namespace tl::gbdt_cuda {
namespace {

// ===========================================================================
// Trainer
// ===========================================================================
// The trainer gbdt::run_fit drives (gbdt_driver.hpp); grow_tree,
// keep_best_first and build_histograms are in gbdt_cuda_tree.cuh.
template <class T>
class CudaTrainer {
 public:
  // init: a continued fit's model (its borders bin X and the eval set), or nullptr.
  CudaTrainer(const Context& ctx, MatrixView<const T> X, const double* y, const double* w, const GbdtParams& p,
              const GbdtEvalSet<T>& eval, const GbdtModel* init = nullptr)
      : L_(make_launch(ctx)), p_(p), n_(X.rows), F_(static_cast<int>(X.cols)), D_(gbdt::outputs_of(p)),
        Dh_(gbdt::hist_channels(p, D_)), y_host_(y), w_host_(w) {
    const int dev = L_.dev;
    {
      auto xs = stage_to_device(ctx, X);
      if (init) {
        // A continued fit bins with the model's borders; X is checked as compute_borders_cuda checks it.
        count_nan_cuda(L_, xs.view, p.nan_mode);
        B_.F = F_;
        B_.nan_max = p.nan_mode == GbdtNanMode::Max;
        gbdt::padded_borders(*init, B_.padded, B_.count);
        B_.d_padded = to_device(B_.padded, dev, L_.stream);
        B_.d_count = to_device(B_.count, dev, L_.stream);
      } else {
        B_ = compute_borders_cuda(L_, xs.view, p.border_count, p.nan_mode, w);
      }
      bins_ = bin_matrix_cuda(L_, xs.view, B_);
    }
    const gbdt::BinExtent ext = gbdt::bin_extent(B_.count, p.max_depth);
    Bp_ = ext.bins;
    depth_ = ext.depth;
    if (p.nan_mode == GbdtNanMode::Learned) {
      const std::vector<std::uint8_t> nb = gbdt::nan_bins(B_.padded, B_.count);
      nan_bin_ = to_device(nb, dev, L_.stream);
      TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));  // nb dies here
    }
    if (eval.X.rows > 0) {
      has_eval_ = true;
      m_ = eval.X.rows;
      auto es = stage_to_device(ctx, eval.X);
      count_nan_cuda(L_, es.view, p.nan_mode);
      ebins_ = bin_matrix_cuda(L_, es.view, B_);
      ey_ = DeviceBuffer<double>(static_cast<std::size_t>(m_), dev);
      upload(ey_, eval.y, static_cast<std::size_t>(m_), L_.stream);
      if (eval.weight) {
        ew_ = DeviceBuffer<double>(static_cast<std::size_t>(m_), dev);
        upload(ew_, eval.weight, static_cast<std::size_t>(m_), L_.stream);
      }
      eapprox_ = DeviceBuffer<double>(static_cast<std::size_t>(m_ * D_), dev);
    }
    y_ = DeviceBuffer<double>(static_cast<std::size_t>(n_), dev);
    upload(y_, y, static_cast<std::size_t>(n_), L_.stream);
    if (w) {
      w_ = DeviceBuffer<double>(static_cast<std::size_t>(n_), dev);
      upload(w_, w, static_cast<std::size_t>(n_), L_.stream);
    }
    const std::size_t nD = static_cast<std::size_t>(n_ * D_);
    approx_ = DeviceBuffer<double>(nD, dev);
    g_ = DeviceBuffer<double>(nD, dev);
    h_ = DeviceBuffer<double>(nD, dev);
    q_ = DeviceBuffer<int2>(static_cast<std::size_t>(n_ * Dh_), dev);
    leaf_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(n_), dev);
    maxbits_ = DeviceBuffer<ull>(2, dev);
    const std::int64_t Lmax = depth_ > 0 ? (std::int64_t(1) << (depth_ - 1)) : 1;
    per_leaf_ = static_cast<std::int64_t>(F_) * Bp_ * Dh_ * 2;
    if (depth_ > 0) {
      prev_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(Lmax * per_leaf_), dev);
      cur_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(Lmax * per_leaf_), dev);
      tleaf_ = DeviceBuffer<double>(static_cast<std::size_t>(Lmax * F_ * Bp_), dev);
      if (nan_bin_.size()) tright_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(Lmax * F_ * Bp_), dev);
      counts_ = DeviceBuffer<ull>(static_cast<std::size_t>(std::int64_t(1) << depth_), dev);
      slot_of_leaf_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(Lmax), dev);
      leaf_of_slot_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(Lmax), dev);
      if (depth_ > 1) {
        rows_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(n_), dev);
        row_count_ = DeviceBuffer<unsigned int>(1, dev);
      }
      cand_blocks_ = static_cast<int>(std::min<std::int64_t>(1024, ceil_div(static_cast<std::int64_t>(F_) * Bp_, kBlock)));
      cand_ = DeviceBuffer<Cand>(static_cast<std::size_t>(cand_blocks_), dev);
    }
    tot_ = DeviceBuffer<ull>(static_cast<std::size_t>(2 * D_), dev);
    if (p.rsm < 1.0) nb_ = DeviceBuffer<int>(static_cast<std::size_t>(F_), dev);
    const std::size_t n_trees = static_cast<std::size_t>(p.n_estimators);
    depthwise_ = gbdt_per_node(p.grow_policy);
    lossguide_ = p.grow_policy == GbdtGrowPolicy::Lossguide;
    splits_per_tree_ = gbdt_tree_splits(p.grow_policy, depth_);
    const std::size_t nsplit = std::max<std::size_t>(1, n_trees * static_cast<std::size_t>(splits_per_tree_));
    sfeat_ = DeviceBuffer<std::int32_t>(nsplit, dev);
    sbin_ = DeviceBuffer<std::int32_t>(nsplit, dev);
    sgain_ = DeviceBuffer<double>(nsplit, dev);
    leaves_per_tree_ = (std::int64_t(1) << depth_) * D_;
    values_ = DeviceBuffer<double>(n_trees * static_cast<std::size_t>(leaves_per_tree_), dev);
    // A tree that stops early leaves the slots below its depth unwritten, and
    // export_model downloads every slot (then keeps the used ones): zero them
    // so no uninitialised device memory is read.
    TL_CUDA_CHECK(cudaMemsetAsync(sfeat_.data(), 0, sizeof(std::int32_t) * nsplit, L_.stream));
    TL_CUDA_CHECK(cudaMemsetAsync(sbin_.data(), 0, sizeof(std::int32_t) * nsplit, L_.stream));
    TL_CUDA_CHECK(cudaMemsetAsync(sgain_.data(), 0, sizeof(double) * nsplit, L_.stream));
    if (values_.size()) TL_CUDA_CHECK(cudaMemsetAsync(values_.data(), 0, sizeof(double) * values_.size(), L_.stream));
    // Tree t's leaf counts at [t * 2^depth_, + 2^its depth), added to by leaf_count_kernel.
    lcount_ = DeviceBuffer<ull>(n_trees * (std::size_t(1) << depth_), dev);
    if (lcount_.size()) TL_CUDA_CHECK(cudaMemsetAsync(lcount_.data(), 0, sizeof(ull) * lcount_.size(), L_.stream));
    cons_.setup(p, F_);
    if (cons_.active() && depth_ > 0) {  // monotonic and interaction constraints (per-node trees)
      cbounds_ = DeviceBuffer<double>(static_cast<std::size_t>(2 * Lmax), dev);
      callowed_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(Lmax * F_), dev);
      ctot_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(4 * Lmax * D_), dev);
      cmono_ = to_device(cons_.cst(), dev, L_.stream);
    }
    loss_part_ = DeviceBuffer<double>(static_cast<std::size_t>(2 * ceil_div(std::max(n_, m_), gbdt::kLossChunk)), dev);
    smem_set_ = false;
  }

  // Approximations: base for every row, or a continued fit's (init->approx, init->eval_approx).
  void init(const std::vector<double>& base, const detail::GbdtInit* init) {
    const std::vector<double> a = detail::start_approx(base, n_, init ? &init->approx : nullptr);
    upload(approx_, a.data(), a.size(), L_.stream);
    std::vector<double> e;
    if (has_eval_) {
      e = detail::start_approx(base, m_, init ? &init->eval_approx : nullptr);
      upload(eapprox_, e.data(), e.size(), L_.stream);
    }
    TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));  // the host vectors are the copies' sources
  }

  const std::vector<int>& border_counts() const { return B_.count; }

  // Tree growth (gbdt_cuda_tree.cuh): the t-th tree of this fit (its slots in
  // the split and leaf buffers), tree `tree` of the model (its sampling streams).
  void grow_tree(int t, std::int64_t tree, const std::vector<int>& nb);
  void keep_best_first(int t, int depth, std::int64_t sidx, std::int64_t nthreads, double* values);
  void exact_values(std::int64_t tree, int grown, double* values);

  double loss(bool eval) {
    const std::int64_t n = eval ? m_ : n_;
    const std::int64_t nc = ceil_div(n, gbdt::kLossChunk);
    const double* w = eval ? (ew_.data() ? ew_.data() : nullptr) : (w_.data() ? w_.data() : nullptr);
    loss_partials_kernel<<<static_cast<unsigned>(ceil_div(nc, 128)), 128, 0, L_.stream>>>(
        p_.loss, D_, p_.loss_param, n, eval ? eapprox_.data() : approx_.data(), eval ? ey_.data() : y_.data(), w,
        loss_part_.data());
    TL_CUDA_CHECK_LAUNCH("loss_partials_kernel");
    std::vector<double> part(static_cast<std::size_t>(2 * nc));
    download(part.data(), loss_part_, part.size(), L_.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));
    return gbdt::finish_loss(p_.loss, part);
  }

  // One device-to-host copy of the eval set's approximations, on demand.
  const double* eval_raw() {
    eraw_host_.resize(static_cast<std::size_t>(m_ * D_));
    download(eraw_host_.data(), eapprox_, eraw_host_.size(), L_.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));
    return eraw_host_.data();
  }

  // Tree t's splits sit in slots [t * depth_, + its depth), its leaves at
  // [t * leaves_per_tree_, + 2^depth * D) and its leaf counts at
  // [t * 2^depth_, + 2^depth): downloaded whole, then packed.
  void export_model(GbdtModel& m, int n_trees) {
    gbdt::set_borders(m, F_, B_.padded, B_.count);
    m.tree_depth.assign(tree_depth_.begin(), tree_depth_.begin() + n_trees);
    const std::size_t ns = static_cast<std::size_t>(n_trees) * static_cast<std::size_t>(splits_per_tree_);
    const std::size_t nl = static_cast<std::size_t>(n_trees) * static_cast<std::size_t>(leaves_per_tree_);
    m.split_feature.resize(ns);
    m.split_bin.resize(ns);
    m.split_gain.resize(ns);
    m.leaf_values.resize(nl);
    download(m.split_feature.data(), sfeat_, ns, L_.stream);
    download(m.split_bin.data(), sbin_, ns, L_.stream);
    download(m.split_gain.data(), sgain_, ns, L_.stream);
    download(m.leaf_values.data(), values_, nl, L_.stream);
    const std::size_t per_count = std::size_t(1) << depth_;
    std::vector<ull> lc(static_cast<std::size_t>(n_trees) * per_count);
    download(lc.data(), lcount_, lc.size(), L_.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));
    m.leaf_count.clear();
    for (int t = 0; t < n_trees; ++t)
      for (std::size_t j = 0; j < (std::size_t(1) << m.tree_depth[t]); ++j)
        m.leaf_count.push_back(static_cast<std::int64_t>(lc[t * per_count + j]));
    std::size_t so = 0, lo = 0;
    for (int t = 0; t < n_trees; ++t) {
      const int dt = m.tree_depth[t];
      const std::size_t s0 = static_cast<std::size_t>(t) * static_cast<std::size_t>(splits_per_tree_);
      const std::size_t l0 = static_cast<std::size_t>(t) * static_cast<std::size_t>(leaves_per_tree_);
      const std::size_t nlt = (std::size_t(1) << dt) * static_cast<std::size_t>(D_);
      const std::size_t nst = static_cast<std::size_t>(gbdt_tree_splits(p_.grow_policy, dt));
      for (std::size_t j = 0; j < nst; ++j) {  // so <= s0 + j: packing forward in place is safe
        m.split_feature[so + j] = m.split_feature[s0 + j];
        m.split_bin[so + j] = m.split_bin[s0 + j];
        m.split_gain[so + j] = m.split_gain[s0 + j];
      }
      for (std::size_t j = 0; j < nlt; ++j) m.leaf_values[lo + j] = m.leaf_values[l0 + j];
      so += nst;
      lo += nlt;
    }
    m.split_feature.resize(so);
    m.split_bin.resize(so);
    m.split_gain.resize(so);
    m.leaf_values.resize(lo);
  }

 private:
  void build_histograms(int d, int n_slots);  // gbdt_cuda_tree.cuh
  void constrain_level(int d, std::int64_t sidx, bool upload_next);  // gbdt_cuda_tree.cuh

  Launch L_;
  GbdtParams p_;
  std::int64_t n_;
  int F_, D_;
  int Dh_;  // histogram channels per row (gbdt::hist_channels): D_, plus a count channel under min_data_in_leaf > 1
  const double* y_host_;  // the fit's labels and weights on the host (MAE, Quantile: exact_values)
  const double* w_host_;
  std::vector<std::int32_t> leaf_host_;  // exact_values: host copies of leaf_ and approx_
  std::vector<double> approx_host_;
  DeviceBorders B_;
  DeviceBuffer<std::uint8_t> bins_;
  int Bp_ = 1;
  int depth_ = 0;
  bool has_eval_ = false;
  std::int64_t m_ = 0;
  DeviceBuffer<std::uint8_t> ebins_;
  DeviceBuffer<double> ey_, ew_, eapprox_;
  std::vector<double> eraw_host_;  // host copy of eapprox_ (eval_raw)
  std::vector<std::int32_t> tree_depth_;  // per grown tree
  DeviceBuffer<double> y_, w_, approx_, g_, h_;
  DeviceBuffer<int2> q_;          // fixed-point (g, h) per row and output
  DeviceBuffer<std::int32_t> rows_;  // rows of the built leaves (levels >= 1)
  DeviceBuffer<unsigned int> row_count_;
  DeviceBuffer<std::int32_t> leaf_;
  DeviceBuffer<ull> maxbits_, counts_, tot_;
  std::vector<int> nb_host_;  // the current tree's allowed border counts (rsm < 1), source of nb_
  DeviceBuffer<int> nb_;
  std::int64_t per_leaf_ = 0;
  DeviceBuffer<std::int64_t> prev_, cur_;
  DeviceBuffer<double> tleaf_;
  DeviceBuffer<std::int32_t> slot_of_leaf_, leaf_of_slot_;
  int cand_blocks_ = 1;
  DeviceBuffer<Cand> cand_;
  DeviceBuffer<std::int32_t> sfeat_, sbin_;
  DeviceBuffer<double> sgain_, values_;
  DeviceBuffer<ull> lcount_;  // per tree, 2^depth_ slots: its leaves' rows of positive weight
  std::int64_t leaves_per_tree_ = 1;
  bool depthwise_ = false;            // one split per node (Depthwise, Lossguide)
  bool lossguide_ = false;
  DeviceBuffer<std::int64_t> lg_tot_;  // Lossguide: the grown tree's final leaf totals
  DeviceBuffer<std::int32_t> lg_map_;  // Lossguide: grown leaf -> leaf of the cut tree
  std::int64_t splits_per_tree_ = 0;  // split slots per tree (depth_, or 2^depth_ - 1 per node)
  DeviceBuffer<double> loss_part_;
  DeviceBuffer<std::uint8_t> nan_bin_;  // nan_mode Learned: per feature, 1 where bin 0 is the NaN bin; else empty
  DeviceBuffer<std::uint8_t> tright_;   // with nan_bin_: per (leaf, f, b), 1 where NaN-right scored tleaf_
  bool smem_set_ = false;
  // Monotonic and interaction constraints: the host state (gbdt::TreeConstraints),
  // the level's bounds and allowed features on the device, the features'
  // constraints, and the level's children's totals (device, host copy).
  gbdt::TreeConstraints cons_;
  DeviceBuffer<double> cbounds_;
  DeviceBuffer<std::uint8_t> callowed_;
  DeviceBuffer<int> cmono_;
  DeviceBuffer<std::int64_t> ctot_;
  std::vector<std::int64_t> ctot_host_;
  std::vector<std::int32_t> csf_host_;  // the tree's split features so far, all slots
  double cisg_ = 1.0, cish_ = 1.0;      // the tree's inverse scales (host copy)
};

}  // namespace
}  // namespace tl::gbdt_cuda
