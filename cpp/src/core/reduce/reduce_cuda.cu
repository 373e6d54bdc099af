// CUDA backend of the canonical reductions: the kernels of reduce_kernels.cuh
// on staged inputs, results copied to the host.
#include "core/reduce/reduce_kernels.cuh"

namespace tl::detail {

template <class Op>
void reduce_cuda(const Context& ctx, MatrixView<const typename Op::value_type> X,
                 MatrixView<const typename Op::value_type> Y, typename Op::acc_type* out) {
  using Acc = typename Op::acc_type;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_input(ctx, X, "x");
  auto ys = stage_input(ctx, Op::kBinary ? Y : MatrixView<const typename Op::value_type>(), "y");
  auto res = reduce_gpu::reduce_columns_device<Op>(xs.data, ys.data, X.rows, X.cols, dev, stream);
  TL_CUDA_CHECK(cudaMemcpyAsync(out, res.data(), sizeof(Acc) * X.cols, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define TL_INSTANTIATE_REDUCE_CUDA(...)                                                              \
  template void reduce_cuda<__VA_ARGS__>(const Context&, MatrixView<const __VA_ARGS__::value_type>, \
                                         MatrixView<const __VA_ARGS__::value_type>, __VA_ARGS__::acc_type*);
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::SumOp<float, float>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::SumOp<float, double>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::SumOp<double, double>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::DotOp<float, float>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::DotOp<float, double>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::DotOp<double, double>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::ArgMinOp<float>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::ArgMinOp<double>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::ArgMaxOp<float>)
TL_INSTANTIATE_REDUCE_CUDA(reduce_detail::ArgMaxOp<double>)
#undef TL_INSTANTIATE_REDUCE_CUDA

}  // namespace tl::detail
