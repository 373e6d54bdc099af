// Elementwise StandardScaler math shared by both backends. Each step is done
// in double and rounded to T, as NumPy does for scikit-learn's in-place
// `X -= mean_; X /= scale_` on a float32 X, so results match scikit-learn's
// bit for bit.
#pragma once
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/preprocessing/standard_scaler.hpp"

namespace tl::detail {

template <class T>
TL_HD T scaler_apply_one(T x, const double* mean, const double* scale, std::int64_t j, bool inverse) {
  using namespace tl::num;
  T v = x;
  if (!inverse) {
    if (mean) v = static_cast<T>(sub(static_cast<double>(v), mean[j]));
    if (scale) v = static_cast<T>(div(static_cast<double>(v), scale[j]));
  } else {
    if (scale) v = static_cast<T>(mul(static_cast<double>(v), scale[j]));
    if (mean) v = static_cast<T>(add(static_cast<double>(v), mean[j]));
  }
  return v;
}

template <class T>
void standard_scaler_apply_cpu(const Context& ctx, MatrixView<const T> X, const double* mean, const double* scale,
                               MatrixView<T> out, bool inverse);
template <class T>
void standard_scaler_apply_cuda(const Context& ctx, MatrixView<const T> X, const double* mean, const double* scale,
                                MatrixView<T> out, bool inverse);

}  // namespace tl::detail
