// Validation and dispatch of the canonical GEMM (twinlearn/core/gemm.hpp).
#include "core/gemm/gemm_common.hpp"

namespace tl {

template <class T>
void gemm(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, bool transpose_b, MatrixView<T> C) {
  TL_REQUIRE(A.rows >= 0 && A.cols >= 0 && B.rows >= 0 && B.cols >= 0 && C.rows >= 0 && C.cols >= 0, ValueError,
             "gemm: negative shape");
  const std::int64_t m = A.rows, k = A.cols;
  const std::int64_t n = transpose_b ? B.rows : B.cols;
  const std::int64_t kb = transpose_b ? B.cols : B.rows;
  TL_REQUIRE(kb == k, ValueError, "gemm: A is ", A.rows, " x ", A.cols, " but B", transpose_b ? "^T" : "", " is ",
             transpose_b ? B.cols : B.rows, " x ", transpose_b ? B.rows : B.cols, ": inner dimensions differ");
  TL_REQUIRE(C.rows == m && C.cols == n, ValueError, "gemm: C must be ", m, " x ", n, ", got ", C.rows, " x ", C.cols);
  TL_REQUIRE((A.data || A.empty()) && (B.data || B.empty()) && (C.data || C.empty()), ValueError, "gemm: no data");
  check_placement(ctx, A, "A");
  check_placement(ctx, B, "B");
  check_placement(ctx, C, "C");
  if (m == 0 || n == 0) return;
  ctx.dispatch([&] { detail::gemm_cpu<T>(ctx, A, B, transpose_b, C); },
               [&] { detail::gemm_cuda<T>(ctx, A, B, transpose_b, C); });
}

template void gemm<float>(const Context&, MatrixView<const float>, MatrixView<const float>, bool, MatrixView<float>);
template void gemm<double>(const Context&, MatrixView<const double>, MatrixView<const double>, bool,
                           MatrixView<double>);

}  // namespace tl
