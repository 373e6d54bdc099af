// StandardScaler's elementwise kernels. Fitting uses tl::column_stats.
#pragma once
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

// out = (X - mean) / scale, or with inverse=true out = X * scale + mean,
// with mean and scale rounded to T and each step one IEEE operation in T
// (scikit-learn's arithmetic). mean and scale are host arrays of
// X.cols entries, either may be nullptr (skip that step). X and out have the
// same shape; each may be on the host or on the context's device. out may
// alias X. Returns the number of infinite entries of X (their outputs are
// computed like any other; callers that refuse infinities raise).
template <class T>
std::int64_t standard_scaler_apply(const Context& ctx, MatrixView<const T> X, const double* mean, const double* scale,
                           MatrixView<T> out, bool inverse);

}  // namespace tl
