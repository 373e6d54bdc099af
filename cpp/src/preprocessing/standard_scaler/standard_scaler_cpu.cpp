#include "preprocessing/standard_scaler/standard_scaler_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
void standard_scaler_apply_cpu(const Context& ctx, MatrixView<const T> X, const double* mean, const double* scale,
                               MatrixView<T> out, bool inverse) {
  TL_REQUIRE(X.on_host() && out.on_host(), ValueError, "the CPU backend needs host arrays");
  parallel_for(ctx, X.rows, [&](std::int64_t i) {
    for (std::int64_t j = 0; j < X.cols; ++j) out(i, j) = scaler_apply_one(X(i, j), mean, scale, j, inverse);
  });
}

template void standard_scaler_apply_cpu<float>(const Context&, MatrixView<const float>, const double*, const double*,
                                               MatrixView<float>, bool);
template void standard_scaler_apply_cpu<double>(const Context&, MatrixView<const double>, const double*,
                                                const double*, MatrixView<double>, bool);

}  // namespace tl::detail
