// CPU backend of the gradient-boosted trees: growing one tree level by
// level (grow_tree), the rows' leaves after each level's split, and the
// final leaves' totals and values.
#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"

namespace tl::gbdt_cpu {
namespace {

// cnt[leaf[i]] += 1 for i < m (m <= kRowBlock). With few leaves, four
// tables take the rows in turn, so that a run of rows in one leaf does not
// wait on each increment before the next.
void count_leaves(const std::int32_t* leaf, std::int64_t m, std::int64_t L, std::int64_t* cnt) {
  constexpr std::int64_t kMaxL = 256;
  if (L > kMaxL) {
    for (std::int64_t i = 0; i < m; ++i) cnt[leaf[i]] += 1;
    return;
  }
  std::int32_t t[4][kMaxL];
  for (auto& ti : t) std::fill(ti, ti + L, 0);
  std::int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    ++t[0][leaf[i]];
    ++t[1][leaf[i + 1]];
    ++t[2][leaf[i + 2]];
    ++t[3][leaf[i + 3]];
  }
  for (; i < m; ++i) ++t[0][leaf[i]];
  for (std::int64_t l = 0; l < L; ++l) cnt[l] += t[0][l] + t[1][l] + t[2][l] + t[3][l];
}

}  // namespace

// nb[f]: the borders of feature f the split search may use (0 under rsm
// for a feature outside the tree's subset).
template <class T>
void CpuTrainer<T>::grow_tree(int /*t*/, std::int64_t tree, const std::vector<int>& nb) {
  nb_ = nb;
  gradients(gbdt::row_sampler(p_, tree));
  const int depth = depth_;
  const std::int64_t nleaves = std::int64_t(1) << depth;
  const bool dw = gbdt_per_node(p_.grow_policy);
  const std::int64_t nsplit = gbdt_tree_splits(p_.grow_policy, depth);
  std::vector<std::int32_t> sf(static_cast<std::size_t>(nsplit)), sb(static_cast<std::size_t>(nsplit));
  std::vector<double> sg(static_cast<std::size_t>(nsplit));
  std::vector<double> values(static_cast<std::size_t>(nleaves * D_));
  std::fill(leaf_.begin(), leaf_.end(), 0);
  if (depth == 0) {
    // No feature can split: one leaf from the totals.
    std::vector<std::int64_t> G(D_, 0), H(D_, 0);
    for (std::int64_t i = 0; i < n_; ++i)
      for (int k = 0; k < D_; ++k) {
        G[k] += q_[2 * (i * Dh_ + k)];
        H[k] += q_[2 * (i * Dh_ + k) + 1];
      }
    for (int k = 0; k < D_; ++k)
      values[k] = gbdt::leaf_value(gbdt::dequantize(G[k], isg_), gbdt::dequantize(H[k], ish_), p_.l2_leaf_reg,
                                   p_.learning_rate);
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nleaves), 0);
  int grown = depth;  // the tree's depth: less than depth_ when the split constraints stop it
  const bool constrained = gbdt::has_split_constraints(p_);
  if (dw && cons_.active()) cons_.start_tree(depth);
  for (int d = 0; d < depth; ++d) {
    const std::int64_t L = std::int64_t(1) << d;
    choose_slots(d, counts);
    build_histograms(L);
    if (d > 0) subtract_siblings(L);
    if (dw) {
      // Every level is grown (a node that does not split sends its rows
      // left); gbdt::trim_trees drops the levels below the last split.
      const std::int64_t o = L - 1;
      best_splits(L, sf.data() + o, sb.data() + o, sg.data() + o);
      if (cons_.active()) {
        // The next level's bounds (from the children's sums) and allowed features.
        std::vector<std::int64_t> ctot;
        if (cons_.monotone()) leaf_totals(d + 1, sf.data() + o, sb.data() + o, true, ctot);
        cons_.next_level(d, sf.data() + o, ctot.data(), D_, isg_, ish_);
      }
      update_leaves(d, sf.data() + o, sb.data() + o, counts, d + 1 < depth);
      if (d + 1 < depth) std::swap(prev_, cur_);
      continue;
    }
    best_split(L, &sf[d], &sb[d], &sg[d]);
    if (constrained && !gbdt::level_splits(sg[d], p_.min_split_gain)) {
      grown = d;
      break;
    }
    update_leaves(d, &sf[d], &sb[d], counts, d + 1 < depth);
    if (d + 1 < depth) std::swap(prev_, cur_);
  }
  if (grown < depth) {
    // Stopped at level `grown`: its 2^grown leaves keep the values of their totals.
    sf.resize(grown);
    sb.resize(grown);
    sg.resize(grown);
    values.resize(static_cast<std::size_t>((std::int64_t(1) << grown) * D_));
    total_values(std::int64_t(1) << grown, values);
  } else if (depth > 0) {
    const std::int64_t o = gbdt::split_slot(dw, depth - 1, 0);
    std::vector<std::int64_t> tot;
    leaf_totals(depth, sf.data() + o, sb.data() + o, dw, tot);
    if (p_.grow_policy == GbdtGrowPolicy::Lossguide) keep_best_first(depth, sf, sb, sg, tot);
    gbdt::values_from_totals(tot, isg_, ish_, p_.l2_leaf_reg, p_.learning_rate, values.data(), values.size());
    if (cons_.monotone())
      cons_.bounded_values(depth, sf.data(), tot, D_, isg_, ish_, p_.learning_rate, values.data());
  }
  if (gbdt::exact_leaves(p_.loss))
    gbdt::quantile_leaf_values(p_, tree, leaf_.data(), y_, w_, approx_.data(), n_,
                               static_cast<std::int64_t>(values.size()), values.data());
  count_rows(tree, std::int64_t(1) << grown);
  apply_tree(values);
  if (has_eval_) apply_tree_eval(grown, sf, sb, values);
  tree_depth_.push_back(grown);
  split_feature_.insert(split_feature_.end(), sf.begin(), sf.end());
  split_bin_.insert(split_bin_.end(), sb.begin(), sb.end());
  split_gain_.insert(split_gain_.end(), sg.begin(), sg.end());
  leaf_values_.insert(leaf_values_.end(), values.begin(), values.end());
}

// Level d's split: sf[0], sb[0] for every leaf (SymmetricTree) or sf[p],
// sb[p] for the leaf with prefix p (Depthwise; feature -1: no split).
template <class T>
void CpuTrainer<T>::update_leaves(int d, const std::int32_t* sf, const std::int32_t* sb,
                                  std::vector<std::int64_t>& counts, bool want_counts) {
  const bool dw = gbdt_per_node(p_.grow_policy);
  const std::int64_t nb = ceil_div(n_, kRowBlock);
  const std::int64_t L2 = std::int64_t(2) << d;
  std::vector<std::int64_t>& part = blk_counts_;
  part.assign(want_counts ? static_cast<std::size_t>(nb * L2) : 0, 0);
  const std::int32_t f0 = sf[0], b0 = sb[0];  // the level's split (SymmetricTree), read once
  pfor(ctx_, nb, n_, [&](std::int64_t blk) {
    const std::int64_t r0 = blk * kRowBlock, r1 = std::min(n_, r0 + kRowBlock);
    std::int32_t* __restrict__ lf = leaf_.data();
    const int shift = d;  // locals, which the stores into leaf_ cannot change: the loop vectorizes
    if (!dw) {
      // One split for every row: a branch-free pass over the split feature's bins.
      if (f0 >= 0) {
        const std::uint8_t* __restrict__ col = bins_.data() + static_cast<std::int64_t>(f0) * n_;
        const std::int32_t code = b0;
        for (std::int64_t i = r0; i < r1; ++i)
          lf[i] += static_cast<std::int32_t>(gbdt::bin_right(col[i], code)) << shift;
      }
    } else {
      // Per node: the leaf's own split (feature -1: the row stays left),
      // without branches on the data (a right-or-left branch mispredicts
      // half the time); the row's bins side by side (rbins_).
      const std::uint8_t* rb = rbins_.data();
      const std::int64_t F = F_;
      for (std::int64_t i = r0; i < r1; ++i) {
        const std::int32_t leaf = lf[i];
        const std::int32_t f = sf[leaf];
        const int bin = rb[i * F + (f < 0 ? 0 : f)];
        const int right = static_cast<int>(f >= 0) & static_cast<int>(gbdt::bin_right(bin, sb[leaf]));
        lf[i] = leaf + (right << shift);
      }
    }
    if (want_counts) count_leaves(lf + r0, r1 - r0, L2, part.data() + blk * L2);
  });
  if (!want_counts) return;
  std::fill(counts.begin(), counts.begin() + L2, 0);
  for (std::int64_t blk = 0; blk < nb; ++blk)
    for (std::int64_t l = 0; l < L2; ++l) counts[l] += part[blk * L2 + l];
}

// Fixed-point gradient and hessian totals (tot[2 * (j * D + k)], + 1) of
// the final leaves j from the last level's histograms, leaf p's split at
// (sf[0], sb[0]) (SymmetricTree) or (sf[p], sb[p]) (per node; feature -1:
// every row left, the totals from feature 0).
template <class T>
void CpuTrainer<T>::leaf_totals(int depth, const std::int32_t* sf, const std::int32_t* sb, bool dw,
                                std::vector<std::int64_t>& tot) {
  const std::int64_t L = std::int64_t(1) << (depth - 1);
  tot.assign(static_cast<std::size_t>(4 * L * D_), 0);
  for (std::int64_t j = 0; j < 2 * L; ++j) {
    const std::int64_t p = j % L;
    const bool right = j >= L;
    const std::int32_t f0 = sf[dw ? p : 0];
    const int f = f0 < 0 ? 0 : f0;
    const int b = f0 < 0 ? Bp_ : sb[dw ? p : 0];
    const int last = f0 < 0 ? Bp_ - 1 : B_.count[f];
    for (int k = 0; k < D_; ++k) {
      std::int64_t GL = 0, HL = 0, Gt = 0, Ht = 0;
      for (int bin = 0; bin <= last; ++bin) {
        const std::int64_t g = cur_[hidx(p, f, bin, k)], h = cur_[hidx(p, f, bin, k) + 1];
        Gt += g;
        Ht += h;
        if (!gbdt::bin_right(bin, b)) {
          GL += g;
          HL += h;
        }
      }
      tot[2 * (j * D_ + k)] = right ? Gt - GL : GL;
      tot[2 * (j * D_ + k) + 1] = right ? Ht - HL : HL;
    }
  }
}

// Lossguide: the cut tree (gbdt::lossguide_cut), each row moved to its leaf in it.
template <class T>
void CpuTrainer<T>::keep_best_first(int depth, std::vector<std::int32_t>& sf, std::vector<std::int32_t>& sb,
                                    std::vector<double>& sg, std::vector<std::int64_t>& tot) {
  const std::vector<std::int64_t> map =
      gbdt::lossguide_cut(depth, p_.max_leaves, D_, sf.data(), sb.data(), sg.data(), tot);
  pfor(ctx_, ceil_div(n_, kRowBlock), n_, [&](std::int64_t blk) {
    const std::int64_t r1 = std::min(n_, (blk + 1) * kRowBlock);
    for (std::int64_t i = blk * kRowBlock; i < r1; ++i) leaf_[i] = static_cast<std::int32_t>(map[leaf_[i]]);
  });
}

// Values of the L leaves of the current level from their totals (feature
// 0's histogram summed over its bins: every row of a leaf is in one of them).
template <class T>
void CpuTrainer<T>::total_values(std::int64_t L, std::vector<double>& values) {
  for (std::int64_t j = 0; j < L; ++j)
    for (int k = 0; k < D_; ++k) {
      std::int64_t G = 0, H = 0;
      for (int bin = 0; bin < Bp_; ++bin) {
        G += cur_[hidx(j, 0, bin, k)];
        H += cur_[hidx(j, 0, bin, k) + 1];
      }
      values[j * D_ + k] = gbdt::leaf_value(gbdt::dequantize(G, isg_), gbdt::dequantize(H, ish_), p_.l2_leaf_reg,
                                            p_.learning_rate);
    }
}

// The tree's leaf_count (its L final leaves, after Lossguide's cut): the
// rows of positive weight in the tree (gbdt::row_weight, as the gradients
// weigh them) per leaf. Integers, summed over row ranges in any order.
template <class T>
void CpuTrainer<T>::count_rows(std::int64_t tree, std::int64_t L) {
  const gbdt::RowSampler rs = gbdt::row_sampler(p_, tree);
  const bool every_row = rs.type == GbdtBootstrap::No && !w_;
  const std::int64_t nb = ceil_div(n_, kRowBlock);
  // One table of L counts per task: as many tasks as threads (L may be 2^16).
  const std::int64_t tasks = std::max<std::int64_t>(1, std::min<std::int64_t>(nb, ctx_.n_threads()));
  std::vector<std::int64_t> part(static_cast<std::size_t>(tasks * L), 0);
  pfor(ctx_, tasks, n_, [&](std::int64_t k) {
    std::int64_t* c = part.data() + k * L;
    for (std::int64_t blk = k * nb / tasks; blk < (k + 1) * nb / tasks; ++blk) {
      const std::int64_t r0 = blk * kRowBlock, r1 = std::min(n_, r0 + kRowBlock);
      if (every_row) {
        count_leaves(leaf_.data() + r0, r1 - r0, L, c);
        continue;
      }
      for (std::int64_t i = r0; i < r1; ++i)
        if (gbdt::row_weight(rs, w_, i) > 0.0) c[leaf_[i]] += 1;
    }
  });
  const std::size_t o = leaf_count_.size();
  leaf_count_.resize(o + static_cast<std::size_t>(L), 0);
  for (std::int64_t k = 0; k < tasks; ++k)
    for (std::int64_t l = 0; l < L; ++l) leaf_count_[o + l] += part[k * L + l];
}

template void CpuTrainer<float>::grow_tree(int, std::int64_t, const std::vector<int>&);
template void CpuTrainer<double>::grow_tree(int, std::int64_t, const std::vector<int>&);

}  // namespace tl::gbdt_cpu
