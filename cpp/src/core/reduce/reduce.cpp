// Validation and dispatch of the canonical reductions (twinlearn/core/reduce.hpp).
#include <limits>
#include <vector>

#include "core/reduce/reduce_common.hpp"

namespace tl {
namespace {

using namespace reduce_detail;

template <class T>
MatrixView<const T> as_column(VectorView<const T> v) {
  return MatrixView<const T>(v.data, v.size, 1, v.stride, 1, v.device);
}

template <class V>
void check_input(const Context& ctx, const V& v, std::int64_t size, const char* name) {
  TL_REQUIRE(size >= 0, ValueError, name, ": negative size");
  TL_REQUIRE(v.data != nullptr || size == 0, ValueError, name, ": no data");
  check_placement(ctx, v, name);
}

template <class Op>
std::vector<typename Op::acc_type> run(const Context& ctx, MatrixView<const typename Op::value_type> X,
                                       MatrixView<const typename Op::value_type> Y) {
  std::vector<typename Op::acc_type> out(static_cast<std::size_t>(X.cols));
  if (X.cols == 0) return out;
  ctx.dispatch([&] { detail::reduce_cpu<Op>(ctx, X, Y, out.data()); },
               [&] { detail::reduce_cuda<Op>(ctx, X, Y, out.data()); });
  return out;
}

// NaN results as the canonical quiet NaN: the backends may carry different payloads.
template <class T>
T canonical(T v) {
  return num::is_nan(v) ? std::numeric_limits<T>::quiet_NaN() : v;
}

template <class T, class Acc>
Acc vector_sum(const Context& ctx, VectorView<const T> x) {
  check_input(ctx, x, x.size, "x");
  if (x.size == 0) return Acc(0);
  return canonical(run<SumOp<T, Acc>>(ctx, as_column(x), MatrixView<const T>())[0]);
}

template <class T, class Acc>
Acc vector_dot(const Context& ctx, VectorView<const T> x, VectorView<const T> y) {
  check_input(ctx, x, x.size, "x");
  check_input(ctx, y, y.size, "y");
  TL_REQUIRE(x.size == y.size, ValueError, "dot: x has ", x.size, " entries but y has ", y.size);
  if (x.size == 0) return Acc(0);
  return canonical(run<DotOp<T, Acc>>(ctx, as_column(x), as_column(y))[0]);
}

template <class Op>
ArgAcc<typename Op::value_type> vector_arg(const Context& ctx, VectorView<const typename Op::value_type> x,
                                           const char* what) {
  check_input(ctx, x, x.size, "x");
  TL_REQUIRE(x.size > 0, ValueError, what, ": zero-size array has no ", what);
  return run<Op>(ctx, as_column(x), MatrixView<const typename Op::value_type>())[0];
}

template <class T>
void check_matrix(const Context& ctx, MatrixView<const T> X, const void* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0, ValueError, "X: negative shape");
  TL_REQUIRE(X.data != nullptr || X.empty(), ValueError, "X: no data");
  TL_REQUIRE(out != nullptr || X.cols == 0, ValueError, "no output buffer");
  check_placement(ctx, X, "X");
}

template <class T, class Acc>
void matrix_sums(const Context& ctx, MatrixView<const T> X, Acc* out) {
  check_matrix(ctx, X, out);
  if (X.rows == 0) {
    for (std::int64_t j = 0; j < X.cols; ++j) out[j] = Acc(0);
    return;
  }
  auto r = run<SumOp<T, Acc>>(ctx, X, MatrixView<const T>());
  for (std::int64_t j = 0; j < X.cols; ++j) out[j] = canonical(r[j]);
}

template <class Op>
std::vector<ArgAcc<typename Op::value_type>> matrix_arg(const Context& ctx,
                                                        MatrixView<const typename Op::value_type> X,
                                                        const void* out, const char* what) {
  check_matrix(ctx, X, out);
  TL_REQUIRE(X.rows > 0 || X.cols == 0, ValueError, what, ": zero-size array has no ", what);
  return run<Op>(ctx, X, MatrixView<const typename Op::value_type>());
}

}  // namespace

template <class T>
T reduce_sum(const Context& ctx, VectorView<const T> x) {
  return vector_sum<T, T>(ctx, x);
}
template <class T>
double reduce_sum_double(const Context& ctx, VectorView<const T> x) {
  return vector_sum<T, double>(ctx, x);
}
template <class T>
T reduce_dot(const Context& ctx, VectorView<const T> x, VectorView<const T> y) {
  return vector_dot<T, T>(ctx, x, y);
}
template <class T>
double reduce_dot_double(const Context& ctx, VectorView<const T> x, VectorView<const T> y) {
  return vector_dot<T, double>(ctx, x, y);
}
template <class T>
T reduce_min(const Context& ctx, VectorView<const T> x) {
  return canonical(vector_arg<ArgMinOp<T>>(ctx, x, "minimum").v);
}
template <class T>
T reduce_max(const Context& ctx, VectorView<const T> x) {
  return canonical(vector_arg<ArgMaxOp<T>>(ctx, x, "maximum").v);
}
template <class T>
std::int64_t reduce_argmin(const Context& ctx, VectorView<const T> x) {
  return vector_arg<ArgMinOp<T>>(ctx, x, "argmin").idx;
}
template <class T>
std::int64_t reduce_argmax(const Context& ctx, VectorView<const T> x) {
  return vector_arg<ArgMaxOp<T>>(ctx, x, "argmax").idx;
}

template <class T>
void column_sums(const Context& ctx, MatrixView<const T> X, T* out) {
  matrix_sums<T, T>(ctx, X, out);
}
template <class T>
void column_sums_double(const Context& ctx, MatrixView<const T> X, double* out) {
  matrix_sums<T, double>(ctx, X, out);
}
template <class T>
void column_min(const Context& ctx, MatrixView<const T> X, T* out) {
  auto r = matrix_arg<ArgMinOp<T>>(ctx, X, out, "minimum");
  for (std::int64_t j = 0; j < X.cols; ++j) out[j] = canonical(r[j].v);
}
template <class T>
void column_max(const Context& ctx, MatrixView<const T> X, T* out) {
  auto r = matrix_arg<ArgMaxOp<T>>(ctx, X, out, "maximum");
  for (std::int64_t j = 0; j < X.cols; ++j) out[j] = canonical(r[j].v);
}
template <class T>
void column_argmin(const Context& ctx, MatrixView<const T> X, std::int64_t* out) {
  auto r = matrix_arg<ArgMinOp<T>>(ctx, X, out, "argmin");
  for (std::int64_t j = 0; j < X.cols; ++j) out[j] = r[j].idx;
}
template <class T>
void column_argmax(const Context& ctx, MatrixView<const T> X, std::int64_t* out) {
  auto r = matrix_arg<ArgMaxOp<T>>(ctx, X, out, "argmax");
  for (std::int64_t j = 0; j < X.cols; ++j) out[j] = r[j].idx;
}

#define TL_INSTANTIATE_REDUCE(T)                                                                        \
  template T reduce_sum<T>(const Context&, VectorView<const T>);                                        \
  template double reduce_sum_double<T>(const Context&, VectorView<const T>);                            \
  template T reduce_dot<T>(const Context&, VectorView<const T>, VectorView<const T>);                   \
  template double reduce_dot_double<T>(const Context&, VectorView<const T>, VectorView<const T>);       \
  template T reduce_min<T>(const Context&, VectorView<const T>);                                        \
  template T reduce_max<T>(const Context&, VectorView<const T>);                                        \
  template std::int64_t reduce_argmin<T>(const Context&, VectorView<const T>);                          \
  template std::int64_t reduce_argmax<T>(const Context&, VectorView<const T>);                          \
  template void column_sums<T>(const Context&, MatrixView<const T>, T*);                                \
  template void column_sums_double<T>(const Context&, MatrixView<const T>, double*);                    \
  template void column_min<T>(const Context&, MatrixView<const T>, T*);                                 \
  template void column_max<T>(const Context&, MatrixView<const T>, T*);                                 \
  template void column_argmin<T>(const Context&, MatrixView<const T>, std::int64_t*);                   \
  template void column_argmax<T>(const Context&, MatrixView<const T>, std::int64_t*);
TL_INSTANTIATE_REDUCE(float)
TL_INSTANTIATE_REDUCE(double)
#undef TL_INSTANTIATE_REDUCE

}  // namespace tl
