// Validation and dispatch of tl::linalg::matmul and prepare_rows.
#include "linalg/matmul/matmul_impl.hpp"

namespace tl::linalg {

template <class T>
NumericMode matmul(const Context& ctx, MatrixView<const T> A, bool transpose_a, MatrixView<const T> B,
                   bool transpose_b, MatrixView<T> C) {
  TL_REQUIRE(A.rows >= 0 && A.cols >= 0 && B.rows >= 0 && B.cols >= 0 && C.rows >= 0 && C.cols >= 0, ValueError,
             "matmul: negative shape");
  const std::int64_t m = transpose_a ? A.cols : A.rows;
  const std::int64_t k = transpose_a ? A.rows : A.cols;
  const std::int64_t kb = transpose_b ? B.cols : B.rows;
  const std::int64_t n = transpose_b ? B.rows : B.cols;
  TL_REQUIRE(k == kb, ValueError, "matmul: op(A) is ", m, " x ", k, " but op(B) is ", kb, " x ", n,
             ": inner dimensions differ");
  TL_REQUIRE(C.rows == m && C.cols == n, ValueError, "matmul: C must be ", m, " x ", n, ", got ", C.rows, " x ",
             C.cols);
  TL_REQUIRE((A.data || A.empty()) && (B.data || B.empty()) && (C.data || C.empty()), ValueError,
             "matmul: no data");
  check_placement(ctx, A, "A");
  check_placement(ctx, B, "B");
  check_placement(ctx, C, "C");
  if (m == 0 || n == 0) return NumericMode::Identical;
  return ctx.dispatch([&] { return detail::matmul_cpu<T>(ctx, A, transpose_a, B, transpose_b, C); },
                      [&] { return detail::matmul_cuda<T>(ctx, A, transpose_a, B, transpose_b, C); });
}

template <class T>
void prepare_rows(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset, bool transpose,
                  MatrixView<T> out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0, ValueError, "prepare_rows: negative shape");
  const std::int64_t orows = transpose ? X.cols : X.rows, ocols = transpose ? X.rows : X.cols;
  TL_REQUIRE(out.rows == orows && out.cols == ocols, ValueError, "prepare_rows: out must be ", orows, " x ", ocols,
             ", got ", out.rows, " x ", out.cols);
  TL_REQUIRE((X.data || X.empty()) && (out.data || out.empty()), ValueError, "prepare_rows: no data");
  check_placement(ctx, X, "X");
  check_placement(ctx, out, "out");
  if (w.data) {
    TL_REQUIRE(w.size == X.rows, ValueError, "sample_weight has ", w.size, " entries but X has ", X.rows, " rows");
    check_placement(ctx, w, "sample_weight");
    TL_REQUIRE(w.device == X.device, ValueError, "sample_weight must live where X does");
  }
  if (X.empty()) return;
  ctx.dispatch([&] { detail::prepare_rows_cpu<T>(ctx, X, w, offset, transpose, out); },
               [&] { detail::prepare_rows_cuda<T>(ctx, X, w, offset, transpose, out); });
}

template NumericMode matmul<float>(const Context&, MatrixView<const float>, bool, MatrixView<const float>, bool,
                                   MatrixView<float>);
template NumericMode matmul<double>(const Context&, MatrixView<const double>, bool, MatrixView<const double>, bool,
                                    MatrixView<double>);
template void prepare_rows<float>(const Context&, MatrixView<const float>, VectorView<const float>, const float*,
                                  bool, MatrixView<float>);
template void prepare_rows<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                   const double*, bool, MatrixView<double>);

}  // namespace tl::linalg
