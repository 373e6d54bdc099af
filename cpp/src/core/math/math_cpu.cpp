#include <algorithm>

#include "core/math/math_impl.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

// Elementwise work in fixed blocks of indices; each element's result depends
// on that element alone, so the split cannot change any bit.
inline constexpr std::int64_t kMathBlock = 4096;

template <class T>
void math_apply_cpu(const Context& ctx, MathFn fn, VectorView<const T> x, VectorView<T> out) {
  const std::int64_t n = x.size, nb = (n + kMathBlock - 1) / kMathBlock;
  parallel_for(ctx, nb, [&](std::int64_t b) {
    const std::int64_t e = std::min(n, (b + 1) * kMathBlock);
    for (std::int64_t i = b * kMathBlock; i < e; ++i) out[i] = apply_math_fn(fn, x[i]);
  });
}

template <class T>
void math_pow_cpu(const Context& ctx, VectorView<const T> x, VectorView<const T> y, VectorView<T> out) {
  const std::int64_t n = x.size, nb = (n + kMathBlock - 1) / kMathBlock;
  parallel_for(ctx, nb, [&](std::int64_t b) {
    const std::int64_t e = std::min(n, (b + 1) * kMathBlock);
    for (std::int64_t i = b * kMathBlock; i < e; ++i) out[i] = tl::num::pow(x[i], y[i]);
  });
}

template <class T>
void math_rows_cpu(const Context& ctx, RowFn fn, MatrixView<const T> X, MatrixView<T> out) {
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    apply_row_fn(fn, X.data + i * X.row_stride, X.cols, X.col_stride, out.data + i * out.row_stride, out.col_stride);
  });
}

#define TL_INSTANTIATE(T)                                                                                   \
  template void math_apply_cpu<T>(const Context&, MathFn, VectorView<const T>, VectorView<T>);             \
  template void math_pow_cpu<T>(const Context&, VectorView<const T>, VectorView<const T>, VectorView<T>);  \
  template void math_rows_cpu<T>(const Context&, RowFn, MatrixView<const T>, MatrixView<T>);
TL_INSTANTIATE(float)
TL_INSTANTIATE(double)
#undef TL_INSTANTIATE

}  // namespace tl::detail
