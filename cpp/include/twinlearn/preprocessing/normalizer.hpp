// Normalizer: each row of X divided by its l1, l2 or max norm.
#pragma once
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

enum class RowNorm : int { L1 = 0, L2 = 1, Max = 2 };

// Parses "l1", "l2" or "max".
RowNorm parse_row_norm(const char* s);

// out[i, :] = X[i, :] / norm(X[i, :]). The norm is accumulated in double in
// the canonical lane order (twinlearn/core/lane_reduce.hpp), rounded to T,
// and replaced by 1 when below 10 * epsilon(T) (scikit-learn's rule for
// zero rows); each division is then one IEEE division in T. X must be
// finite. X and out have the same shape; each may be on the host or on the
// context's device; out may alias X.
template <class T>
void normalizer_apply(const Context& ctx, MatrixView<const T> X, RowNorm norm, MatrixView<T> out);

}  // namespace tl
