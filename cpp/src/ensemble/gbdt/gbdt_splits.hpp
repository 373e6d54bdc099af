// Splits and bins shared by the CPU and CUDA backends of the gradient-boosted
// trees (gbdt_common.hpp): split scores and leaf values, the candidate
// order, borders, bins and branches.
#pragma once
#include <cstdint>

#include "ensemble/gbdt/gbdt_math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

namespace tl::gbdt {

// ---------------------------------------------------------------------------
// Split scores and leaf values
// ---------------------------------------------------------------------------
// G^2 / (H + lambda), 0 where H + lambda <= 0 (an empty leaf without regularization).
TL_HD double score_term(double G, double H, double lambda) {
  const double d = num::add(H, lambda);
  if (!(d > 0.0)) return 0.0;
  return num::div(num::mul(G, G), d);
}

// Gain of splitting one leaf's (G, H) into (GL, HL) | (G - GL, H - HL), for
// one output: term(GL) + term(GR) - term(G).
TL_HD double split_gain(double GL, double HL, double GR, double HR, double G, double H, double lambda) {
  return num::sub(num::add(score_term(GL, HL, lambda), score_term(GR, HR, lambda)), score_term(G, H, lambda));
}

// The gain one leaf contributes to a candidate's score under the split
// constraints: split_gain, or -infinity when min_child_weight > 0 and a
// child's hessian sum is positive and below it (the candidate is then
// rejected: -infinity stays -infinity through the score's sums, every finite
// score beats it, and a level whose best score is -infinity does not split).
TL_HD double constrained_gain(double GL, double HL, double GR, double HR, double G, double H, double lambda,
                              double min_child_weight) {
  if (min_child_weight > 0.0 && ((HL > 0.0 && HL < min_child_weight) || (HR > 0.0 && HR < min_child_weight)))
    return -num::double_from_bits(0x7ff0000000000000ULL);
  return split_gain(GL, HL, GR, HR, G, H, lambda);
}

// constrained_gain of the candidate whose left side has the fixed-point
// sums (GL, HL) in a leaf of totals (Gt, Ht) = (G, H) dequantized; isg, ish:
// the tree's inverse scales. Both backends score candidates through it.
TL_HD double prefix_gain(std::int64_t GL, std::int64_t HL, std::int64_t Gt, std::int64_t Ht, double G, double H,
                         double isg, double ish, double lambda, double min_child_weight) {
  const double gl = dequantize(GL, isg), hl = dequantize(HL, ish);
  const double gr = dequantize(Gt - GL, isg), hr = dequantize(Ht - HL, ish);
  return constrained_gain(gl, hl, gr, hr, G, H, lambda, min_child_weight);
}

// min_data_in_leaf: whether a candidate whose left child holds CL of a
// node's Ct counted rows leaves both children at least min_data rows.
TL_HD bool counts_allow(std::int64_t CL, std::int64_t Ct, int min_data) {
  return CL >= min_data && Ct - CL >= min_data;
}

// Histogram channels per row: the outputs' (g, h), plus under
// min_data_in_leaf > 1 a count channel (g = 1 for a row that takes part in
// the tree, h = 0) after them.
inline int hist_channels(const GbdtParams& p, int n_outputs) { return n_outputs + (p.min_data_in_leaf > 1); }

// Whether the split constraints can stop a tree above max_depth.
inline bool has_split_constraints(const GbdtParams& p) {
  return p.min_child_weight > 0.0 || p.min_split_gain > -num::double_from_bits(0x7ff0000000000000ULL);
}

// Whether a level whose best candidate scored `score` splits (only asked
// when has_split_constraints): above min_split_gain, and not -infinity.
TL_HD bool level_splits(double score, double min_split_gain) {
  return score > min_split_gain && score > -num::double_from_bits(0x7ff0000000000000ULL);
}

// Whether a Depthwise node whose best candidate scored `score` splits: a
// positive gain (a split leaving a child without gradient mass gains exactly
// 0, so both children hold rows) above min_split_gain; NaN and -infinity
// (every candidate rejected) never split.
TL_HD bool node_splits(double score, double min_split_gain) { return score > 0.0 && score > min_split_gain; }

// The split entry of level l's node with leaf prefix p in a tree's split
// arrays (see GbdtModel).
TL_HD std::int64_t split_slot(bool depthwise, int l, std::int64_t p) {
  return depthwise ? ((std::int64_t(1) << l) - 1) + p : l;
}

// Leaf value -G / (H + lambda) * learning_rate (0 where H + lambda <= 0).
TL_HD double leaf_value(double G, double H, double lambda, double lr) {
  const double d = num::add(H, lambda);
  if (!(d > 0.0)) return 0.0;
  return num::mul(num::div(-G, d), lr);
}

// The candidate order: a higher score wins; equal scores go to the lower
// index (feature * padded bins + border index); NaN scores never win.
TL_HD bool better_candidate(double sa, std::int64_t ia, double sb, std::int64_t ib) {
  const bool na = num::is_nan(sa), nb = num::is_nan(sb);
  if (na != nb) return nb;
  if (na) return ia < ib;
  if (sa != sb) return sa > sb;
  return ia < ib;
}

// ---------------------------------------------------------------------------
// Borders and bins
// ---------------------------------------------------------------------------
// Canonical sort key of a feature value: -0 becomes +0 and every NaN the
// canonical quiet NaN, so that equal values have equal bits and any sort of
// the keys gives one array.
TL_HD double canonical_key(double v) {
  if (num::is_nan(v)) return num::quiet_nan(v);
  return v == 0.0 ? 0.0 : v;
}

// A border between consecutive distinct sorted values a < b: their midpoint,
// or a where the midpoint rounds outside [a, b).
TL_HD double midpoint(double a, double b) {
  const double m = num::add(num::mul(a, 0.5), num::mul(b, 0.5));
  return (m >= a && m < b) ? m : a;
}

// Position of the first element of bpos[0..nb) that is >= target (bpos increasing).
TL_HD std::int32_t lower_bound_i32(const std::int32_t* bpos, std::int32_t nb, std::int64_t target) {
  std::int32_t lo = 0, hi = nb;
  while (lo < hi) {
    const std::int32_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(bpos[mid]) < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Selects borders from the sorted non-NaN sample v[0..m) given its boundary
// positions bpos[0..nb) (the i in [1, m) with v[i-1] < v[i], increasing).
// With at most max_borders boundaries every one is a border; otherwise for
// j = 1..max_borders the first boundary at or after position j*m/(max_borders+1)
// (duplicates dropped). Writes the border values, increasing, to out and
// returns their number.
TL_HD int select_borders(const double* v, std::int64_t m, const std::int32_t* bpos, std::int32_t nb, int max_borders,
                         double* out) {
  int count = 0;
  if (nb <= max_borders) {
    for (std::int32_t k = 0; k < nb; ++k) out[count++] = midpoint(v[bpos[k] - 1], v[bpos[k]]);
    return count;
  }
  std::int32_t last = -1;
  for (int j = 1; j <= max_borders; ++j) {
    const std::int64_t target = static_cast<std::int64_t>(j) * m / (max_borders + 1);
    const std::int32_t k = lower_bound_i32(bpos, nb, target);
    if (k >= nb) break;
    if (k > last) {
      out[count++] = midpoint(v[bpos[k] - 1], v[bpos[k]]);
      last = k;
    }
  }
  return count;
}

// NaN's own border beside the c borders a feature's selection wrote (at out + 1
// when nan_low, else at out): -infinity first when NaN's bin is the lowest
// (nan_mode Min, Learned), +infinity last otherwise. Returns the new count.
TL_HD int add_nan_border(double* out, int c, bool nan_low) {
  if (nan_low)
    out[0] = -num::double_from_bits(0x7ff0000000000000ULL);
  else
    out[c] = num::double_from_bits(0x7ff0000000000000ULL);
  return c + 1;
}

// Bin of value x given a feature's increasing borders b[0..nb): the number of
// borders below x; NaN takes bin 0 (nan_max false) or bin nb (nan_max true).
TL_HD int bin_of(double x, const double* b, int nb, bool nan_max) {
  if (num::is_nan(x)) return nan_max ? nb : 0;
  int lo = 0, hi = nb;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (b[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// bin_of by a branch-free search: pb holds the feature's nb borders followed
// by +inf up to P entries, P a power of two > nb; x finite or NaN (NaN takes
// nan_bin: 0, or nb under nan_max). The same bin as bin_of for every such x.
TL_HD int bin_of_padded(double x, const double* pb, int P, int nan_bin) {
  int pos = 0;  // pb[0..pos) < x
  for (int step = P / 2; step >= 1; step /= 2) pos += pb[pos + step - 1] < x ? step : 0;
  return num::is_nan(x) ? nan_bin : pos;
}

// Prediction-time branch: right when x exceeds the border; NaN goes right
// when nan_right (nan_mode Max, or a Learned split's split_nan_right).
// Equivalent to bin_right(bin_of(x), split code).
TL_HD bool goes_right(double x, double border, bool nan_right) {
  if (num::is_nan(x)) return nan_right;
  return x > border;
}

// The split code of training: split_bin b, plus kNanRight when a Learned
// split sends the NaN bin (bin 0 of a feature with NaN, see compute_borders)
// right. Both backends keep codes in their split arrays while a model grows;
// gbdt::split_nan_from_codes turns them into split_bin and split_nan_right.
inline constexpr std::int32_t kNanRight = std::int32_t(1) << 16;
inline constexpr std::int32_t kSplitBinMask = kNanRight - 1;

// Training-time branch of a row in bin `bin` at a split of code `code` (>= 0):
// right when the bin is above the border, or it is bin 0 and the code says
// NaN goes right (the flag is only set where bin 0 holds NaN alone).
TL_HD bool bin_right(int bin, std::int32_t code) {
  // | and & rather than || and &&: no branch on the row's bin (the CPU's
  // per-node leaf update mispredicted half of them).
  return (bin > (code & kSplitBinMask)) | ((bin == 0) & ((code & kNanRight) != 0));
}

// Whether feature f's padded borders (count c) start with the NaN bin's
// border -infinity: the feature had NaN under nan_mode Min or Learned.
TL_HD bool has_nan_bin(const double* padded_f, int count) {
  return count > 0 && padded_f[0] == -num::double_from_bits(0x7ff0000000000000ULL);
}

// Whether NaN goes right at split s: its split_nan_right entry under nan_mode
// Learned (snan non-null), else nan_max (nan_mode Max).
TL_HD bool nan_goes_right(const std::uint8_t* snan, std::int64_t s, bool nan_max) {
  return snan ? snan[s] != 0 : nan_max;
}

// The Learned choice for one candidate: the gain with the NaN rows moved
// right, when it beats the gain with them left (NaN and ties: left).
TL_HD bool nan_right_wins(double gain_left, double gain_right) { return gain_right > gain_left; }

// Offsets of the split and leaf arrays of tree t, given depths of trees < t
// accumulated by the caller.
struct TreeOffsets {
  std::int64_t split = 0;
  std::int64_t leaf = 0;
};

}  // namespace tl::gbdt
