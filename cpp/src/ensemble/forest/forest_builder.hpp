// One decision tree of a forest, built by a single sequential pass that both
// backends run as it is: the CPU backend calls build_tree once per tree on
// its threads, the CUDA backend once per tree in a device thread. Every
// floating-point step (weights, node statistics, impurities, thresholds) is
// spelled out here with tl::num and summed in one fixed order (rows in
// increasing index order, or in the stable sorted order of a feature), so a
// tree is the same bits wherever it is built.
#pragma once
#include <cstdint>

#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/rng.hpp"
#include "twinlearn/ensemble/forest.hpp"

namespace tl::forest_detail {

// scikit-learn's constants (sklearn/tree/_splitter.pyx, _criterion.pyx).
inline constexpr double kEpsilon = 2.220446049250313e-16;  // np.finfo(float64).eps
inline constexpr double kFeatureThreshold = 1e-7;

enum Purpose : std::uint64_t { kFeatures = 0, kThresholds = 1, kBootstrap = 2 };

TL_HD std::uint64_t stream_of(std::uint64_t purpose, std::int64_t tree, std::int64_t node) {
  return (purpose << 62) | (static_cast<std::uint64_t>(tree) << 32) | static_cast<std::uint64_t>(node);
}

template <class T>
struct TreeInput {
  const T* X = nullptr;  // X[i * rs + j * cs]
  std::int64_t rs = 0, cs = 0, rows = 0, cols = 0;
  const std::int32_t* y_class = nullptr;  // classification labels, rows x n_outputs, or null
  const double* y_reg = nullptr;          // regression targets, rows x n_outputs, or null
  const double* weight = nullptr;         // base row weights, or null (ones)
  const double* cum_weight = nullptr;     // bootstrap with weights: running sums of weight, in row order
  std::int64_t n_classes = 0;             // the largest class count of the outputs; 0: regression
  std::int64_t n_outputs = 1;
  const std::int64_t* out_classes = nullptr;  // classification: each output's class count
  std::int64_t class_sum = 0;                 // their sum
};

// A node to build (start, end: its rows in idx; parent, is_left), and, in
// best-first growth, a built node waiting in the frontier (node, mid: where
// its rows split, improvement: its weighted impurity improvement).
struct StackRec {
  std::int32_t start, end, depth, is_left;
  std::int64_t parent;
  std::int32_t mid = 0;
  std::int64_t node = 0;
  double improvement = 0.0;
};

// Per-tree scratch (rows, cols, S = stat width: class_sum, or n_outputs + 1).
template <class T>
struct TreeWork {
  std::int32_t* count;                            // rows: bootstrap multiplicity
  double* w;                                      // rows: this tree's row weights
  std::int32_t *idx, *idx_tmp, *sidx, *sidx_tmp;  // rows each
  T *keys, *keys_tmp;                             // rows each
  std::int32_t* feats;                            // cols
  double* stats;                                  // 4 * S + class_sum
  StackRec* stack;                                // rows + 1
  // The absolute-error criterion's scratch (null for the others): rank:
  // rows * n_outputs; mae: mae_doubles(rows, n_outputs).
  std::int32_t* rank = nullptr;
  double* mae = nullptr;
};

struct TreeOut {
  std::int64_t *left, *right, *feature, *n_node;
  double *threshold, *impurity, *wn, *value;  // value: cap * n_values
  std::int64_t cap;
};

// Node statistics: classification, the class weights of every output side
// by side (class_sum); regression, sum w y_k per output k, then sum over
// rows and outputs of w y_k^2 (scikit-learn's sq_sum_total).
TL_HD std::int64_t stat_width(std::int64_t class_sum, std::int64_t n_outputs) {
  return class_sum > 0 ? class_sum : n_outputs + 1;
}

// Impurity of a node from its statistics and its weight wn > 0: averaged
// over the outputs, as scikit-learn's (Poisson needs the rows: poisson_loss).
template <class T>
TL_HD double node_impurity(ForestCriterion c, const double* s, const TreeInput<T>& in, double wn) {
  using namespace tl::num;
  const std::int64_t O = in.n_outputs;
  const double nout = static_cast<double>(O);
  if (c == ForestCriterion::SquaredError || c == ForestCriterion::Poisson) {
    double imp = div(s[O], wn);
    for (std::int64_t k = 0; k < O; ++k) {
      const double m = div(s[k], wn);
      imp = sub(imp, mul(m, m));
    }
    return div(imp, nout);
  }
  const double ln2 = 0.693147180559945309417232121458;
  double acc = 0.0;
  std::int64_t off = 0;
  for (std::int64_t k = 0; k < O; ++k) {
    const std::int64_t nc = in.out_classes[k];
    if (c == ForestCriterion::Gini) {
      double sq = 0.0;
      for (std::int64_t j = 0; j < nc; ++j) sq = add(sq, mul(s[off + j], s[off + j]));
      acc = add(acc, sub(1.0, div(sq, mul(wn, wn))));
    } else {
      double e = 0.0;
      for (std::int64_t j = 0; j < nc; ++j) {
        if (s[off + j] > 0.0) {
          const double pk = div(s[off + j], wn);
          e = sub(e, mul(pk, div(tl::num::log(pk), ln2)));
        }
      }
      acc = add(acc, e);
    }
    off += nc;
  }
  return div(acc, nout);
}

TL_HD double infinity() { return tl::num::math_detail::inf<double>(); }

// scikit-learn's half Poisson deviance of rows idx[a..b) (weights w, sums
// of w y_k ysum[k], sum of w wsum): sum over outputs (then rows, in row
// order) of w y log(y / mean) / (wsum n_outputs); +inf when an output's
// ysum <= epsilon.
template <class T>
TL_HD double poisson_loss(const TreeInput<T>& in, const double* w, const std::int32_t* idx, std::int64_t a,
                          std::int64_t b, const double* ysum, double wsum) {
  using namespace tl::num;
  const std::int64_t O = in.n_outputs;
  double l = 0.0;
  for (std::int64_t k = 0; k < O; ++k) {
    if (ysum[k] <= kEpsilon) return infinity();
    const double m = div(ysum[k], wsum);
    for (std::int64_t q = a; q < b; ++q) {
      const std::int32_t r = idx[q];
      const double y = in.y_reg[r * O + k];
      if (y > 0.0) l = add(l, mul(w[r], mul(y, tl::num::log(div(y, m)))));
    }
  }
  return div(l, mul(wsum, static_cast<double>(O)));
}

// scikit-learn's proxy of the impurity improvement (larger is better; -inf:
// not a candidate).
template <class T>
TL_HD double split_proxy(ForestCriterion c, const double* sl, const double* sr, const TreeInput<T>& in, double wl,
                         double wr) {
  using namespace tl::num;
  const std::int64_t O = in.n_outputs;
  if (c == ForestCriterion::SquaredError) {
    double pl = 0.0, pr = 0.0;
    for (std::int64_t k = 0; k < O; ++k) {
      pl = add(pl, mul(sl[k], sl[k]));
      pr = add(pr, mul(sr[k], sr[k]));
    }
    return add(div(pl, wl), div(pr, wr));
  }
  if (c == ForestCriterion::Poisson) {
    double pl = 0.0, pr = 0.0;
    for (std::int64_t k = 0; k < O; ++k) {
      if (sl[k] <= kEpsilon || sr[k] <= kEpsilon) return -infinity();
      pl = add(pl, mul(sl[k], tl::num::log(div(sl[k], wl))));
      pr = add(pr, mul(sr[k], tl::num::log(div(sr[k], wr))));
    }
    return add(pl, pr);
  }
  return sub(mul(-wr, node_impurity(c, sr, in, wr)), mul(wl, node_impurity(c, sl, in, wl)));
}

template <class T>
TL_HD void add_row(const TreeInput<T>& in, const double* w, std::int32_t r, double* s) {
  using namespace tl::num;
  const double wr = w[r];
  const std::int64_t O = in.n_outputs;
  if (in.n_classes > 0) {
    std::int64_t off = 0;
    for (std::int64_t k = 0; k < O; ++k) {
      const std::int64_t j = off + in.y_class[r * O + k];
      s[j] = add(s[j], wr);
      off += in.out_classes[k];
    }
  } else {
    for (std::int64_t k = 0; k < O; ++k) {
      const double y = in.y_reg[r * O + k], wy = mul(wr, y);
      s[k] = add(s[k], wy);
      s[O] = add(s[O], mul(wy, y));
    }
  }
}

// Stable bottom-up merge sort of keys[0..m) carrying sidx; the result ends in
// keys / sidx.
template <class T>
TL_HOST_DEVICE inline void merge_sort(T* keys, std::int32_t* sidx, T* kt, std::int32_t* it, std::int64_t m) {
  T *ka = keys, *kb = kt;
  std::int32_t *ia = sidx, *ib = it;
  for (std::int64_t width = 1; width < m; width *= 2) {
    for (std::int64_t lo = 0; lo < m; lo += 2 * width) {
      const std::int64_t mid = lo + width < m ? lo + width : m;
      const std::int64_t hi = lo + 2 * width < m ? lo + 2 * width : m;
      std::int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) {
        if (ka[b] < ka[a]) {
          kb[o] = ka[b];
          ib[o++] = ia[b++];
        } else {
          kb[o] = ka[a];
          ib[o++] = ia[a++];
        }
      }
      while (a < mid) {
        kb[o] = ka[a];
        ib[o++] = ia[a++];
      }
      while (b < hi) {
        kb[o] = ka[b];
        ib[o++] = ia[b++];
      }
    }
    T* tk = ka;
    ka = kb;
    kb = tk;
    std::int32_t* ti = ia;
    ia = ib;
    ib = ti;
  }
  if (ka != keys)
    for (std::int64_t q = 0; q < m; ++q) {
      keys[q] = ka[q];
      sidx[q] = ia[q];
    }
}

// -- the absolute-error criterion ---------------------------------------------------
// A node's rows are ranked by y once (stable merge sort); the absolute error
// of any subset of them then comes from one pass adding its rows, one at a
// time, to a Fenwick tree over those ranks (prefix sums of w and w y): after
// each row the weighted median is found by descending the tree, and
// sum w |y - median| by the pinball identity (wy_right - m w_right) +
// (m w_left - wy_left), as scikit-learn's MAE criterion. O(n log n) per pass.
TL_HD std::int64_t mae_doubles(std::int64_t rows, std::int64_t n_outputs) { return (n_outputs + 5) * rows + 2; }

struct MaeWork {
  const std::int32_t* rank;                         // rank[k * rows + r]: row r's place in the node's order of output k
  double *ysort, *ytmp, *fw, *fwy, *err_l, *err_r;  // ysort[k * rows + j]: output k's j-th smallest value
  std::int64_t n, rows, n_outputs;                  // n: the node's row count (the Fenwick tree's size)
};

TL_HD MaeWork mae_work(std::int32_t* rank, double* buf, std::int64_t rows, std::int64_t n_outputs, std::int64_t n) {
  double* b = buf + n_outputs * rows;
  return MaeWork{rank, buf, b, b + rows, b + 2 * rows + 1, b + 3 * rows + 2, b + 4 * rows + 2, n, rows, n_outputs};
}

// Ranks the rows idx[0..n) by each output's y (ties in row order).
// sidx / sidx_tmp: n int32 of scratch.
template <class T>
TL_HOST_DEVICE inline void mae_rank(const TreeInput<T>& in, const std::int32_t* idx, std::int64_t n, std::int32_t* rank,
                                    const MaeWork& mw, std::int32_t* sidx, std::int32_t* sidx_tmp) {
  const std::int64_t O = mw.n_outputs;
  for (std::int64_t k = 0; k < O; ++k) {
    double* ys = mw.ysort + k * mw.rows;
    for (std::int64_t q = 0; q < n; ++q) {
      ys[q] = in.y_reg[idx[q] * O + k];
      sidx[q] = idx[q];
    }
    merge_sort(ys, sidx, mw.ytmp, sidx_tmp, n);
    for (std::int64_t j = 0; j < n; ++j) rank[k * mw.rows + sidx[j]] = static_cast<std::int32_t>(j);
  }
}

// Adds rows seq[0..m) to an empty Fenwick tree, in order (or from the last
// back to the first); after adding seq[q], err[q] (when err is not null) is
// the absolute error of the rows added so far. Returns the absolute error of
// all m rows and sets *median to their weighted median (the mean of the two
// middle values when a prefix weighs exactly half).
TL_HD double mae_pass(const MaeWork& mw, std::int64_t out, const double* w, const std::int32_t* seq, std::int64_t m,
                      bool backward, bool accumulate, double* err, double* median) {
  using namespace tl::num;
  const std::int64_t n = mw.n;
  const std::int32_t* rank = mw.rank + out * mw.rows;
  const double* ysort = mw.ysort + out * mw.rows;
  for (std::int64_t k = 0; k <= n; ++k) mw.fw[k] = mw.fwy[k] = 0.0;
  std::int64_t top_bit = 1;
  while (top_bit * 2 <= n) top_bit *= 2;
  double tw = 0.0, twy = 0.0, ae = 0.0, med = 0.0;
  for (std::int64_t s = 0; s < m; ++s) {
    const std::int64_t q = backward ? m - 1 - s : s;
    const std::int32_t r = seq[q];
    const std::int32_t k = rank[r];
    const double wr = w[r], wy = mul(wr, ysort[k]);
    for (std::int64_t f = k + 1; f <= n; f += f & -f) {
      mw.fw[f] = add(mw.fw[f], wr);
      mw.fwy[f] = add(mw.fwy[f], wy);
    }
    tw = add(tw, wr);
    twy = add(twy, wy);
    const double half = mul(0.5, tw);
    // pos: the largest prefix (1-based) of weight <= half; rank pos is the
    // first whose prefix weighs more than half.
    std::int64_t pos = 0;
    double wl = 0.0, wyl = 0.0;
    for (std::int64_t b = top_bit; b > 0; b /= 2) {
      const std::int64_t nx = pos + b;
      if (nx <= n && add(wl, mw.fw[nx]) <= half) {
        pos = nx;
        wl = add(wl, mw.fw[nx]);
        wyl = add(wyl, mw.fwy[nx]);
      }
    }
    if (pos >= n) pos = n - 1;  // only if rounding put all the weight at or below half
    med = ysort[pos];
    if (wl == half && pos > 0) {
      // A prefix weighs exactly half: the median is the midpoint of its last
      // value (the first rank whose prefix reaches half) and the next one.
      std::int64_t p2 = 0;
      double w2 = 0.0;
      for (std::int64_t b = top_bit; b > 0; b /= 2) {
        const std::int64_t nx = p2 + b;
        if (nx <= n && add(w2, mw.fw[nx]) < half) {
          p2 = nx;
          w2 = add(w2, mw.fw[nx]);
        }
      }
      med = div(add(ysort[p2], ysort[pos]), 2.0);
    }
    const double wrt = sub(tw, wl), wyr = sub(twy, wyl);
    ae = add(sub(wyr, mul(med, wrt)), sub(mul(med, wl), wyl));
    if (err) err[q] = accumulate ? add(err[q], ae) : ae;
  }
  if (median) *median = med;
  return ae;
}

// The absolute error of rows seq[0..m) summed over the outputs (err[q],
// when not null: of the rows added up to seq[q], summed over the outputs in
// output order); medians (when not null): each output's weighted median.
TL_HD double mae_error(const MaeWork& mw, const double* w, const std::int32_t* seq, std::int64_t m, bool backward,
                       double* err, double* medians) {
  double ae = 0.0;
  for (std::int64_t k = 0; k < mw.n_outputs; ++k)
    ae = tl::num::add(ae, mae_pass(mw, k, w, seq, m, backward, k > 0, err, medians ? medians + k : nullptr));
  return ae;
}

// scikit-learn's default proxy (-w_r impurity_r - w_l impurity_l) from the
// children's absolute errors (impurity: error / (weight n_outputs)).
TL_HD double mae_proxy(double ae_l, double ae_r, double wl, double wr, std::int64_t n_outputs) {
  using namespace tl::num;
  const double o = static_cast<double>(n_outputs);
  return sub(mul(-wr, div(ae_r, mul(wr, o))), mul(wl, div(ae_l, mul(wl, o))));
}

struct BestSplit {
  std::int64_t feature = -1;
  double threshold = 0.0;
  double proxy = -infinity();
};

// Builds tree `tree` (global index); returns its node count.
template <class T>
TL_HOST_DEVICE inline std::int64_t build_tree(const TreeInput<T>& in, const ForestParams& p, std::int64_t tree,
                                              const TreeWork<T>& wk, const TreeOut& out) {
  using namespace tl::num;
  const std::int64_t rows = in.rows, cols = in.cols, C = in.n_classes, O = in.n_outputs;
  const std::int64_t S = stat_width(in.class_sum, O), V = C > 0 ? O * C : O;
  double* total = wk.stats;
  double* left = total + S;
  double* right = left + S;
  double* cw = right + S;  // class_sum: balanced_subsample's class weights, output by output
  const T fthr = static_cast<T>(kFeatureThreshold);

  // -- the rows of this tree and their weights
  for (std::int64_t i = 0; i < rows; ++i) wk.count[i] = p.bootstrap ? 0 : 1;
  if (p.bootstrap) {
    const std::uint64_t st = stream_of(kBootstrap, tree, 0);
    if (in.cum_weight) {
      // scikit-learn's weighted bootstrap (rows drawn with probability
      // weight / total): the first row whose running sum exceeds u * total.
      const double total = in.cum_weight[rows - 1];
      for (std::int64_t q = 0; q < p.n_samples_bootstrap; ++q) {
        const double u = mul(tl::rng::uniform<double>(p.seed, st, static_cast<std::uint64_t>(q)), total);
        std::int64_t lo = 0, hi = rows - 1;
        while (lo < hi) {
          const std::int64_t m = lo + (hi - lo) / 2;
          if (in.cum_weight[m] > u)
            hi = m;
          else
            lo = m + 1;
        }
        ++wk.count[lo];
      }
    } else {
      for (std::int64_t q = 0; q < p.n_samples_bootstrap; ++q)
        ++wk.count[tl::rng::integer(p.seed, st, static_cast<std::uint64_t>(q), static_cast<std::uint64_t>(rows))];
    }
  }
  if (p.balanced_subsample && C > 0) {
    // scikit-learn's compute_sample_weight('balanced', y, indices): per
    // output, over the bootstrap draws (with repetitions), n / (classes
    // present * draws of c); a row's weight is the product over the outputs.
    for (std::int64_t j = 0; j < in.class_sum; ++j) cw[j] = 0.0;
    std::int64_t draws = 0;
    for (std::int64_t i = 0; i < rows; ++i) draws += wk.count[i];
    std::int64_t off = 0;
    for (std::int64_t k = 0; k < O; ++k) {
      const std::int64_t nc = in.out_classes[k];
      for (std::int64_t i = 0; i < rows; ++i)
        cw[off + in.y_class[i * O + k]] += static_cast<double>(wk.count[i]);  // exact
      std::int64_t present = 0;
      for (std::int64_t j = 0; j < nc; ++j)
        if (cw[off + j] > 0.0) ++present;
      for (std::int64_t j = 0; j < nc; ++j)
        cw[off + j] =
            cw[off + j] > 0.0 ? div(static_cast<double>(draws), mul(static_cast<double>(present), cw[off + j])) : 0.0;
      off += nc;
    }
  }
  std::int64_t n_in = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    // With bootstrap the weights chose the rows and the tree sees the
    // counts (scikit-learn >= 1.9); without, the tree sees the weights.
    double wi = p.bootstrap ? static_cast<double>(wk.count[i]) : (in.weight ? in.weight[i] : 1.0);
    if (p.balanced_subsample && C > 0) {
      double f = 1.0;
      std::int64_t off = 0;
      for (std::int64_t k = 0; k < O; ++k) {
        f = k == 0 ? cw[off + in.y_class[i * O + k]] : mul(f, cw[off + in.y_class[i * O + k]]);
        off += in.out_classes[k];
      }
      wi = mul(wi, f);
    }
    wk.w[i] = wi;
    if (wi > 0.0) wk.idx[n_in++] = static_cast<std::int32_t>(i);
  }
  double w_total = 0.0;
  for (std::int64_t q = 0; q < n_in; ++q) w_total = add(w_total, wk.w[wk.idx[q]]);
  const double min_weight_leaf = mul(p.min_weight_fraction_leaf, w_total);

  const bool poisson = p.criterion == ForestCriterion::Poisson;
  const bool mae = p.criterion == ForestCriterion::AbsoluteError;
  std::int64_t n_nodes = 0;
  // Builds the node of `rec` (statistics, value, best split, the partition
  // of its rows); true when it is to be split (rec.node, rec.mid and
  // rec.improvement then say how).
  auto grow = [&](StackRec& rec) -> bool {
    const std::int64_t start = rec.start, end = rec.end, n_node = end - start;
    for (std::int64_t k = 0; k < S; ++k) total[k] = 0.0;
    double wn = 0.0;
    for (std::int64_t q = start; q < end; ++q) {
      const std::int32_t r = wk.idx[q];
      wn = add(wn, wk.w[r]);
      add_row(in, wk.w, r, total);
    }
    const std::int64_t node = n_nodes++;
    const MaeWork mw = mae ? mae_work(wk.rank, wk.mae, rows, O, n_node) : MaeWork{};
    if (mae && wn > 0.0) mae_rank(in, wk.idx + start, n_node, wk.rank, mw, wk.sidx, wk.sidx_tmp);
    if (mae)  // the medians go straight to the node's values
      for (std::int64_t k = 0; k < O; ++k) out.value[node * V + k] = 0.0;
    const double imp = !(wn > 0.0) ? 0.0
                       : poisson   ? poisson_loss(in, wk.w, wk.idx, start, end, total, wn)
                       : mae ? div(mae_error(mw, wk.w, wk.idx + start, n_node, false, nullptr, out.value + node * V),
                                   mul(wn, static_cast<double>(O)))
                             : node_impurity(p.criterion, total, in, wn);
    if (rec.parent >= 0) {
      if (rec.is_left)
        out.left[rec.parent] = node;
      else
        out.right[rec.parent] = node;
    }
    out.n_node[node] = n_node;
    out.wn[node] = wn;
    out.impurity[node] = imp;
    out.left[node] = out.right[node] = -1;
    out.feature[node] = -2;
    out.threshold[node] = -2.0;
    if (C > 0) {  // output k's classes at k * C.. (zero past its own count)
      std::int64_t off = 0;
      for (std::int64_t k = 0; k < O; ++k) {
        for (std::int64_t j = 0; j < C; ++j)
          out.value[node * V + k * C + j] = j < in.out_classes[k] ? total[off + j] : 0.0;
        off += in.out_classes[k];
      }
    } else if (!mae) {
      for (std::int64_t k = 0; k < O; ++k) out.value[node * V + k] = wn > 0.0 ? div(total[k], wn) : 0.0;
    }
    bool leaf = (p.max_depth >= 0 && rec.depth >= p.max_depth) || n_node < p.min_samples_split ||
                n_node < 2 * p.min_samples_leaf || wn < mul(2.0, min_weight_leaf) || imp <= kEpsilon;
    BestSplit best;
    if (!leaf) {
      // Features in a Fisher-Yates order drawn for this node; the first
      // max_features non-constant ones are tried.
      for (std::int64_t j = 0; j < cols; ++j) wk.feats[j] = static_cast<std::int32_t>(j);
      const std::uint64_t fst = stream_of(kFeatures, tree, node), tst = stream_of(kThresholds, tree, node);
      std::int64_t tried = 0;
      for (std::int64_t k = 0; k < cols && tried < p.max_features; ++k) {
        const std::int64_t j =
            k + static_cast<std::int64_t>(
                    tl::rng::integer(p.seed, fst, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(cols - k)));
        const std::int32_t f = wk.feats[j];
        wk.feats[j] = wk.feats[k];
        wk.feats[k] = f;
        if (p.splitter == ForestSplitter::Best) {
          for (std::int64_t q = start; q < end; ++q) {
            const std::int32_t r = wk.idx[q];
            wk.keys[q - start] = in.X[r * in.rs + f * in.cs];
            wk.sidx[q - start] = r;
          }
          merge_sort(wk.keys, wk.sidx, wk.keys_tmp, wk.sidx_tmp, n_node);
          if (wk.keys[n_node - 1] <= add(wk.keys[0], fthr)) continue;  // constant here
          ++tried;
          if (mae) {  // err_l[q]: rows sidx[0..q]; err_r[q]: rows sidx[q..n)
            mae_error(mw, wk.w, wk.sidx, n_node, false, mw.err_l, nullptr);
            mae_error(mw, wk.w, wk.sidx, n_node, true, mw.err_r, nullptr);
          }
          for (std::int64_t s = 0; s < S; ++s) left[s] = 0.0;
          double wl = 0.0;
          for (std::int64_t q = 0; q + 1 < n_node; ++q) {
            const std::int32_t r = wk.sidx[q];
            wl = add(wl, wk.w[r]);
            add_row(in, wk.w, r, left);
            if (wk.keys[q + 1] <= add(wk.keys[q], fthr)) continue;
            const std::int64_t nl = q + 1, nr = n_node - q - 1;
            if (nl < p.min_samples_leaf || nr < p.min_samples_leaf) continue;
            const double wr = sub(wn, wl);
            if (wl < min_weight_leaf || wr < min_weight_leaf || !(wl > 0.0) || !(wr > 0.0)) continue;
            for (std::int64_t s = 0; s < S; ++s) right[s] = sub(total[s], left[s]);
            const double proxy = mae ? mae_proxy(mw.err_l[q], mw.err_r[q + 1], wl, wr, O)
                                     : split_proxy(p.criterion, left, right, in, wl, wr);
            if (proxy > best.proxy) {
              // scikit-learn's midpoint, in double: a / 2 + b / 2 (a if that
              // rounds to b or overflows).
              const double ka = static_cast<double>(wk.keys[q]), kb = static_cast<double>(wk.keys[q + 1]);
              double mid = add(div(ka, 2.0), div(kb, 2.0));
              if (mid == kb || !(sub(mid, mid) == 0.0)) mid = ka;
              best.feature = f;
              best.threshold = mid;
              best.proxy = proxy;
            }
          }
        } else {
          T lo = in.X[wk.idx[start] * in.rs + f * in.cs], hi = lo;
          for (std::int64_t q = start + 1; q < end; ++q) {
            const T x = in.X[wk.idx[q] * in.rs + f * in.cs];
            if (x < lo) lo = x;
            if (x > hi) hi = x;
          }
          if (hi <= add(lo, fthr)) continue;
          ++tried;
          const double u = tl::rng::uniform<double>(p.seed, tst, static_cast<std::uint64_t>(k));
          double thr = add(static_cast<double>(lo), mul(u, sub(static_cast<double>(hi), static_cast<double>(lo))));
          if (thr >= static_cast<double>(hi)) thr = static_cast<double>(lo);
          for (std::int64_t s = 0; s < S; ++s) left[s] = 0.0;
          double wl = 0.0;
          std::int64_t nl = 0, nr_seen = 0;
          for (std::int64_t q = start; q < end; ++q) {
            const std::int32_t r = wk.idx[q];
            if (static_cast<double>(in.X[r * in.rs + f * in.cs]) <= thr) {
              wk.sidx[nl++] = r;  // the sides in row order (absolute error)
              wl = add(wl, wk.w[r]);
              add_row(in, wk.w, r, left);
            } else {
              wk.sidx_tmp[nr_seen++] = r;
            }
          }
          const std::int64_t nr = n_node - nl;
          if (nl < p.min_samples_leaf || nr < p.min_samples_leaf) continue;
          const double wr = sub(wn, wl);
          if (wl < min_weight_leaf || wr < min_weight_leaf || !(wl > 0.0) || !(wr > 0.0)) continue;
          for (std::int64_t s = 0; s < S; ++s) right[s] = sub(total[s], left[s]);
          const double proxy = mae ? mae_proxy(mae_error(mw, wk.w, wk.sidx, nl, false, nullptr, nullptr),
                                               mae_error(mw, wk.w, wk.sidx_tmp, nr, false, nullptr, nullptr), wl, wr, O)
                                   : split_proxy(p.criterion, left, right, in, wl, wr);
          if (proxy > best.proxy) {
            best.feature = f;
            best.threshold = thr;
            best.proxy = proxy;
          }
        }
      }
      leaf = best.feature < 0;
    }
    std::int64_t mid_pos = start;
    if (!leaf) {
      // Stable partition of the node's rows (increasing row order on each
      // side), with the left side's statistics summed in that order.
      for (std::int64_t s = 0; s < S; ++s) left[s] = 0.0;
      double wl = 0.0;
      std::int64_t a = start, b = 0;
      for (std::int64_t q = start; q < end; ++q) {
        const std::int32_t r = wk.idx[q];
        if (static_cast<double>(in.X[r * in.rs + best.feature * in.cs]) <= best.threshold) {
          wk.idx[a++] = r;
          wl = add(wl, wk.w[r]);
          add_row(in, wk.w, r, left);
        } else {
          wk.idx_tmp[b++] = r;
        }
      }
      for (std::int64_t q = 0; q < b; ++q) wk.idx[a + q] = wk.idx_tmp[q];
      mid_pos = a;
      const double wr = sub(wn, wl);
      for (std::int64_t s = 0; s < S; ++s) right[s] = sub(total[s], left[s]);
      const double o = static_cast<double>(O);
      const double il =
          poisson ? poisson_loss(in, wk.w, wk.idx, start, mid_pos, left, wl)
          : mae   ? div(mae_error(mw, wk.w, wk.idx + start, mid_pos - start, false, nullptr, nullptr), mul(wl, o))
                  : node_impurity(p.criterion, left, in, wl);
      const double ir =
          poisson ? poisson_loss(in, wk.w, wk.idx, mid_pos, end, right, wr)
          : mae   ? div(mae_error(mw, wk.w, wk.idx + mid_pos, end - mid_pos, false, nullptr, nullptr), mul(wr, o))
                  : node_impurity(p.criterion, right, in, wr);
      // scikit-learn's impurity_improvement, weighted by the node's share.
      const double improvement = mul(div(wn, w_total), sub(sub(imp, mul(div(wr, wn), ir)), mul(div(wl, wn), il)));
      if (add(improvement, kEpsilon) < p.min_impurity_decrease) leaf = true;
      rec.improvement = improvement;
    }
    if (leaf) return false;
    out.feature[node] = best.feature;
    out.threshold[node] = best.threshold;
    rec.node = node;
    rec.mid = static_cast<std::int32_t>(mid_pos);
    return true;
  };

  std::int64_t top = 0;
  StackRec root{0, static_cast<std::int32_t>(n_in), 0, 0, -1};
  if (p.max_leaf_nodes < 0) {
    // -- depth first, left child first
    wk.stack[top++] = root;
    while (top > 0) {
      StackRec rec = wk.stack[--top];
      if (!grow(rec)) continue;
      const std::int32_t d1 = rec.depth + 1;
      wk.stack[top++] = StackRec{rec.mid, rec.end, d1, 0, rec.node};
      wk.stack[top++] = StackRec{rec.start, rec.mid, d1, 1, rec.node};
    }
    return n_nodes;
  }
  // -- best first (scikit-learn's BestFirstTreeBuilder): the frontier node of
  // largest improvement is split next (the node created first on ties),
  // its left child built before its right, until max_leaf_nodes leaves.
  std::int64_t splits_left = p.max_leaf_nodes - 1;
  if (grow(root)) wk.stack[top++] = root;
  while (top > 0) {
    std::int64_t b = 0;
    for (std::int64_t q = 1; q < top; ++q) {
      const StackRec& c = wk.stack[q];
      if (c.improvement > wk.stack[b].improvement ||
          (c.improvement == wk.stack[b].improvement && c.node < wk.stack[b].node))
        b = q;
    }
    const StackRec rec = wk.stack[b];
    wk.stack[b] = wk.stack[--top];
    if (splits_left <= 0) {  // out of leaves: the node stays a leaf
      out.feature[rec.node] = -2;
      out.threshold[rec.node] = -2.0;
      continue;
    }
    --splits_left;
    const std::int32_t d1 = rec.depth + 1;
    StackRec l{rec.start, rec.mid, d1, 1, rec.node}, r{rec.mid, rec.end, d1, 0, rec.node};
    if (grow(l)) wk.stack[top++] = l;
    if (grow(r)) wk.stack[top++] = r;
  }
  return n_nodes;
}

// The leaf row x reaches in one tree (tree-local arrays).
template <class T>
TL_HD std::int64_t tree_leaf(const T* x, std::int64_t cs, const std::int64_t* left, const std::int64_t* right,
                             const std::int64_t* feature, const double* threshold) {
  std::int64_t k = 0;
  while (left[k] >= 0) k = static_cast<double>(x[feature[k] * cs]) <= threshold[k] ? left[k] : right[k];
  return k;
}

}  // namespace tl::forest_detail
