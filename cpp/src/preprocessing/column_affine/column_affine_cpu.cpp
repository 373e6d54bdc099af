#include <vector>

#include "preprocessing/column_affine/column_affine_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
std::int64_t column_affine_apply_cpu(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                     MatrixView<T> out) {
  TL_REQUIRE(X.on_host() && out.on_host(), ValueError, "the CPU backend needs host arrays");
  const AffineParams p{steps.sub, steps.div, steps.mul, steps.add, steps.clip, steps.clip_lo, steps.clip_hi};
  // Rows in blocks of 256, one task per block; infinities counted per block.
  const std::int64_t block = 256, nblocks = (X.rows + block - 1) / block;
  std::vector<std::int64_t> infs(static_cast<std::size_t>(nblocks), 0);
  parallel_for(ctx, nblocks, [&](std::int64_t b) {
    std::int64_t n_inf = 0;
    const std::int64_t r1 = std::min(X.rows, (b + 1) * block);
    for (std::int64_t i = b * block; i < r1; ++i) {
      for (std::int64_t j = 0; j < X.cols; ++j) {
        const T x = X(i, j);
        n_inf += num::is_inf(x);
        out(i, j) = affine_one(x, p, j);
      }
    }
    infs[b] = n_inf;
  });
  std::int64_t total = 0;
  for (std::int64_t v : infs) total += v;
  return total;
}

template std::int64_t column_affine_apply_cpu<float>(const Context&, MatrixView<const float>, const ColumnAffine&,
                                                     MatrixView<float>);
template std::int64_t column_affine_apply_cpu<double>(const Context&, MatrixView<const double>, const ColumnAffine&,
                                                      MatrixView<double>);

}  // namespace tl::detail
