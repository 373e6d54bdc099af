// CPU backend of the gradient-boosted trees: a level's histograms, integer
// sums of the rows' fixed-point (g, h) per leaf, feature and bin.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"

namespace tl::gbdt_cpu {

// Which leaves get their histogram built at level d: the root at level 0;
// then, of each pair of siblings, the one with fewer rows (the other comes
// from its parent by subtraction). The choice only affects speed.
template <class T>
void CpuTrainer<T>::choose_slots(int d, const std::vector<std::int64_t>& counts) {
  const std::int64_t L = std::int64_t(1) << d;
  built_.assign(static_cast<std::size_t>(L), 0);
  if (d == 0) {
    built_[0] = 1;
    return;
  }
  const std::int64_t half = L / 2;
  for (std::int64_t p = 0; p < half; ++p) {
    const std::int64_t c = counts[p] <= counts[p + half] ? p : p + half;
    built_[c] = 1;
  }
}

// The level's built leaves' histograms in cur_. Their entries are integer
// sums, so neither the order rows are added in nor which thread adds them
// changes a bit. A task takes a group of features, small enough that a
// leaf's histogram of the group stays in the first-level cache, and adds
// the rows of each built leaf in turn (build_order), every row's bins of
// the group read side by side (rbins_) and its (g, h) pairs read once for
// the group. With fewer groups than threads a task also takes a share of
// the rows, into a partial histogram; the partials are merged after.
template <class T>
void CpuTrainer<T>::build_histograms(std::int64_t L) {
  build_order(L);
  const int nt = ctx_.n_threads();
  const std::int64_t nrows = seg_[L];
  const std::int64_t w = 2 * Dh_;
  const std::int64_t fstride = Bp_ * w;  // int64 entries per feature
  // Groups: as few as the cache allows, rounded up to a multiple of the
  // threads (a static schedule then gives every thread the same features).
  const std::int64_t gmax = std::max<std::int64_t>(1, kHistGroupBytes / (fstride * 8));
  std::int64_t ngroups = std::min<std::int64_t>(F_, ceil_div(ceil_div(F_, gmax), nt) * nt);
  const std::int64_t G = ceil_div(F_, ngroups);
  ngroups = ceil_div(F_, G);
  std::int64_t rb = ngroups >= nt ? 1 : ceil_div(nt, ngroups);
  rb = std::max<std::int64_t>(1, std::min(rb, ceil_div(nrows, 4 * kRowBlock)));
  const std::size_t part_size = static_cast<std::size_t>(L * G * fstride);
  while (rb > 1 && rb * ngroups * part_size * sizeof(std::int64_t) > (std::size_t(256) << 20)) --rb;
  const std::int64_t rows_per = ceil_div(nrows, rb);
  if (rb == 1) {
    pfor(ctx_, ngroups, nrows * F_, [&](std::int64_t g) {
      const int f0 = static_cast<int>(g * G), f1 = std::min(F_, static_cast<int>(g * G + G));
      for (std::int64_t leaf = 0; leaf < L; ++leaf) {
        if (!built_[leaf]) continue;
        std::int64_t* h = cur_.data() + hidx(leaf, f0, 0, 0);
        std::fill(h, h + (f1 - f0) * fstride, 0);
        add_rows(seg_[leaf], seg_[leaf + 1], f0, f1, h, fstride);
      }
    });
    return;
  }
  std::vector<std::int64_t> parts(static_cast<std::size_t>(ngroups * rb) * part_size, 0);
  pfor(ctx_, ngroups * rb, nrows * F_, [&](std::int64_t task) {
    const std::int64_t g = task / rb, r = task % rb;
    const int f0 = static_cast<int>(g * G), f1 = std::min(F_, static_cast<int>(g * G + G));
    const std::int64_t r0 = r * rows_per, r1 = std::min(nrows, r0 + rows_per);
    for (std::int64_t leaf = 0; leaf < L; ++leaf) {
      const std::int64_t a = std::max(r0, seg_[leaf]), b = std::min(r1, seg_[leaf + 1]);
      if (a < b) add_rows(a, b, f0, f1, parts.data() + task * part_size + leaf * G * fstride, fstride);
    }
  });
  pfor(ctx_, ngroups, L * F_ * fstride * rb, [&](std::int64_t g) {
    const int f0 = static_cast<int>(g * G), f1 = std::min(F_, static_cast<int>(g * G + G));
    const std::int64_t m = (f1 - f0) * fstride;
    for (std::int64_t leaf = 0; leaf < L; ++leaf) {
      if (!built_[leaf]) continue;
      std::int64_t* dst = cur_.data() + hidx(leaf, f0, 0, 0);
      std::fill(dst, dst + m, 0);
      for (std::int64_t r = 0; r < rb; ++r) {
        const std::int64_t* s = parts.data() + (g * rb + r) * part_size + leaf * G * fstride;
        for (std::int64_t e = 0; e < m; ++e) dst[e] += s[e];
      }
    }
  });
}

// The rows of the level's built leaves grouped by leaf, each leaf's in
// increasing order: order_[seg_[l] .. seg_[l + 1]) (empty for a leaf not
// built), placed by the per-block leaf counts update_leaves left. At the
// root the positions are the rows themselves (no list).
template <class T>
void CpuTrainer<T>::build_order(std::int64_t L) {
  seg_.assign(static_cast<std::size_t>(L + 1), 0);
  listed_ = L > 1;
  if (L == 1) {
    seg_[1] = n_;
    return;
  }
  const std::int64_t nb = ceil_div(n_, kRowBlock);
  std::vector<std::int64_t> off(static_cast<std::size_t>(nb * L));
  std::int64_t o = 0;
  for (std::int64_t leaf = 0; leaf < L; ++leaf) {
    seg_[leaf] = o;
    if (!built_[leaf]) continue;
    for (std::int64_t b = 0; b < nb; ++b) {
      off[b * L + leaf] = o;
      o += blk_counts_[b * L + leaf];
    }
  }
  seg_[L] = o;
  order_.resize(static_cast<std::size_t>(o));
  pfor(ctx_, nb, n_, [&](std::int64_t b) {
    // The block's rows of built leaves, by a branch-free compaction (a
    // branch on the leaf mispredicts half the time), then placed.
    std::vector<std::int32_t> rows(static_cast<std::size_t>(kRowBlock)), leaves(rows.size());
    const std::uint8_t* built = built_.data();
    const std::int32_t* lf = leaf_.data();
    const std::int64_t r0 = b * kRowBlock, r1 = std::min(n_, r0 + kRowBlock);
    std::int64_t m = 0;
    for (std::int64_t i = r0; i < r1; ++i) {
      const std::int32_t leaf = lf[i];
      rows[m] = static_cast<std::int32_t>(i);
      leaves[m] = leaf;
      m += built[leaf];
    }
    std::int64_t* ob = off.data() + b * L;
    std::int32_t* out = order_.data();
    for (std::int64_t k = 0; k < m; ++k) out[ob[leaves[k]]++] = rows[k];
  });
}

// Adds the rows at positions r0..r1 of the level's order (the rows
// themselves at the root) for features f0..f1 into h: feature f0 + j's
// entry (bin, k) at h[j * fstride + bin * 2 * Dh_ + 2 * k] (+1 for h).
template <class T>
void CpuTrainer<T>::add_rows(std::int64_t r0, std::int64_t r1, int f0, int f1, std::int64_t* h,
                             std::int64_t fstride) const {
  const std::int32_t* rows = listed_ ? order_.data() : nullptr;
  if (Dh_ == 1) {
    if (rows) {
      add_pairs<true>(rows, r0, r1, f0, f1, h, fstride);
    } else {
      add_pairs<false>(rows, r0, r1, f0, f1, h, fstride);
    }
    return;
  }
  const std::int64_t w = 2 * Dh_;
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t i = rows ? rows[r] : r;
    const std::int64_t* q = q_.data() + i * w;
    const std::uint8_t* bi = rbins_.data() + i * F_ + f0;
    for (int f = 0; f < f1 - f0; ++f) {
      std::int64_t* e = h + f * fstride + static_cast<std::int64_t>(bi[f]) * w;
      for (std::int64_t j = 0; j < w; ++j) e[j] += q[j];
    }
  }
}

// One (g, h) pair a row: each entry's update is one 128-bit add.
template <class T>
template <bool Indexed>
void CpuTrainer<T>::add_pairs(const std::int32_t* rows, std::int64_t r0, std::int64_t r1, int f0, int f1,
                              std::int64_t* h, std::int64_t fstride) const {
  typedef std::int64_t Pair __attribute__((vector_size(16)));
  const int nf = f1 - f0;
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t i = Indexed ? rows[r] : r;
    if (Indexed && r + kPrefetchRows < r1) {  // the rows ahead are scattered: fetch them early
      const std::int64_t ia = rows[r + kPrefetchRows];
      __builtin_prefetch(q_.data() + 2 * ia);
      __builtin_prefetch(rbins_.data() + ia * F_ + f0);
      __builtin_prefetch(rbins_.data() + ia * F_ + f1 - 1);
    }
    Pair q;
    std::memcpy(&q, q_.data() + 2 * i, sizeof q);
    const std::uint8_t* bi = rbins_.data() + i * F_ + f0;
    for (int f = 0; f < nf; ++f) {
      std::int64_t* e = h + f * fstride + 2 * static_cast<std::int64_t>(bi[f]);
      Pair v;
      std::memcpy(&v, e, sizeof v);
      v += q;
      std::memcpy(e, &v, sizeof v);
    }
  }
}

// The sibling of each built leaf: parent (previous level) minus built child.
template <class T>
void CpuTrainer<T>::subtract_siblings(std::int64_t L) {
  const std::int64_t half = L / 2;
  const std::int64_t per_leaf = static_cast<std::int64_t>(F_) * Bp_ * Dh_ * 2;
  pfor(ctx_, half, half * per_leaf, [&](std::int64_t p) {
    const std::int64_t c = built_[p] ? p : p + half;
    const std::int64_t o = c == p ? p + half : p;
    const std::int64_t* par = prev_.data() + p * per_leaf;
    const std::int64_t* ch = cur_.data() + c * per_leaf;
    std::int64_t* out = cur_.data() + o * per_leaf;
    for (std::int64_t e = 0; e < per_leaf; ++e) out[e] = par[e] - ch[e];
  });
}

#define TL_GBDT_INSTANTIATE(T)                                                      \
  template void CpuTrainer<T>::choose_slots(int, const std::vector<std::int64_t>&); \
  template void CpuTrainer<T>::build_histograms(std::int64_t);                      \
  template void CpuTrainer<T>::subtract_siblings(std::int64_t);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::gbdt_cpu
