// The isolation forest's shared arithmetic (both backends) and its backend
// entry points (iforest.cpp validates and dispatches).
#pragma once
#include <cstdint>

#include "ensemble/forest/forest_builder.hpp"  // tree_leaf, stream_of: the forest's generic pieces
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/ensemble/iforest.hpp"

namespace tl::iforest_detail {

inline constexpr double kEulerGamma = 0.57721566490153286060651209008240243;  // np.euler_gamma
inline constexpr double kFeatureThreshold = 1e-7;                             // scikit-learn's FEATURE_THRESHOLD

enum Purpose : std::uint64_t { kNodeFeatures = 0, kNodeThreshold = 1, kTreeRows = 2, kTreeFeatures = 3 };

// c(n), scikit-learn's _average_path_length, spelled out with tl::num.
TL_HD double average_path_length(std::int64_t n) {
  using namespace tl::num;
  if (n <= 1) return 0.0;
  if (n == 2) return 1.0;
  const double nm1 = static_cast<double>(n - 1);  // exact below 2^53
  return sub(mul(2.0, add(tl::num::log(nm1), kEulerGamma)), div(mul(2.0, nm1), static_cast<double>(n)));
}

// A node's path length: its depth plus c(rows reaching it).
TL_HD double node_path_length(std::int64_t depth, std::int64_t n) {
  return tl::num::add(static_cast<double>(depth), average_path_length(n));
}

// score_samples from the sum of path lengths over the trees and the
// denominator n_trees c(max_samples): -2^(-total / den), -0.5 when den is 0.
TL_HD double score_from_total(double total, double den) {
  using namespace tl::num;
  const double r = den != 0.0 ? div(total, den) : 1.0;
  return sub(0.0, tl::num::pow(2.0, sub(0.0, r)));
}

template <class T>
IForestTrees fit_cpu(const Context& ctx, MatrixView<const T> X, const double* weight, const IForestParams& p);

template <class T>
void score_cpu(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
               const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
               const double* threshold, const double* path, double den, double* out);
template <class T>
void score_cuda(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
                const double* threshold, const double* path, double den, double* out);

}  // namespace tl::iforest_detail
