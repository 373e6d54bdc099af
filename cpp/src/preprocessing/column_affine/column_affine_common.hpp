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

// One column's parameters, read once (the steps p leaves out read as 0).
struct AffineColumn {
  double sub, div, mul, add;
};

TL_HD AffineColumn affine_column(const AffineParams& p, std::int64_t j) {
  return {p.sub ? p.sub[j] : 0.0, p.div ? p.div[j] : 0.0, p.mul ? p.mul[j] : 0.0, p.add ? p.add[j] : 0.0};
}

// x through the steps of p, with column c's parameters: each step in double,
// rounded to T in between.
template <class T>
TL_HD T affine_apply(T x, const AffineParams& p, const AffineColumn& c) {
  T v = x;
  if (p.sub) v = static_cast<T>(tl::num::sub(static_cast<double>(v), c.sub));
  if (p.div) v = static_cast<T>(tl::num::div(static_cast<double>(v), c.div));
  if (p.mul) v = static_cast<T>(tl::num::mul(static_cast<double>(v), c.mul));
  if (p.add) v = static_cast<T>(tl::num::add(static_cast<double>(v), c.add));
  if (p.clip) {
    const T lo = static_cast<T>(p.lo), hi = static_cast<T>(p.hi);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
  }
  return tl::num::canonical(v);
}

template <class T>
TL_HD T affine_one(T x, const AffineParams& p, std::int64_t j) {
  return affine_apply(x, p, affine_column(p, j));
}

template <class T>
std::int64_t column_affine_apply_cpu(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                     MatrixView<T> out);
template <class T>
std::int64_t column_affine_apply_cuda(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                      MatrixView<T> out);

}  // namespace tl::detail
