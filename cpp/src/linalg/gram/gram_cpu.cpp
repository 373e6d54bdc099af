// CPU backend of tl::linalg::gram: Zᵀ packed once, then the canonical GEMM
// Zᵀ·(Zᵀ)ᵀ. G[i, j] and G[j, i] multiply the same pairs in the same order
// (fma is commutative in its product), so G is exactly symmetric.
#include <vector>

#include "linalg/gram/gram_impl.hpp"
#include "linalg/matmul/matmul_impl.hpp"
#include "twinlearn/core/gemm.hpp"

namespace tl::linalg::detail {

template <class T>
NumericMode gram_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                     MatrixView<T> G) {
  std::vector<T> zt(static_cast<std::size_t>(X.size()));
  MatrixView<T> ztv(zt.data(), X.cols, X.rows);
  prepare_rows_cpu<T>(ctx, X, w, offset, true, ztv);
  tl::gemm<T>(ctx, ztv.as_const(), ztv.as_const(), true, G);
  return NumericMode::Identical;
}

template NumericMode gram_cpu<float>(const Context&, MatrixView<const float>, VectorView<const float>, const float*,
                                     MatrixView<float>);
template NumericMode gram_cpu<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                      const double*, MatrixView<double>);

}  // namespace tl::linalg::detail
