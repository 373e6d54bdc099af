#include "preprocessing/column_affine/column_affine_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
void column_affine_apply_cpu(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps, MatrixView<T> out) {
  TL_REQUIRE(X.on_host() && out.on_host(), ValueError, "the CPU backend needs host arrays");
  const AffineParams p{steps.sub, steps.div, steps.mul, steps.add, steps.clip, steps.clip_lo, steps.clip_hi};
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    for (std::int64_t j = 0; j < X.cols; ++j) out(i, j) = affine_one(X(i, j), p, j);
  });
}

template void column_affine_apply_cpu<float>(const Context&, MatrixView<const float>, const ColumnAffine&,
                                             MatrixView<float>);
template void column_affine_apply_cpu<double>(const Context&, MatrixView<const double>, const ColumnAffine&,
                                              MatrixView<double>);

}  // namespace tl::detail
