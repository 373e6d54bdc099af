// CUDA backend of the gradient-boosted trees: growing one tree, level by
// level, on the device (grow_tree), its histograms' launches, and
// Lossguide's cut on the host.
// Included by gbdt_cuda.cu alone: the trainer's kernels and the host code
// that launches them form one translation unit.
#pragma once
#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cuda_hist.cuh"
#include "ensemble/gbdt/gbdt_cuda_leaves.cuh"
#include "ensemble/gbdt/gbdt_cuda_rows.cuh"
#include "ensemble/gbdt/gbdt_cuda_split.cuh"
#include "ensemble/gbdt/gbdt_cuda_trainer.cuh"

namespace tl::gbdt_cuda {
namespace {

// nb[f]: the borders of feature f the split search may use (0 under rsm
// for a feature outside the tree's subset); the split kernels read it in
// place of the border counts.
template <class T>
void CudaTrainer<T>::grow_tree(int t, std::int64_t tree, const std::vector<int>& nb) {
  cudaStream_t s = L_.stream;
  const int depth = depth_;
  const int* d_nb = B_.d_count.data();
  if (nb != B_.count) {
    nb_host_ = nb;
    upload(nb_, nb_host_.data(), nb_host_.size(), s);
    d_nb = nb_.data();
  }
  TL_CUDA_CHECK(cudaMemsetAsync(maxbits_.data(), 0, 2 * sizeof(ull), s));
  gradient_kernel<<<L_.grid(n_), kBlock, 0, s>>>(p_.loss, D_, p_.loss_param, n_, approx_.data(), y_.data(),
                                                 w_.data() ? w_.data() : nullptr, gbdt::row_sampler(p_, tree),
                                                 g_.data(), h_.data(), maxbits_.data());
  TL_CUDA_CHECK_LAUNCH("gradient_kernel");
  quantize_kernel<<<L_.grid(Dh_ == D_ ? n_ * D_ : n_), kBlock, 0, s>>>(n_, D_, Dh_, g_.data(), h_.data(), maxbits_.data(),
                                                      gbdt::row_sampler(p_, tree), w_.data() ? w_.data() : nullptr,
                                                      q_.data());
  TL_CUDA_CHECK_LAUNCH("quantize_kernel");
  double* values = values_.data() + static_cast<std::int64_t>(t) * leaves_per_tree_;
  TL_CUDA_CHECK(cudaMemsetAsync(leaf_.data(), 0, sizeof(std::int32_t) * n_, s));
  if (depth == 0) {
    TL_CUDA_CHECK(cudaMemsetAsync(tot_.data(), 0, sizeof(ull) * 2 * D_, s));
    totals_kernel<<<L_.grid(n_), kBlock, 0, s>>>(n_, D_, Dh_, q_.data(), tot_.data());
    TL_CUDA_CHECK_LAUNCH("totals_kernel");
    root_values_kernel<<<static_cast<unsigned>(ceil_div(D_, kBlock)), kBlock, 0, s>>>(D_, tot_.data(), maxbits_.data(), p_.l2_leaf_reg,
                                                      p_.learning_rate, values);
    TL_CUDA_CHECK_LAUNCH("root_values_kernel");
  }
  int grown = depth;  // the tree's depth: less than depth_ when the split constraints stop it
  const bool constrained = gbdt::has_split_constraints(p_);
  const bool cons = depthwise_ && cons_.active() && depth > 0;
  if (cons) {
    // The root's bounds and allowed features up; the tree's scales down.
    cons_.start_tree(depth);
    csf_host_.assign(static_cast<std::size_t>(splits_per_tree_), -1);
    ull mb[2] = {0, 0};
    TL_CUDA_CHECK(cudaMemcpyAsync(mb, maxbits_.data(), sizeof(mb), cudaMemcpyDeviceToHost, s));
    if (cons_.monotone()) upload(cbounds_, cons_.bounds(0), 2, s);
    if (cons_.interaction()) upload(callowed_, cons_.allowed().data(), cons_.allowed().size(), s);
    TL_CUDA_CHECK(cudaStreamSynchronize(s));
    cisg_ = inv_scale_of(mb[0]);
    cish_ = inv_scale_of(mb[1]);
  }
  for (int d = 0; d < depth; ++d) {
    const std::int64_t Lv = std::int64_t(1) << d;
    const std::int64_t sidx = static_cast<std::int64_t>(t) * splits_per_tree_ + gbdt::split_slot(depthwise_, d, 0);
    slots_kernel<<<1, 1024, 0, s>>>(d, counts_.data(), slot_of_leaf_.data(), leaf_of_slot_.data());
    TL_CUDA_CHECK_LAUNCH("slots_kernel");
    TL_CUDA_CHECK(cudaMemsetAsync(cur_.data(), 0, sizeof(std::int64_t) * Lv * per_leaf_, s));
    build_histograms(d, d == 0 ? 1 : static_cast<int>(Lv / 2));
    if (d > 0) {
      const std::int64_t half = Lv / 2;
      subtract_kernel<<<L_.grid(half * per_leaf_), kBlock, 0, s>>>(half, per_leaf_, leaf_of_slot_.data(),
                                                                   prev_.data(), cur_.data());
      TL_CUDA_CHECK_LAUNCH("subtract_kernel");
    }
    TL_REQUIRE(Lv <= 65535, ValueError, "max_depth too large for the CUDA backend");
    leaf_score_kernel<<<dim3(static_cast<unsigned>(F_), static_cast<unsigned>(Lv)), kBlock, 0, s>>>(
        cur_.data(), F_, Bp_, D_, Dh_, d_nb, maxbits_.data(), p_.l2_leaf_reg, p_.min_child_weight,
        p_.min_data_in_leaf, nan_bin_.size() ? nan_bin_.data() : nullptr,
        cons && cons_.monotone() ? cbounds_.data() : nullptr, cons && cons_.monotone() ? cmono_.data() : nullptr,
        tleaf_.data(), tright_.size() ? tright_.data() : nullptr);
    TL_CUDA_CHECK_LAUNCH("leaf_score_kernel");
    const bool want = d + 1 < depth;
    const int L2 = static_cast<int>(Lv * 2);
    if (depthwise_) {
      // Every level is grown, with no host round trip (a node that does
      // not split sends its rows left); gbdt::trim_trees cuts the tree
      // after its last split, as on the CPU.
      node_best_kernel<<<static_cast<unsigned>(Lv), kBlock, 0, s>>>(
          tleaf_.data(), tright_.size() ? tright_.data() : nullptr, F_, Bp_, d_nb,
          cons && cons_.interaction() ? callowed_.data() : nullptr, p_.min_split_gain, sfeat_.data() + sidx,
          sbin_.data() + sidx, sgain_.data() + sidx);
      TL_CUDA_CHECK_LAUNCH("node_best_kernel");
      if (cons) constrain_level(d, sidx, want);
      if (want) TL_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, sizeof(ull) * L2, s));
      update_leaf_kernel<<<L_.grid(n_), kBlock, 0, s>>>(bins_.data(), n_, sfeat_.data() + sidx,
                                                        sbin_.data() + sidx, true, d, leaf_.data(), want, L2,
                                                        counts_.data());
      TL_CUDA_CHECK_LAUNCH("update_leaf_kernel");
      if (want) std::swap(prev_, cur_);
      continue;
    }
    candidate_kernel<<<static_cast<unsigned>(cand_blocks_), kBlock, 0, s>>>(tleaf_.data(), Lv, F_, Bp_, d_nb,
                                                                           cand_.data());
    TL_CUDA_CHECK_LAUNCH("candidate_kernel");
    choose_split_kernel<<<1, kBlock, 0, s>>>(cand_.data(), cand_blocks_, Bp_, sfeat_.data() + sidx,
                                             sbin_.data() + sidx, sgain_.data() + sidx);
    TL_CUDA_CHECK_LAUNCH("choose_split_kernel");
    if (constrained) {
      // The split constraints need the level's score on the host: one 8-byte copy per level.
      double score = 0.0;
      TL_CUDA_CHECK(cudaMemcpyAsync(&score, sgain_.data() + sidx, sizeof(double), cudaMemcpyDeviceToHost, s));
      TL_CUDA_CHECK(cudaStreamSynchronize(s));
      if (!gbdt::level_splits(score, p_.min_split_gain)) {
        grown = d;
        break;
      }
    }
    if (want) TL_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, sizeof(ull) * L2, s));
    update_leaf_kernel<<<L_.grid(n_), kBlock, 0, s>>>(bins_.data(), n_, sfeat_.data() + sidx, sbin_.data() + sidx,
                                                      false, d, leaf_.data(), want, L2, counts_.data());
    TL_CUDA_CHECK_LAUNCH("update_leaf_kernel");
    if (want) std::swap(prev_, cur_);
  }
  if (grown < depth) {
    const std::int64_t nthreads = (std::int64_t(1) << grown) * D_;
    total_values_kernel<<<static_cast<unsigned>(ceil_div(nthreads, kBlock)), kBlock, 0, s>>>(
        cur_.data(), F_, Bp_, D_, Dh_, std::int64_t(1) << grown, maxbits_.data(), p_.l2_leaf_reg, p_.learning_rate,
        values);
    TL_CUDA_CHECK_LAUNCH("total_values_kernel");
  } else if (depth > 0) {
    const std::int64_t sidx =
        static_cast<std::int64_t>(t) * splits_per_tree_ + gbdt::split_slot(depthwise_, depth - 1, 0);
    const std::int64_t nthreads = (std::int64_t(1) << depth) * D_;
    if (lossguide_) {
      keep_best_first(t, depth, sidx, nthreads, values);
    } else if (cons && cons_.monotone()) {
      // The leaves within their bounds, on the host from the last level's children's totals.
      std::vector<double> vals(static_cast<std::size_t>(nthreads));
      cons_.bounded_values(depth, csf_host_.data(), ctot_host_, D_, cisg_, cish_, p_.learning_rate, vals.data());
      TL_CUDA_CHECK(cudaMemcpyAsync(values, vals.data(), sizeof(double) * vals.size(), cudaMemcpyHostToDevice, s));
      TL_CUDA_CHECK(cudaStreamSynchronize(s));  // vals is the copy's source
    } else {
      leaf_values_kernel<<<static_cast<unsigned>(ceil_div(nthreads, kBlock)), kBlock, 0, s>>>(
          cur_.data(), F_, Bp_, D_, Dh_, depth, sfeat_.data() + sidx, sbin_.data() + sidx, depthwise_,
          B_.d_count.data(), maxbits_.data(), p_.l2_leaf_reg, p_.learning_rate, values);
      TL_CUDA_CHECK_LAUNCH("leaf_values_kernel");
    }
  }
  if (gbdt::exact_leaves(p_.loss)) exact_values(tree, grown, values);
  {
    const std::int64_t nl = std::int64_t(1) << grown;
    leaf_count_kernel<<<L_.grid(n_), kBlock, nl <= kCountSmemLeaves ? sizeof(unsigned int) * nl : 0, s>>>(
        n_, nl, leaf_.data(), gbdt::row_sampler(p_, tree), w_.data() ? w_.data() : nullptr,
        lcount_.data() + static_cast<std::int64_t>(t) * (std::int64_t(1) << depth_));
    TL_CUDA_CHECK_LAUNCH("leaf_count_kernel");
  }
  apply_kernel<<<L_.grid(n_), kBlock, 0, s>>>(n_, D_, leaf_.data(), values, approx_.data());
  TL_CUDA_CHECK_LAUNCH("apply_kernel");
  if (has_eval_) {
    const std::int64_t s0 = static_cast<std::int64_t>(t) * splits_per_tree_;
    apply_eval_kernel<<<L_.grid(m_), kBlock, 0, s>>>(m_, D_, grown, depthwise_, ebins_.data(), sfeat_.data() + s0,
                                                     sbin_.data() + s0, values, eapprox_.data());
    TL_CUDA_CHECK_LAUNCH("apply_eval_kernel");
  }
  tree_depth_.push_back(grown);
}

// MAE, Quantile: the leaves' values from the rows' residuals on the host
// (gbdt::quantile_leaf_values, as the CPU), from the rows' leaves and
// approximations before the tree is applied: one host round trip per tree.
template <class T>
void CudaTrainer<T>::exact_values(std::int64_t tree, int grown, double* values) {
  cudaStream_t s = L_.stream;
  const std::int64_t nl = (std::int64_t(1) << grown) * D_;
  leaf_host_.resize(static_cast<std::size_t>(n_));
  approx_host_.resize(static_cast<std::size_t>(n_));
  std::vector<double> vals(static_cast<std::size_t>(nl));
  download(leaf_host_.data(), leaf_, leaf_host_.size(), s);
  download(approx_host_.data(), approx_, approx_host_.size(), s);
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
  gbdt::quantile_leaf_values(p_, tree, leaf_host_.data(), y_host_, w_host_, approx_host_.data(), n_, nl, vals.data());
  TL_CUDA_CHECK(cudaMemcpyAsync(values, vals.data(), sizeof(double) * vals.size(), cudaMemcpyHostToDevice, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));  // vals is the copy's source
}

// Lossguide (as the CPU's keep_best_first): the grown tree's splits and
// final leaf totals to the host, gbdt::lossguide_cut there, the cut
// splits and the leaf values (from the summed totals, by the CPU's formula
// and scales) back, and every row moved to its leaf in the cut tree. One
// host round trip per tree. sidx: the last level's first split slot.
template <class T>
void CudaTrainer<T>::keep_best_first(int t, int depth, std::int64_t sidx, std::int64_t nthreads, double* values) {
  cudaStream_t s = L_.stream;
  const std::int64_t nslot = (std::int64_t(1) << depth) - 1, nleaf = std::int64_t(1) << depth;
  const std::int64_t s0 = static_cast<std::int64_t>(t) * splits_per_tree_;
  if (lg_tot_.size() < static_cast<std::size_t>(2 * nleaf * D_)) {
    lg_tot_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(2 * nleaf * D_), L_.dev);
    lg_map_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(nleaf), L_.dev);
  }
  leaf_totals_kernel<<<static_cast<unsigned>(ceil_div(nthreads, kBlock)), kBlock, 0, s>>>(
      cur_.data(), F_, Bp_, D_, Dh_, depth, sfeat_.data() + sidx, sbin_.data() + sidx, B_.d_count.data(),
      lg_tot_.data());
  TL_CUDA_CHECK_LAUNCH("leaf_totals_kernel");
  std::vector<std::int32_t> sf(static_cast<std::size_t>(nslot)), sb(sf.size());
  std::vector<double> sg(sf.size());
  std::vector<std::int64_t> tot(static_cast<std::size_t>(2 * nleaf * D_));
  ull mb[2] = {0, 0};
  TL_CUDA_CHECK(cudaMemcpyAsync(sf.data(), sfeat_.data() + s0, sizeof(std::int32_t) * nslot,
                                cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(sb.data(), sbin_.data() + s0, sizeof(std::int32_t) * nslot,
                                cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(sg.data(), sgain_.data() + s0, sizeof(double) * nslot, cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(tot.data(), lg_tot_.data(), sizeof(std::int64_t) * tot.size(),
                                cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(mb, maxbits_.data(), sizeof(mb), cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
  const std::vector<std::int64_t> map =
      gbdt::lossguide_cut(depth, p_.max_leaves, D_, sf.data(), sb.data(), sg.data(), tot);
  std::vector<double> vals(static_cast<std::size_t>(nleaf * D_));
  gbdt::values_from_totals(tot, inv_scale_of(mb[0]), inv_scale_of(mb[1]), p_.l2_leaf_reg, p_.learning_rate,
                           vals.data(), vals.size());
  if (cons_.monotone())
    cons_.bounded_values(depth, sf.data(), tot, D_, inv_scale_of(mb[0]), inv_scale_of(mb[1]), p_.learning_rate,
                         vals.data());
  std::vector<std::int32_t> map32(map.begin(), map.end());
  TL_CUDA_CHECK(cudaMemcpyAsync(sfeat_.data() + s0, sf.data(), sizeof(std::int32_t) * nslot,
                                cudaMemcpyHostToDevice, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(sbin_.data() + s0, sb.data(), sizeof(std::int32_t) * nslot,
                                cudaMemcpyHostToDevice, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(sgain_.data() + s0, sg.data(), sizeof(double) * nslot, cudaMemcpyHostToDevice, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(values, vals.data(), sizeof(double) * vals.size(), cudaMemcpyHostToDevice, s));
  TL_CUDA_CHECK(cudaMemcpyAsync(lg_map_.data(), map32.data(), sizeof(std::int32_t) * map32.size(),
                                cudaMemcpyHostToDevice, s));
  remap_leaf_kernel<<<L_.grid(n_), kBlock, 0, s>>>(n_, lg_map_.data(), leaf_.data());
  TL_CUDA_CHECK_LAUNCH("remap_leaf_kernel");
  TL_CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors above are the copies' sources
}

// Monotonic and interaction constraints after level d's node splits (slots
// from sidx) are chosen, before the rows move: its split features (and,
// under monotonic constraints, its children's totals from the level's
// histograms) to the host, gbdt::TreeConstraints::next_level there, and
// with upload_next the next level's bounds and allowed features back. One
// host round trip per level, only with constraints.
template <class T>
void CudaTrainer<T>::constrain_level(int d, std::int64_t sidx, bool upload_next) {
  cudaStream_t s = L_.stream;
  const std::int64_t L = std::int64_t(1) << d;
  std::int32_t* sf = csf_host_.data() + (L - 1);
  TL_CUDA_CHECK(cudaMemcpyAsync(sf, sfeat_.data() + sidx, sizeof(std::int32_t) * L, cudaMemcpyDeviceToHost, s));
  if (cons_.monotone()) {
    const std::int64_t nthreads = 2 * L * D_;
    leaf_totals_kernel<<<static_cast<unsigned>(ceil_div(nthreads, kBlock)), kBlock, 0, s>>>(
        cur_.data(), F_, Bp_, D_, Dh_, d + 1, sfeat_.data() + sidx, sbin_.data() + sidx, B_.d_count.data(),
        ctot_.data());
    TL_CUDA_CHECK_LAUNCH("leaf_totals_kernel");
    ctot_host_.resize(static_cast<std::size_t>(2 * nthreads));
    download(ctot_host_.data(), ctot_, ctot_host_.size(), s);
  }
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
  cons_.next_level(d, sf, ctot_host_.data(), D_, cisg_, cish_);
  if (!upload_next) return;
  if (cons_.monotone()) upload(cbounds_, cons_.bounds(d + 1), static_cast<std::size_t>(4 * L), s);
  if (cons_.interaction()) upload(callowed_, cons_.allowed().data(), cons_.allowed().size(), s);
  TL_CUDA_CHECK(cudaStreamSynchronize(s));  // the host arrays are the copies' sources
}

// Level d's histograms of the built leaves (n_slots of them). Below the
// root only the rows of built leaves are visited (about half): they are
// listed first. The shared variant takes as many features per block as a
// 48 KB histogram holds (balanced over the groups), and one wave of
// blocks: enough row shares to fill every SM at the kernel's occupancy.
// Which block adds which integers changes no result.
template <class T>
void CudaTrainer<T>::build_histograms(int d, int n_slots) {
  const bool listed = d > 0;
  if (listed) {
    TL_CUDA_CHECK(cudaMemsetAsync(row_count_.data(), 0, sizeof(unsigned int), L_.stream));
    built_rows_kernel<<<L_.grid(n_), kBlock, 0, L_.stream>>>(n_, leaf_.data(), slot_of_leaf_.data(), rows_.data(),
                                                             row_count_.data());
    TL_CUDA_CHECK_LAUNCH("built_rows_kernel");
  }
  const std::int64_t per_feature = static_cast<std::int64_t>(n_slots) * Bp_ * Dh_ * 16;
  if (per_feature <= L_.smem_optin) {
    const std::int64_t budget = std::max<std::int64_t>(48 * 1024, per_feature);
    const std::int64_t fg_max = std::max<std::int64_t>(1, std::min<std::int64_t>(F_, budget / per_feature));
    const std::int64_t groups = ceil_div(F_, fg_max);
    const int Fg = static_cast<int>(ceil_div(F_, groups));
    const std::size_t bytes = static_cast<std::size_t>(per_feature) * Fg;
    if (bytes > 48 * 1024 && !smem_set_) {
      TL_CUDA_CHECK(cudaFuncSetAttribute(hist_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         L_.smem_optin));
      smem_set_ = true;
    }
    int per_sm = 0;
    TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hist_smem_kernel, kBlock, bytes));
    const std::int64_t want = ceil_div(static_cast<std::int64_t>(std::max(per_sm, 1)) * L_.sms, groups);
    const std::int64_t shares = std::max<std::int64_t>(1, std::min<std::int64_t>({want, ceil_div(n_, kBlock), 65535}));
    const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(shares));
    hist_smem_kernel<<<grid, kBlock, bytes, L_.stream>>>(
        bins_.data(), n_, F_, Bp_, Dh_, Fg, n_slots, q_.data(), listed ? rows_.data() : nullptr,
        listed ? row_count_.data() : nullptr, leaf_.data(), slot_of_leaf_.data(), leaf_of_slot_.data(),
        reinterpret_cast<ull*>(cur_.data()));
    TL_CUDA_CHECK_LAUNCH("hist_smem_kernel");
  } else {
    hist_global_kernel<<<L_.grid(n_), kBlock, 0, L_.stream>>>(bins_.data(), n_, F_, Bp_, Dh_, q_.data(), leaf_.data(),
                                                              slot_of_leaf_.data(),
                                                              reinterpret_cast<ull*>(cur_.data()));
    TL_CUDA_CHECK_LAUNCH("hist_global_kernel");
  }
}

}  // namespace
}  // namespace tl::gbdt_cuda
