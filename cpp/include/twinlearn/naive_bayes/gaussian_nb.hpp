// GaussianNB's heavy steps: per-class column statistics (fit) and the
// data-dependent part of the joint log likelihood (predict).
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/colstats.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

// Per-class column statistics. labels: X.rows class indices in [0, n_classes),
// host memory. out[c * X.cols + j] is, bit for bit, column j of
// tl::column_stats over the rows of class c taken in increasing row order
// (with their weights): the canonical chunks are cut within each class.
// w.data == nullptr means unit weights. X and w: host or the context's device.
// out: n_classes * X.cols entries, host memory.
template <class T>
void class_column_stats(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const std::int64_t* labels,
                        std::int64_t n_classes, ColStat* out);

// The sample-dependent part of GaussianNB's joint log likelihood:
//   out[i * C + c] = joint[c] + (nconst[c] - 0.5 * S[i, c]),
//   S[i, c] = sum_j (x_ij - theta[c, j])^2 / var[c, j],
// each term and S computed in double, S summed in the canonical lane order
// (twinlearn/core/lane_reduce.hpp). theta, var: C x X.cols; joint, nconst:
// C entries; all host memory. X: host or the context's device. out: X.rows x
// C doubles, host memory.
template <class T>
void gaussian_nb_jll(const Context& ctx, MatrixView<const T> X, const double* theta, const double* var,
                     const double* joint, const double* nconst, std::int64_t n_classes, double* out);

}  // namespace tl
