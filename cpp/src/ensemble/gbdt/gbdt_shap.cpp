// SHAP values of the gradient-boosted trees: exact TreeSHAP (Lundberg, Erion
// and Lee, "Consistent Individualized Feature Attribution for Tree
// Ensembles", 2018, Algorithm 2), written from the paper's description, and
// the per-leaf covers it weighs the branches by. Host code, the same for
// every backend: rows run in parallel, each row's arithmetic in a fixed
// order (trees in order, the path recursion hot child first), so the bits do
// not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"

namespace tl {
namespace {

using gbdt_cpu::ceil_div;
using gbdt_cpu::pfor;

// One tree as the walk sees it: its splits start at so, its leaf values (2^depth x D) at lv,
// its node covers ncov[(2^l - 1) + p] for level l in 0..depth and prefix p (the leaves at l = depth).
struct TreeRef {
  int depth = 0;
  std::int64_t so = 0;
  const double* lv = nullptr;
  const double* ncov = nullptr;
};

struct Walk {
  const GbdtModel* m = nullptr;
  bool per_node = false;
  bool nan_max = false;
  const std::uint8_t* nan_right = nullptr;
};

// The row's branch at split entry s (the prediction's rule).
template <class T>
bool row_right(const Walk& w, const MatrixView<const T>& X, std::int64_t i, std::int64_t s) {
  const int f = w.m->split_feature[s];
  return gbdt::goes_right(static_cast<double>(X(i, f)), w.m->split_border[s], gbdt::nan_goes_right(w.nan_right, s, w.nan_max));
}

// An element of the path of unique features from the root to a node: the
// feature d (-1: the root's placeholder), the fraction z of the reference
// weight that follows the path at d's splits, whether the row itself does
// (o, 0 or 1), and the weight w of the subsets of the path's size i.
struct PathElem {
  int d;
  double z;
  double o;
  double w;
};

// Adds (d, z, o) to the path m[0..len): the subset weights of the longer path.
void extend(PathElem* m, int len, double z, double o, int d) {
  m[len] = PathElem{d, z, o, len == 0 ? 1.0 : 0.0};
  const double l1 = static_cast<double>(len + 1);
  for (int i = len - 1; i >= 0; --i) {
    m[i + 1].w = num::add(m[i + 1].w, num::div(num::mul(num::mul(o, m[i].w), static_cast<double>(i + 1)), l1));
    m[i].w = num::div(num::mul(num::mul(z, m[i].w), static_cast<double>(len - i)), l1);
  }
}

// Removes element k of the path m[0..len) (the inverse of extend); returns len - 1.
int unwind(PathElem* m, int len, int k) {
  const int l = len - 1;
  const double o = m[k].o, z = m[k].z;
  const double l1 = static_cast<double>(l + 1);
  double n = m[l].w;
  for (int j = l - 1; j >= 0; --j) {
    if (o != 0.0) {
      const double t = m[j].w;
      m[j].w = num::div(num::mul(n, l1), num::mul(static_cast<double>(j + 1), o));
      n = num::sub(t, num::div(num::mul(num::mul(m[j].w, z), static_cast<double>(l - j)), l1));
    } else {
      m[j].w = num::div(num::mul(m[j].w, l1), num::mul(z, static_cast<double>(l - j)));
    }
  }
  for (int j = k; j < l; ++j) {
    m[j].d = m[j + 1].d;
    m[j].z = m[j + 1].z;
    m[j].o = m[j + 1].o;
  }
  return l;
}

// The total weight of the path m[0..len) with element k removed (unwind's sum, m unchanged).
double unwound_sum(const PathElem* m, int len, int k) {
  const int l = len - 1;
  const double o = m[k].o, z = m[k].z;
  const double l1 = static_cast<double>(l + 1);
  double n = m[l].w, total = 0.0;
  for (int j = l - 1; j >= 0; --j) {
    if (o != 0.0) {
      const double t = num::div(num::mul(n, l1), num::mul(static_cast<double>(j + 1), o));
      total = num::add(total, t);
      n = num::sub(m[j].w, num::div(num::mul(num::mul(t, z), static_cast<double>(l - j)), l1));
    } else {
      total = num::add(total, num::div(num::mul(m[j].w, l1), num::mul(z, static_cast<double>(l - j))));
    }
  }
  return total;
}

// The node (level, prefix) of a tree, reached with the path m[0..len) (already
// extended by the branch into it). phi: D x (F + 1), the row's values so far.
template <class T>
void recurse(const Walk& w, const TreeRef& t, const MatrixView<const T>& X, std::int64_t i, int level, std::int64_t prefix, PathElem* m, int len,
             int D, int F1, double* phi) {
  // A per-node split of feature -1 sends every row left and is no split: pass through.
  while (level < t.depth && w.m->split_feature[t.so + gbdt::split_slot(w.per_node, level, prefix)] < 0) ++level;
  if (level == t.depth) {
    const double* v = t.lv + prefix * D;
    for (int e = 1; e < len; ++e) {
      const double s = num::mul(unwound_sum(m, len, e), num::sub(m[e].o, m[e].z));
      for (int k = 0; k < D; ++k) phi[k * F1 + m[e].d] = num::add(phi[k * F1 + m[e].d], num::mul(s, v[k]));
    }
    return;
  }
  const std::int64_t s = t.so + gbdt::split_slot(w.per_node, level, prefix);
  const int f = w.m->split_feature[s];
  const std::int64_t right = prefix | (std::int64_t(1) << level);
  const std::int64_t hot = row_right(w, X, i, s) ? right : prefix;
  const std::int64_t cold = hot == prefix ? right : prefix;
  double iz = 1.0, io = 1.0;
  int k = 1;
  while (k < len && m[k].d != f) ++k;
  if (k < len) {  // f is on the path already: its element is replaced by this split's
    iz = m[k].z;
    io = m[k].o;
    len = unwind(m, len, k);
  }
  const double* up = t.ncov + ((std::int64_t(1) << level) - 1);
  const double* down = t.ncov + ((std::int64_t(1) << (level + 1)) - 1);
  const double rj = up[prefix];
  const std::int64_t child[2] = {hot, cold};
  for (int c = 0; c < 2; ++c) {
    const double z = rj > 0.0 ? num::div(num::mul(iz, down[child[c]]), rj) : 0.0;
    const double o = c == 0 ? io : 0.0;
    if (z == 0.0 && o == 0.0) continue;  // every value of the subtree would be weighted 0
    PathElem* next = m + len;
    std::copy(m, m + len, next);
    extend(next, len, z, o, f);
    recurse(w, t, X, i, level + 1, child[c], next, len + 1, D, F1, phi);
  }
}

}  // namespace

template <class T>
std::vector<double> gbdt_leaf_cover(const Context& ctx, const GbdtModel& model, MatrixView<const T> X,
                                    const double* weight) {
  model.validate();
  TL_REQUIRE(X.on_host(), ValueError, "gbdt_leaf_cover: X must be a host array");
  TL_REQUIRE(X.cols == model.n_features, ValueError, "X has ", X.cols, " features, but the model is expecting ",
             model.n_features, " features as input.");
  std::vector<std::int64_t> so, lo;
  gbdt::tree_offsets(model, &so, &lo);
  const int D = model.n_outputs;
  std::vector<double> cover(model.leaf_values.size() / static_cast<std::size_t>(D), 0.0);
  const Walk w{&model, gbdt_per_node(model.grow_policy), model.nan_mode == GbdtNanMode::Max,
               model.split_nan_right.empty() ? nullptr : model.split_nan_right.data()};
  const std::int64_t n = X.rows;
  // One task per tree; each sums its rows' weights in row order.
  pfor(ctx, model.n_trees(), n * model.n_trees() * 4, [&](std::int64_t t) {
    double* c = cover.data() + lo[t] / D;
    const int depth = model.tree_depth[t];
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t leaf = 0;
      for (int d = 0; d < depth; ++d) {
        const std::int64_t s = so[t] + gbdt::split_slot(w.per_node, d, leaf);
        if (model.split_feature[s] < 0) continue;
        leaf |= static_cast<std::int64_t>(row_right(w, X, i, s)) << d;
      }
      c[leaf] = num::add(c[leaf], weight ? weight[i] : 1.0);
    }
  });
  return cover;
}

template <class T>
void gbdt_shap_values(const Context& ctx, const GbdtModel& model, MatrixView<const T> X,
                      const std::vector<double>& leaf_cover, double* out) {
  model.validate();
  TL_REQUIRE(X.on_host(), ValueError, "gbdt_shap_values: X must be a host array");
  TL_REQUIRE(X.cols == model.n_features, ValueError, "X has ", X.cols, " features, but the model is expecting ",
             model.n_features, " features as input.");
  const int D = model.n_outputs;
  const int F1 = model.n_features + 1;
  TL_REQUIRE(leaf_cover.size() * static_cast<std::size_t>(D) == model.leaf_values.size(), ValueError,
             "gbdt_shap_values: leaf_cover has ", leaf_cover.size(), " entries, the model has ",
             model.leaf_values.size() / static_cast<std::size_t>(D), " leaves");
  std::vector<std::int64_t> so, lo;
  gbdt::tree_offsets(model, &so, &lo);
  const std::int64_t nt = model.n_trees();
  // Node covers per tree (level by level, leaves last; a node's cover is its
  // children's sum, left + right) and each tree's expected value per output
  // (the cover-weighted mean of the leaves: at every node (r_left v_left +
  // r_right v_right) / r_node, 0 where the node's cover is 0).
  std::vector<std::int64_t> coff(static_cast<std::size_t>(nt + 1), 0);
  int max_depth = 0;
  for (std::int64_t t = 0; t < nt; ++t) {
    coff[t + 1] = coff[t] + (std::int64_t(2) << model.tree_depth[t]) - 1;
    max_depth = std::max(max_depth, static_cast<int>(model.tree_depth[t]));
  }
  std::vector<double> ncov(static_cast<std::size_t>(coff[nt])), expect(static_cast<std::size_t>(D), 0.0);
  for (int k = 0; k < D; ++k) expect[k] = model.base_score[k];
  std::vector<double> ev;
  for (std::int64_t t = 0; t < nt; ++t) {
    const int depth = model.tree_depth[t];
    const std::int64_t L = std::int64_t(1) << depth;
    double* c = ncov.data() + coff[t];
    const double* lc = leaf_cover.data() + lo[t] / D;
    for (std::int64_t j = 0; j < L; ++j) {
      TL_REQUIRE(lc[j] >= 0.0 && std::isfinite(lc[j]), ValueError, "gbdt_shap_values: leaf covers must be finite and >= 0");
      c[L - 1 + j] = lc[j];
    }
    ev.assign(model.leaf_values.begin() + lo[t], model.leaf_values.begin() + lo[t] + L * D);
    for (int l = depth - 1; l >= 0; --l) {
      const std::int64_t P = std::int64_t(1) << l;
      for (std::int64_t p = 0; p < P; ++p) {
        const double rl = c[2 * P - 1 + p], rr = c[2 * P - 1 + (p | P)];
        const double r = num::add(rl, rr);
        c[P - 1 + p] = r;
        for (int k = 0; k < D; ++k) {
          // ev holds the subtree values at level l + 1 by prefix; fold them to level l.
          const double vl = ev[p * D + k], vr = ev[(p | P) * D + k];
          ev[p * D + k] = r > 0.0 ? num::div(num::add(num::mul(rl, vl), num::mul(rr, vr)), r) : 0.0;
        }
      }
    }
    TL_REQUIRE(c[0] > 0.0, ValueError, "gbdt_shap_values: tree ", t, " has no cover (the reference rows weigh 0)");
    for (int k = 0; k < D; ++k) expect[k] = num::add(expect[k], ev[k]);
  }
  const Walk w{&model, gbdt_per_node(model.grow_policy), model.nan_mode == GbdtNanMode::Max,
               model.split_nan_right.empty() ? nullptr : model.split_nan_right.data()};
  const std::int64_t n = X.rows;
  const std::int64_t per_row = static_cast<std::int64_t>(D) * F1;
  const std::size_t path_size = static_cast<std::size_t>((max_depth + 2) * (max_depth + 3));
  constexpr std::int64_t kShapRows = 64;  // rows per task (results do not depend on it)
  pfor(ctx, ceil_div(n, kShapRows), n * (coff[nt] + 1) * 8, [&](std::int64_t blk) {
    std::vector<PathElem> path(path_size);
    const std::int64_t r1 = std::min(n, (blk + 1) * kShapRows);
    for (std::int64_t i = blk * kShapRows; i < r1; ++i) {
      double* phi = out + i * per_row;
      std::fill(phi, phi + per_row, 0.0);
      for (std::int64_t t = 0; t < nt; ++t) {
        const TreeRef tr{model.tree_depth[t], so[t], model.leaf_values.data() + lo[t], ncov.data() + coff[t]};
        extend(path.data(), 0, 1.0, 1.0, -1);
        recurse(w, tr, X, i, 0, 0, path.data(), 1, D, F1, phi);
      }
      for (int k = 0; k < D; ++k) phi[k * F1 + F1 - 1] = expect[k];
    }
  });
}

#define TL_GBDT_INSTANTIATE(T)                                                                                     \
  template std::vector<double> gbdt_leaf_cover<T>(const Context&, const GbdtModel&, MatrixView<const T>,          \
                                                  const double*);                                                 \
  template void gbdt_shap_values<T>(const Context&, const GbdtModel&, MatrixView<const T>, const std::vector<double>&, \
                                    double*);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl
