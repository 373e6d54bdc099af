// Monotonic and interaction constraints of per-node trees (Depthwise,
// Lossguide), shared by the CPU and CUDA backends: scikit-learn's
// HistGradientBoosting rules (monotonic_cst, interaction_cst).
//
// Monotonic. Every node carries value bounds [lo, hi] (the root: -inf, +inf).
// A child's value is -G / (H + lambda) clipped to its parent's bounds
// (node_value). A candidate split on a feature of constraint +1 (-1) is
// rejected (-infinity) when its left child's value is above (below) its right
// child's; a candidate's gain is sklearn's loss difference with the clipped
// values, G_P v_P - G_L v_L - G_R v_R, spelled so that an unclipped child
// gives the unconstrained G^2 / (H + lambda) bit for bit (bounded_term). After
// a split on a constrained feature the children's bounds are cut at the
// midpoint of their values (child_bounds); other splits pass the bounds on.
// Leaves are learning_rate times their clipped value (bounded_leaf_value).
//
// Interaction. Features are partitioned into groups (features listed in no
// group form one more group). A node may split on the features of the groups
// that hold every feature split on along its path: the root on all, a child
// of a split on f on the union of its parent's groups that hold f.
//
// The TL_HD functions are the floating-point steps; TreeConstraints is the
// host bookkeeping both trainers call between levels.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ensemble/gbdt/gbdt_math.hpp"
#include "ensemble/gbdt/gbdt_splits.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

namespace tl::gbdt {

TL_HD double clip_value(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

// A node's value under bounds [lo, hi]: -G / (H + lambda) (0 where H + lambda
// <= 0), clipped. Unscaled by the learning rate.
TL_HD double node_value(double G, double H, double lambda, double lo, double hi) {
  const double d = num::add(H, lambda);
  const double v = d > 0.0 ? num::div(-G, d) : 0.0;
  return clip_value(v, lo, hi);
}

// The leaf value under bounds: learning_rate times node_value. With
// unbounded [lo, hi] it is gbdt::leaf_value bit for bit.
TL_HD double bounded_leaf_value(double G, double H, double lambda, double lr, double lo, double hi) {
  return num::mul(node_value(G, H, lambda, lo, hi), lr);
}

// One side's share of a split's score with its value clipped to [lo, hi]:
// -G v, which is G^2 / (H + lambda) (score_term, the same bits) when v is not
// clipped; 0 where H + lambda <= 0.
TL_HD double bounded_term(double G, double H, double lambda, double lo, double hi) {
  const double d = num::add(H, lambda);
  if (!(d > 0.0)) return 0.0;
  const double v = num::div(-G, d);
  if (v >= lo && v <= hi) return score_term(G, H, lambda);
  return num::mul(-G, clip_value(v, lo, hi));
}

// constrained_gain of a node with bounds [lo, hi] for a candidate on a
// feature of monotonic constraint cst (-1, 0, 1): -infinity when
// min_child_weight rejects it or the children's clipped values break cst,
// else term(L) + term(R) - term(P) with bounded_term. With lo = -inf,
// hi = +inf and cst = 0 it is constrained_gain bit for bit.
TL_HD double monotone_gain(double GL, double HL, double GR, double HR, double G, double H, double lambda,
                           double min_child_weight, double lo, double hi, int cst) {
  const double ninf = -num::double_from_bits(0x7ff0000000000000ULL);
  if (min_child_weight > 0.0 && ((HL > 0.0 && HL < min_child_weight) || (HR > 0.0 && HR < min_child_weight)))
    return ninf;
  if (cst != 0) {
    const double vl = node_value(GL, HL, lambda, lo, hi), vr = node_value(GR, HR, lambda, lo, hi);
    if (cst > 0 ? vl > vr : vl < vr) return ninf;
  }
  return num::sub(num::add(bounded_term(GL, HL, lambda, lo, hi), bounded_term(GR, HR, lambda, lo, hi)),
                  bounded_term(G, H, lambda, lo, hi));
}

// prefix_gain with the node's bounds and the feature's constraint.
TL_HD double prefix_gain_bounded(std::int64_t GL, std::int64_t HL, std::int64_t Gt, std::int64_t Ht, double G,
                                 double H, double isg, double ish, double lambda, double min_child_weight, double lo,
                                 double hi, int cst) {
  const double gl = dequantize(GL, isg), hl = dequantize(HL, ish);
  const double gr = dequantize(Gt - GL, isg), hr = dequantize(Ht - HL, ish);
  return monotone_gain(gl, hl, gr, hr, G, H, lambda, min_child_weight, lo, hi, cst);
}

// The children's bounds after a node of bounds [lo, hi] splits on a feature
// of constraint cst, its children's values vl, vr: cst 0 passes [lo, hi] to
// both; else the midpoint m = (vl + vr) / 2 cuts them, the left [lo, m] and
// the right [m, hi] for +1, the reverse for -1. out: lo_l, hi_l, lo_r, hi_r.
TL_HD void child_bounds(double lo, double hi, double vl, double vr, int cst, double* out) {
  if (cst == 0) {
    out[0] = lo, out[1] = hi, out[2] = lo, out[3] = hi;
    return;
  }
  const double m = num::mul(num::add(vl, vr), 0.5);
  if (cst > 0)
    out[0] = lo, out[1] = m, out[2] = m, out[3] = hi;
  else
    out[0] = m, out[1] = hi, out[2] = lo, out[3] = m;
}

// Whether a fit has monotonic (a nonzero entry) or interaction constraints.
inline bool has_monotone(const GbdtParams& p) {
  return std::any_of(p.monotone_constraints.begin(), p.monotone_constraints.end(), [](int c) { return c != 0; });
}
inline bool has_interaction(const GbdtParams& p) { return !p.interaction_constraints.empty(); }

// Per-tree host state of the constraints, level by level. Nodes are the
// split slots of GbdtModel (level-major), extended by the leaves' level.
class TreeConstraints {
 public:
  void setup(const GbdtParams& p, int n_features) {
    F_ = n_features;
    mono_ = has_monotone(p);
    inter_ = has_interaction(p);
    lambda_ = p.l2_leaf_reg;
    cst_.assign(static_cast<std::size_t>(F_), 0);
    if (mono_)
      for (int f = 0; f < F_; ++f) cst_[f] = p.monotone_constraints[f];
    groups_.clear();
    if (inter_) {
      std::vector<std::uint8_t> listed(static_cast<std::size_t>(F_), 0);
      for (const auto& g : p.interaction_constraints) {
        std::vector<int> s(g.begin(), g.end());
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        for (int f : s) listed[f] = 1;
        groups_.push_back(std::move(s));
      }
      std::vector<int> rest;
      for (int f = 0; f < F_; ++f)
        if (!listed[f]) rest.push_back(f);
      if (!rest.empty()) groups_.push_back(std::move(rest));
    }
  }
  bool active() const { return mono_ || inter_; }
  bool monotone() const { return mono_; }
  bool interaction() const { return inter_; }
  const std::vector<int>& cst() const { return cst_; }

  // A tree of `depth` levels begins: the root's bounds and groups.
  void start_tree(int depth) {
    const double inf = num::double_from_bits(0x7ff0000000000000ULL);
    bounds_.assign(static_cast<std::size_t>(2 * ((std::int64_t(2) << depth) - 1)), 0.0);
    bounds_[0] = -inf;
    bounds_[1] = inf;
    level_ = 0;
    if (inter_) {
      node_groups_.assign(1, std::vector<int>());
      for (int g = 0; g < static_cast<int>(groups_.size()); ++g) node_groups_[0].push_back(g);
      allowed_from_groups();
    }
  }

  // Bounds (lo, hi) of the 2^d nodes of level d, node after node.
  const double* bounds(int d) const { return bounds_.data() + 2 * ((std::int64_t(1) << d) - 1); }
  // Those of the level being searched (0 after start_tree, d + 1 after next_level(d)).
  const double* level_bounds() const { return bounds(level_); }
  // Interaction: allowed[p * F + f] = 1 where the current level's node p may split on f.
  const std::vector<std::uint8_t>& allowed() const { return allowed_; }

  // Level d's nodes chose split features sf[0..L) (-1: no split); tot holds
  // the fixed-point (G, H) of the 2L children, 2 * (j * D + k) (output 0 is
  // the only one under monotonic constraints). Sets level d + 1's bounds and
  // allowed features.
  void next_level(int d, const std::int32_t* sf, const std::int64_t* tot, int D, double isg, double ish) {
    const std::int64_t L = std::int64_t(1) << d;
    level_ = d + 1;
    if (mono_) {
      const double* b = bounds(d);
      double* c = bounds_.data() + 2 * ((std::int64_t(2) << d) - 1);
      for (std::int64_t p = 0; p < L; ++p) {
        const double lo = b[2 * p], hi = b[2 * p + 1];
        double out[4] = {lo, hi, lo, hi};
        if (sf[p] >= 0 && cst_[sf[p]] != 0) {
          const std::int64_t l = 2 * (p * D), r = 2 * ((p + L) * D);
          const double vl = node_value(dequantize(tot[l], isg), dequantize(tot[l + 1], ish), lambda_, lo, hi);
          const double vr = node_value(dequantize(tot[r], isg), dequantize(tot[r + 1], ish), lambda_, lo, hi);
          child_bounds(lo, hi, vl, vr, cst_[sf[p]], out);
        }
        c[2 * p] = out[0], c[2 * p + 1] = out[1];
        c[2 * (p + L)] = out[2], c[2 * (p + L) + 1] = out[3];
      }
    }
    if (inter_) {
      std::vector<std::vector<int>> next(static_cast<std::size_t>(2 * L));
      for (std::int64_t p = 0; p < L; ++p) {
        std::vector<int> g;
        if (sf[p] < 0) {
          g = node_groups_[p];
        } else {
          for (int gi : node_groups_[p])
            if (std::binary_search(groups_[gi].begin(), groups_[gi].end(), static_cast<int>(sf[p]))) g.push_back(gi);
        }
        next[p + L] = g;
        next[p] = std::move(g);
      }
      node_groups_ = std::move(next);
      allowed_from_groups();
    }
  }

  // The bounds of leaf j of a tree of `depth` levels whose split features
  // (all slots, level-major) are sf: those of the first node on j's path that
  // does not split, or of j's node below the last level. After Lossguide's
  // cut a leaf is such a node of the grown tree; for Depthwise it is the
  // leaves' level's own (a node that does not split passes its bounds on).
  void leaf_bounds(int depth, const std::int32_t* sf, std::int64_t j, double& lo, double& hi) const {
    for (int l = 0; l <= depth; ++l) {
      const std::int64_t p = j & ((std::int64_t(1) << l) - 1);
      if (l == depth || sf[((std::int64_t(1) << l) - 1) + p] < 0) {
        lo = bounds(l)[2 * p];
        hi = bounds(l)[2 * p + 1];
        return;
      }
    }
  }

  // values[j * D + k] of the tree's 2^depth leaves from their fixed-point
  // sums tot (2 per leaf and output) within the leaves' bounds.
  void bounded_values(int depth, const std::int32_t* sf, const std::vector<std::int64_t>& tot, int D, double isg,
                      double ish, double lr, double* values) const {
    for (std::int64_t j = 0; j < (std::int64_t(1) << depth); ++j) {
      double lo, hi;
      leaf_bounds(depth, sf, j, lo, hi);
      for (int k = 0; k < D; ++k) {
        const std::size_t e = static_cast<std::size_t>(j * D + k);
        values[e] = bounded_leaf_value(dequantize(tot[2 * e], isg), dequantize(tot[2 * e + 1], ish), lambda_, lr, lo,
                                       hi);
      }
    }
  }

 private:
  void allowed_from_groups() {
    const std::size_t L = node_groups_.size();
    allowed_.assign(L * static_cast<std::size_t>(F_), 0);
    for (std::size_t p = 0; p < L; ++p)
      for (int gi : node_groups_[p])
        for (int f : groups_[gi]) allowed_[p * F_ + f] = 1;
  }

  int F_ = 0;
  int level_ = 0;
  bool mono_ = false, inter_ = false;
  double lambda_ = 0.0;
  std::vector<int> cst_;
  std::vector<std::vector<int>> groups_;       // sorted feature lists, the rest group last
  std::vector<double> bounds_;                 // 2 per node, levels 0..depth
  std::vector<std::vector<int>> node_groups_;  // current level: each node's group indices
  std::vector<std::uint8_t> allowed_;          // current level: L * F
};

}  // namespace tl::gbdt
