// The elementwise per-column maps of StandardScaler, MinMaxScaler,
// MaxAbsScaler and RobustScaler (transform and inverse_transform).
#pragma once
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

// Steps applied to each element x of column j, in this order, each one
// computed in double and rounded to T (as NumPy does for scikit-learn's
// in-place `X -= a; X /= b; ...` on a float32 X, so the results are
// scikit-learn's bits): x - sub[j], x / div[j], x * mul[j], x + add[j], then
// clip to [clip_lo, clip_hi] (NaN stays NaN, as the canonical quiet NaN on
// both backends). Each array is host memory of X.cols entries, or nullptr to
// skip the step. With parameters that are values of T (e.g. scikit-learn's
// `X -= mean_.astype(X.dtype)`), a step in double rounded to T is exactly the
// IEEE operation in T, since double has more than 2p+2 bits for T = float.
struct ColumnAffine {
  const double* sub = nullptr;
  const double* div = nullptr;
  const double* mul = nullptr;
  const double* add = nullptr;
  bool clip = false;
  double clip_lo = 0.0;
  double clip_hi = 0.0;
};

// out = steps(X). X and out have the same shape; each may be on the host or
// on the context's device. out may alias X. Returns the number of infinite
// entries of X, counted in the same pass (callers that refuse them raise).
template <class T>
std::int64_t column_affine_apply(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps, MatrixView<T> out);

}  // namespace tl
