#include <limits>

#include "ensemble/iforest/iforest_common.hpp"

namespace tl {

double iforest_average_path_length(std::int64_t n) { return iforest_detail::average_path_length(n); }

template <class T>
IForestTrees iforest_fit(const Context& ctx, MatrixView<const T> X, const double* weight, const IForestParams& p) {
  TL_REQUIRE(X.rows >= 1 && X.cols >= 1, ValueError, "iforest_fit: X must have at least one row and one column, got ",
             X.rows, " x ", X.cols);
  TL_REQUIRE(X.on_host(), ValueError, "iforest_fit: the trees are built on the host; X must be a host array");
  TL_REQUIRE(X.rows < std::numeric_limits<std::int32_t>::max(), ValueError, "iforest_fit: at most 2^31 - 1 rows, got ",
             X.rows);
  TL_REQUIRE(p.n_trees >= 0 && p.first_tree >= 0 && p.first_tree + p.n_trees < (std::int64_t(1) << 30), ValueError,
             "iforest_fit: tree indices must lie in [0, 2^30)");
  TL_REQUIRE(p.max_samples >= 1, ValueError, "iforest_fit: max_samples must be >= 1, got ", p.max_samples);
  TL_REQUIRE(p.bootstrap || p.max_samples <= X.rows, ValueError, "iforest_fit: max_samples (", p.max_samples,
             ") must be <= the number of rows (", X.rows, ") without bootstrap");
  TL_REQUIRE(p.max_features >= 1 && p.max_features <= X.cols, ValueError, "iforest_fit: max_features must lie in [1, ",
             X.cols, "], got ", p.max_features);
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < X.cols; ++j) {
      const T v = X(i, j);
      TL_REQUIRE(!tl::num::is_nan(v) && !tl::num::is_inf(v), ValueError,
                 "iforest_fit: X must be finite (row ", i, ", column ", j, " is ", v, ")");
    }
  if (weight) {
    std::int64_t positive = 0;
    for (std::int64_t i = 0; i < X.rows; ++i) {
      TL_REQUIRE(weight[i] >= 0.0 && !tl::num::is_inf(weight[i]), ValueError,
                 "iforest_fit: weights must be finite and non-negative (row ", i, " is ", weight[i], ")");
      positive += weight[i] > 0.0;
    }
    TL_REQUIRE(positive > 0, ValueError, "iforest_fit: the weights sum to zero");
    TL_REQUIRE(p.bootstrap || positive >= p.max_samples, ValueError, "iforest_fit: cannot draw ", p.max_samples,
               " rows without replacement: only ", positive, " have a positive weight");
  }
  // The trees are tiny (max_samples rows): always built on the host.
  return iforest_detail::fit_cpu(ctx, X, weight, p);
}

template <class T>
void iforest_score(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                   const std::int64_t* children_left, const std::int64_t* children_right, const std::int64_t* feature,
                   const double* threshold, const double* path, std::int64_t max_samples, double* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0 && n_trees >= 0, ValueError, "iforest_score: negative shape");
  check_placement(ctx, X, "X");
  // Every node's feature must be one of X's columns (leaves: -2) and every
  // child a later node of its own tree, else a walk could leave the arrays.
  for (std::int64_t t = 0; t < n_trees; ++t) {
    const std::int64_t n = offsets[t + 1] - offsets[t];
    TL_REQUIRE(n >= 1, ValueError, "iforest_score: tree ", t, " has no nodes");
    for (std::int64_t k = offsets[t]; k < offsets[t + 1]; ++k) {
      const bool leaf = children_left[k] < 0;
      TL_REQUIRE(leaf ? children_right[k] < 0
                      : (children_left[k] > k - offsets[t] && children_left[k] < n &&
                         children_right[k] > k - offsets[t] && children_right[k] < n && feature[k] >= 0 &&
                         feature[k] < X.cols),
                 ValueError, "iforest_score: tree ", t, " is malformed at node ", k - offsets[t]);
    }
  }
  if (X.rows == 0) return;
  const double den = tl::num::mul(static_cast<double>(n_trees), iforest_detail::average_path_length(max_samples));
  ctx.dispatch(
      [&] {
        iforest_detail::score_cpu(ctx, X, n_trees, offsets, children_left, children_right, feature, threshold, path,
                                  den, out);
      },
      [&] {
        iforest_detail::score_cuda(ctx, X, n_trees, offsets, children_left, children_right, feature, threshold, path,
                                   den, out);
      });
}

#define TL_IFOREST_INST(T)                                                                                        \
  template IForestTrees iforest_fit<T>(const Context&, MatrixView<const T>, const double*, const IForestParams&); \
  template void iforest_score<T>(const Context&, MatrixView<const T>, std::int64_t, const std::int64_t*,          \
                                 const std::int64_t*, const std::int64_t*, const std::int64_t*, const double*,    \
                                 const double*, std::int64_t, double*);
TL_IFOREST_INST(float)
TL_IFOREST_INST(double)
#undef TL_IFOREST_INST

}  // namespace tl
