// What the SVM backends share: the kernel value of one pair of rows.
#pragma once
#include <cstdint>

#include "twinlearn/core/lane_reduce.hpp"
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/svm/smo.hpp"

namespace tl::detail {

// libsvm's powi: base^times by repeated squaring, the same multiplications in
// the same order on every backend.
TL_HD double svm_powi(double base, int times) {
  double tmp = base, ret = 1.0;
  for (int t = times; t > 0; t /= 2) {
    if (t % 2 == 1) ret = num::mul(ret, tmp);
    tmp = num::mul(tmp, tmp);
  }
  return ret;
}

// K(a, b) for rows a, b of d values each (strides in elements), in double.
// <a, b> and ||a - b||^2 are summed in the canonical lane order; rbf uses
// ||a - b||^2 directly (not libsvm's |a|^2 + |b|^2 - 2<a, b>, which cancels).
template <class T>
TL_HD double svm_kernel_value(const T* a, std::int64_t sa, const T* b, std::int64_t sb, std::int64_t d,
                              int kernel, int degree, double gamma, double coef0) {
  if (kernel == static_cast<int>(SvmKernel::Rbf)) {
    const double s = lane_reduce(
        d, 0.0,
        [&](std::int64_t j) {
          const double t = num::sub(static_cast<double>(a[j * sa]), static_cast<double>(b[j * sb]));
          return num::mul(t, t);
        },
        lane_ops::Add{});
    return num::exp(num::mul(-gamma, s));
  }
  const double dot = lane_reduce(
      d, 0.0,
      [&](std::int64_t j) { return num::mul(static_cast<double>(a[j * sa]), static_cast<double>(b[j * sb])); },
      lane_ops::Add{});
  switch (kernel) {
    case static_cast<int>(SvmKernel::Linear): return dot;
    case static_cast<int>(SvmKernel::Poly): return svm_powi(num::add(num::mul(gamma, dot), coef0), degree);
    default: return num::tanh(num::add(num::mul(gamma, dot), coef0));  // sigmoid
  }
}

}  // namespace tl::detail
