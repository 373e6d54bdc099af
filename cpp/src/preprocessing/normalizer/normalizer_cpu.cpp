#include "preprocessing/normalizer/normalizer_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
void normalizer_apply_cpu(const Context& ctx, MatrixView<const T> X, RowNorm norm, MatrixView<T> out) {
  TL_REQUIRE(X.on_host() && out.on_host(), ValueError, "the CPU backend needs host arrays");
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    auto term = [&](std::int64_t j) { return norm_term(static_cast<double>(X(i, j)), norm); };
    const double r = norm == RowNorm::Max ? lane_reduce(X.cols, 0.0, term, lane_ops::Max{})
                                          : lane_reduce(X.cols, 0.0, term, lane_ops::Add{});
    const T nt = finish_norm<T>(r, norm);
    for (std::int64_t j = 0; j < X.cols; ++j) out(i, j) = normalize_one(X(i, j), nt);
  });
}

template void normalizer_apply_cpu<float>(const Context&, MatrixView<const float>, RowNorm, MatrixView<float>);
template void normalizer_apply_cpu<double>(const Context&, MatrixView<const double>, RowNorm, MatrixView<double>);

}  // namespace tl::detail
