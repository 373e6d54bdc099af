// Elementwise column-affine math shared by both backends.
#pragma once
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/preprocessing/column_affine.hpp"

namespace tl::detail {

// The same steps with device- or host-resident parameter pointers.
struct AffineParams {
  const double* sub;
  const double* div;
  const double* mul;
  const double* add;
  bool clip;
  double lo, hi;
};

template <class T>
TL_HD T affine_one(T x, const AffineParams& p, std::int64_t j) {
  T v = x;
  if (p.sub) v = static_cast<T>(tl::num::sub(static_cast<double>(v), p.sub[j]));
  if (p.div) v = static_cast<T>(tl::num::div(static_cast<double>(v), p.div[j]));
  if (p.mul) v = static_cast<T>(tl::num::mul(static_cast<double>(v), p.mul[j]));
  if (p.add) v = static_cast<T>(tl::num::add(static_cast<double>(v), p.add[j]));
  if (p.clip) {
    const T lo = static_cast<T>(p.lo), hi = static_cast<T>(p.hi);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
  }
  return tl::num::canonical(v);
}

template <class T>
std::int64_t column_affine_apply_cpu(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                     MatrixView<T> out);
template <class T>
std::int64_t column_affine_apply_cuda(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                      MatrixView<T> out);

}  // namespace tl::detail
