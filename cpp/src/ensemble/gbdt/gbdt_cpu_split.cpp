// CPU backend of the gradient-boosted trees: split search. Every candidate's
// gain from a level's histograms, and the best candidate of the level
// (SymmetricTree) or of each node (Depthwise, Lossguide).
#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"

namespace tl::gbdt_cpu {

// Gain of splitting leaf `leaf` at each border b < nb[f] of feature f,
// summed over outputs in output order: tl[b]. With tr (nan_mode Learned, a
// feature with a NaN bin): also the gain with bin 0's NaN rows sent right,
// tr[b] for 1 <= b < nb (tr[0] = -infinity: border 0 keeps NaN left).
template <class T>
void CpuTrainer<T>::leaf_gains(std::int64_t leaf, std::int64_t f, int nb, double* tl, double* tr) const {
  const double lambda = p_.l2_leaf_reg, mcw = p_.min_child_weight;
  std::fill(tl, tl + nb, 0.0);
  if (tr) std::fill(tr, tr + nb, 0.0);
  // Monotonic constraints (one output): the node's bounds and the feature's constraint.
  const bool mono = cons_.monotone();
  const double lo = mono ? cons_.level_bounds()[2 * leaf] : 0.0, hi = mono ? cons_.level_bounds()[2 * leaf + 1] : 0.0;
  const int cst = mono ? cons_.cst()[f] : 0;
  const auto gain_of = [&](std::int64_t GL, std::int64_t HL, std::int64_t Gt, std::int64_t Ht, double G, double H) {
    return mono ? gbdt::prefix_gain_bounded(GL, HL, Gt, Ht, G, H, isg_, ish_, lambda, mcw, lo, hi, cst)
                : gbdt::prefix_gain(GL, HL, Gt, Ht, G, H, isg_, ish_, lambda, mcw);
  };
  for (int k = 0; k < D_; ++k) {
    std::int64_t Gt = 0, Ht = 0;
    for (int b = 0; b <= nb; ++b) {
      Gt += cur_[hidx(leaf, f, b, k)];
      Ht += cur_[hidx(leaf, f, b, k) + 1];
    }
    const double G = gbdt::dequantize(Gt, isg_), H = gbdt::dequantize(Ht, ish_);
    const std::int64_t Gn = cur_[hidx(leaf, f, 0, k)], Hn = cur_[hidx(leaf, f, 0, k) + 1];  // the NaN bin (tr)
    std::int64_t GL = 0, HL = 0;
    double gain = 0.0, gain_r = 0.0;
    for (int b = 0; b < nb; ++b) {
      const std::int64_t dg = cur_[hidx(leaf, f, b, k)], dh = cur_[hidx(leaf, f, b, k) + 1];
      // An empty bin leaves the prefix, hence the gain, unchanged: reuse it
      // (exact). b = 1 is the first border with a NaN-right gain: computed.
      if (b <= 1 || dg != 0 || dh != 0) {
        GL += dg;
        HL += dh;
        gain = gain_of(GL, HL, Gt, Ht, G, H);
        if (tr && b > 0) gain_r = gain_of(GL - Gn, HL - Hn, Gt, Ht, G, H);
      }
      tl[b] = num::add(tl[b], gain);
      if (tr) tr[b] = num::add(tr[b], gain_r);
    }
  }
  if (Dh_ > D_) {  // min_data_in_leaf: candidates leaving a child too few rows score -infinity
    const double ninf = -num::double_from_bits(0x7ff0000000000000ULL);
    std::int64_t Ct = 0;
    for (int b = 0; b <= nb; ++b) Ct += cur_[hidx(leaf, f, b, D_)];
    const std::int64_t Cn = cur_[hidx(leaf, f, 0, D_)];
    std::int64_t CL = 0;
    for (int b = 0; b < nb; ++b) {
      CL += cur_[hidx(leaf, f, b, D_)];
      if (!gbdt::counts_allow(CL, Ct, p_.min_data_in_leaf)) tl[b] = ninf;
      if (tr && !gbdt::counts_allow(CL - Cn, Ct, p_.min_data_in_leaf)) tr[b] = ninf;
    }
  }
  if (tr) tr[0] = -num::double_from_bits(0x7ff0000000000000ULL);
}

// Score of every candidate (f, border b): sum over leaves (in leaf order)
// of the leaf's gain summed over outputs (in output order); the best by
// gbdt::better_candidate.
template <class T>
void CpuTrainer<T>::best_split(std::int64_t L, std::int32_t* bf, std::int32_t* bb, double* bg) {
  std::vector<double> score(static_cast<std::size_t>(F_) * Bp_, 0.0);
  pfor(ctx_, F_, L * F_ * Bp_ * D_ * 8, [&](std::int64_t f) {
    const int nb = nb_[f];
    if (nb == 0) return;
    double* sc = score.data() + f * Bp_;
    std::vector<double> tl(static_cast<std::size_t>(nb));
    for (std::int64_t leaf = 0; leaf < L; ++leaf) {
      leaf_gains(leaf, f, nb, tl.data(), nullptr);
      for (int b = 0; b < nb; ++b) sc[b] = num::add(sc[b], tl[b]);
    }
  });
  double best = 0.0;
  std::int64_t bi = -1;
  for (int f = 0; f < F_; ++f)
    for (int b = 0; b < nb_[f]; ++b) {
      const std::int64_t idx = static_cast<std::int64_t>(f) * Bp_ + b;
      if (bi < 0 || gbdt::better_candidate(score[idx], idx, best, bi)) {
        best = score[idx];
        bi = idx;
      }
    }
  *bf = static_cast<std::int32_t>(bi / Bp_);
  *bb = static_cast<std::int32_t>(bi % Bp_);
  *bg = best;
}

// Depthwise: each of the L leaves' own best candidate by its own gain
// (gbdt::better_candidate over f * Bp + b; under nan_mode Learned a
// candidate's gain is the better of its NaN-left and NaN-right gains, see
// gbdt::nan_right_wins), kept when gbdt::node_splits, else (-1, -1, 0):
// the leaf does not split. bb holds split codes (gbdt::kNanRight). Under
// interaction constraints a leaf's candidates are its allowed features';
// under monotonic ones, leaf_gains scores them within the leaf's bounds.
template <class T>
void CpuTrainer<T>::best_splits(std::int64_t L, std::int32_t* bf, std::int32_t* bb, double* bg) {
  std::vector<double> fscore(static_cast<std::size_t>(L * F_));
  std::vector<std::int64_t> fidx(static_cast<std::size_t>(L * F_), -1);
  std::vector<std::uint8_t> fright(static_cast<std::size_t>(L * F_), 0);
  pfor(ctx_, F_, L * F_ * Bp_ * D_ * 8, [&](std::int64_t f) {
    const int nb = nb_[f];
    if (nb == 0) return;
    const bool learn = !nan_bin_.empty() && nan_bin_[f];
    std::vector<double> tl(static_cast<std::size_t>(nb)), tr(learn ? static_cast<std::size_t>(nb) : 0);
    const std::uint8_t* allowed = cons_.interaction() ? cons_.allowed().data() : nullptr;
    for (std::int64_t leaf = 0; leaf < L; ++leaf) {
      if (allowed && !allowed[leaf * F_ + f]) continue;  // interaction constraints: f may not split this node
      leaf_gains(leaf, f, nb, tl.data(), learn ? tr.data() : nullptr);
      std::int64_t bi = -1;
      for (int b = 0; b < nb; ++b) {
        const std::int64_t idx = f * Bp_ + b;
        const bool right = learn && gbdt::nan_right_wins(tl[b], tr[b]);
        const double score = right ? tr[b] : tl[b];
        if (bi < 0 || gbdt::better_candidate(score, idx, fscore[leaf * F_ + f], bi)) {
          fscore[leaf * F_ + f] = score;
          fright[leaf * F_ + f] = right;
          bi = idx;
        }
      }
      fidx[leaf * F_ + f] = bi;
    }
  });
  for (std::int64_t leaf = 0; leaf < L; ++leaf) {
    double best = 0.0;
    std::int64_t bi = -1;
    bool right = false;
    for (std::int64_t f = 0; f < F_; ++f) {
      const std::int64_t idx = fidx[leaf * F_ + f];
      if (idx >= 0 && (bi < 0 || gbdt::better_candidate(fscore[leaf * F_ + f], idx, best, bi))) {
        best = fscore[leaf * F_ + f];
        right = fright[leaf * F_ + f];
        bi = idx;
      }
    }
    const bool split = bi >= 0 && gbdt::node_splits(best, p_.min_split_gain);
    bf[leaf] = split ? static_cast<std::int32_t>(bi / Bp_) : -1;
    bb[leaf] = split ? static_cast<std::int32_t>(bi % Bp_) | (right ? gbdt::kNanRight : 0) : -1;
    bg[leaf] = split ? best : 0.0;
  }
}

#define TL_GBDT_INSTANTIATE(T)                                                                   \
  template void CpuTrainer<T>::best_split(std::int64_t, std::int32_t*, std::int32_t*, double*);  \
  template void CpuTrainer<T>::best_splits(std::int64_t, std::int32_t*, std::int32_t*, double*);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::gbdt_cpu
