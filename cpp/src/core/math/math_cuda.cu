#include "core/cuda/device_io.cuh"
#include "core/cuda/launch.cuh"
#include "core/math/math_impl.hpp"

namespace tl::detail {
namespace {

// One thread per element, grid-stride: element i is computed from x[i] alone.
// out may alias x (no __restrict__).
template <class T>
__global__ void math_apply_kernel(MathFn fn, const T* x, T* out, std::int64_t n) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = apply_math_fn(fn, x[i]);
}

template <class T>
__global__ void math_pow_kernel(const T* x, const T* y, T* out, std::int64_t n) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = tl::num::pow(x[i], y[i]);
}

// One thread per row, grid-stride over rows; a row is walked sequentially in
// column order, the canonical order of tl::num::log_sum_exp.
template <class T>
__global__ void math_rows_kernel(RowFn fn, const T* X, std::int64_t rows, std::int64_t cols, T* out,
                                 std::int64_t out_cols) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    apply_row_fn(fn, X + i * cols, cols, std::int64_t(1), out + i * out_cols, std::int64_t(1));
}

}  // namespace

template <class T>
void math_apply_cuda(const Context& ctx, MathFn fn, VectorView<const T> x, VectorView<T> out) {
  DeviceGuard guard(ctx.device().id);
  auto xin = device_in(ctx, x, "x");
  DeviceOut<T> o(ctx, out, "out");
  const int block = 256;
  math_apply_kernel<T><<<grid_for(x.size, block), block, 0, tl_stream(ctx)>>>(fn, xin.ptr, o.ptr(), x.size);
  TL_CUDA_CHECK_LAUNCH("math_apply_kernel");
  o.finish();
}

template <class T>
void math_pow_cuda(const Context& ctx, VectorView<const T> x, VectorView<const T> y, VectorView<T> out) {
  DeviceGuard guard(ctx.device().id);
  auto xin = device_in(ctx, x, "x");
  auto yin = device_in(ctx, y, "y");
  DeviceOut<T> o(ctx, out, "out");
  const int block = 256;
  math_pow_kernel<T><<<grid_for(x.size, block), block, 0, tl_stream(ctx)>>>(xin.ptr, yin.ptr, o.ptr(), x.size);
  TL_CUDA_CHECK_LAUNCH("math_pow_kernel");
  o.finish();
}

template <class T>
void math_rows_cuda(const Context& ctx, RowFn fn, MatrixView<const T> X, MatrixView<T> out) {
  DeviceGuard guard(ctx.device().id);
  TL_REQUIRE(X.is_c_contiguous() && out.is_c_contiguous(), ValueError,
             "math_rows: the CUDA backend needs C-contiguous arrays");
  auto xin = device_in(ctx, VectorView<const T>(X.data, X.size(), X.device), "X");
  DeviceOut<T> o(ctx, VectorView<T>(out.data, out.size(), out.device), "out");
  const int block = 128;
  math_rows_kernel<T><<<grid_for(X.rows, block), block, 0, tl_stream(ctx)>>>(fn, xin.ptr, X.rows, X.cols, o.ptr(),
                                                                             out.cols);
  TL_CUDA_CHECK_LAUNCH("math_rows_kernel");
  o.finish();
}

#define TL_INSTANTIATE(T)                                                                                   \
  template void math_apply_cuda<T>(const Context&, MathFn, VectorView<const T>, VectorView<T>);            \
  template void math_pow_cuda<T>(const Context&, VectorView<const T>, VectorView<const T>, VectorView<T>); \
  template void math_rows_cuda<T>(const Context&, RowFn, MatrixView<const T>, MatrixView<T>);
TL_INSTANTIATE(float)
TL_INSTANTIATE(double)
#undef TL_INSTANTIATE

}  // namespace tl::detail
