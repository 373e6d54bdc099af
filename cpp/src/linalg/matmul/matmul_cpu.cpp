// CPU backend of tl::linalg::matmul and prepare_rows. A transposed A is
// packed into a contiguous Aᵀ, then the canonical GEMM runs on the copy.
#include <algorithm>
#include <vector>

#include "linalg/matmul/matmul_impl.hpp"
#include "twinlearn/core/gemm.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::linalg::detail {
namespace {

constexpr std::int64_t kTile = 64;  // square tiles of the transposing copy

// out (n x d, or d x n when transpose; any strides) from X, tile by tile:
// one parallel task per band of kTile rows of X.
template <class T>
void prepare_host(const Context& ctx, MatrixView<const T> X, const T* w, std::int64_t wstride, const T* offset,
                  bool transpose, MatrixView<T> out) {
  const std::int64_t n = X.rows, d = X.cols;
  const std::int64_t bands = (n + kTile - 1) / kTile;
  parallel_for(ctx, bands, [&](std::int64_t b) {
    const std::int64_t i0 = b * kTile, i1 = std::min(n, i0 + kTile);
    T sw[kTile];
    for (std::int64_t i = i0; i < i1; ++i) sw[i - i0] = w ? num::sqrt(w[i * wstride]) : T(1);
    for (std::int64_t j0 = 0; j0 < d; j0 += kTile) {
      const std::int64_t j1 = std::min(d, j0 + kTile);
      if (transpose) {
        for (std::int64_t j = j0; j < j1; ++j)
          for (std::int64_t i = i0; i < i1; ++i) out(j, i) = prepared(X(i, j), offset, j, w != nullptr, sw[i - i0]);
      } else {
        for (std::int64_t i = i0; i < i1; ++i)
          for (std::int64_t j = j0; j < j1; ++j) out(i, j) = prepared(X(i, j), offset, j, w != nullptr, sw[i - i0]);
      }
    }
  });
}

}  // namespace

template <class T>
void prepare_rows_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                      bool transpose, MatrixView<T> out) {
  prepare_host(ctx, X, w.data, w.stride, offset, transpose, out);
}

template <class T>
NumericMode matmul_cpu(const Context& ctx, MatrixView<const T> A, bool ta, MatrixView<const T> B, bool tb,
                       MatrixView<T> C) {
  if (!ta) {
    tl::gemm<T>(ctx, A, B, tb, C);
    return NumericMode::Identical;
  }
  std::vector<T> at(static_cast<std::size_t>(A.size()));
  MatrixView<T> atv(at.data(), A.cols, A.rows);
  prepare_host<T>(ctx, A, nullptr, 1, nullptr, true, atv);
  tl::gemm<T>(ctx, atv.as_const(), B, tb, C);
  return NumericMode::Identical;
}

template NumericMode matmul_cpu<float>(const Context&, MatrixView<const float>, bool, MatrixView<const float>, bool,
                                       MatrixView<float>);
template NumericMode matmul_cpu<double>(const Context&, MatrixView<const double>, bool, MatrixView<const double>,
                                        bool, MatrixView<double>);
template void prepare_rows_cpu<float>(const Context&, MatrixView<const float>, VectorView<const float>,
                                      const float*, bool, MatrixView<float>);
template void prepare_rows_cpu<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                       const double*, bool, MatrixView<double>);

}  // namespace tl::linalg::detail
