// Elementwise StandardScaler math shared by both backends. As scikit-learn's
// `X -= mean_.astype(X.dtype); X /= scale_.astype(X.dtype)`: the parameters
// are rounded to T and each step is one IEEE operation in T, so results match
// scikit-learn's bit for bit given the same parameters.
#pragma once
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/preprocessing/standard_scaler.hpp"

namespace tl::detail {

template <class T>
TL_HD T scaler_apply_one(T x, const double* mean, const double* scale, std::int64_t j, bool inverse) {
  using namespace tl::num;
  T v = x;
  if (!inverse) {
    if (mean) v = sub(v, static_cast<T>(mean[j]));
    if (scale) v = div(v, static_cast<T>(scale[j]));
  } else {
    if (scale) v = mul(v, static_cast<T>(scale[j]));
    if (mean) v = add(v, static_cast<T>(mean[j]));
  }
  return canonical(v);
}

template <class T>
std::int64_t standard_scaler_apply_cpu(const Context& ctx, MatrixView<const T> X, const double* mean,
                                       const double* scale, MatrixView<T> out, bool inverse);
template <class T>
std::int64_t standard_scaler_apply_cuda(const Context& ctx, MatrixView<const T> X, const double* mean, const double* scale,
                                MatrixView<T> out, bool inverse);

}  // namespace tl::detail
