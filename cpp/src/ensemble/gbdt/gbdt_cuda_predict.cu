// CUDA backend of the gradient-boosted trees: prediction, every row through
// the model's trees on the device.
#include <vector>

#include "ensemble/gbdt/gbdt_cuda_common.cuh"

namespace tl::gbdt_cuda {
namespace {

// Grid-stride over rows, one thread per row: the row's leaf in each tree of
// [t0, t1) (splits compared in double; NaN right under nan_mode Max, or
// where snan, a Learned model's split_nan_right, says so), accumulated in
// double in tree order, from base (acc == nullptr) or from acc. D == 1 keeps
// the accumulator in a register; otherwise acc (n x D) holds it. Then either
// acc is left (staged) or out (float64) gets acc or link(acc).
// The leaf of row x in the tree whose splits start at so (see GbdtModel).
template <class T>
__device__ __forceinline__ std::int64_t tree_leaf(const T* x, int dp, std::int64_t so,
                                                  const std::int32_t* __restrict__ sfeat,
                                                  const double* __restrict__ sborder,
                                                  const std::uint8_t* __restrict__ snan, bool nan_max,
                                                  bool depthwise) {
  std::int64_t lf = 0;
  for (int d = 0; d < dp; ++d) {
    const std::int64_t s = so + gbdt::split_slot(depthwise, d, lf);
    const int f = sfeat[s];
    if (f < 0) continue;  // a Depthwise node that does not split: left
    lf |= static_cast<std::int64_t>(
              gbdt::goes_right(static_cast<double>(x[f]), sborder[s], gbdt::nan_goes_right(snan, s, nan_max)))
          << d;
  }
  return lf;
}

template <class T>
__global__ void predict_kernel(const T* __restrict__ X, std::int64_t n, int F, std::int64_t t0, std::int64_t t1,
                               const std::int32_t* __restrict__ depth, const std::int64_t* __restrict__ soff,
                               const std::int64_t* __restrict__ loff, const std::int32_t* __restrict__ sfeat,
                               const double* __restrict__ sborder, const std::uint8_t* __restrict__ snan,
                               const double* __restrict__ leaves,
                               const double* __restrict__ base, int D, bool nan_max, bool depthwise, GbdtLoss loss,
                               bool start_from_acc,
                               bool staged, int kind, double* __restrict__ acc, double* __restrict__ out) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const T* x = X + i * F;
    if (D == 1) {
      double a = start_from_acc ? acc[i] : base[0];
      for (std::int64_t t = t0; t < t1; ++t)
        a = num::add(a, leaves[loff[t] + tree_leaf(x, depth[t], soff[t], sfeat, sborder, snan, nan_max, depthwise)]);
      if (staged) {
        acc[i] = a;
      } else {
        double p = a;
        if (kind != static_cast<int>(GbdtOutput::Raw)) gbdt::link(loss, 1, static_cast<GbdtOutput>(kind), &a, &p);
        out[i] = p;
      }
      continue;
    }
    double* a = acc + i * D;
    if (!start_from_acc)
      for (int k = 0; k < D; ++k) a[k] = base[k];
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t lf = tree_leaf(x, depth[t], soff[t], sfeat, sborder, snan, nan_max, depthwise);
      const double* v = leaves + loff[t] + lf * D;
      for (int k = 0; k < D; ++k) a[k] = num::add(a[k], v[k]);
    }
    if (staged) continue;
    if (kind != static_cast<int>(GbdtOutput::Raw)) gbdt::link(loss, D, static_cast<GbdtOutput>(kind), a, a);
    for (int k = 0; k < D; ++k) out[i * D + k] = a[k];
  }
}

}  // namespace
}  // namespace tl::gbdt_cuda

namespace tl::detail {

using gbdt_cuda::download;
using gbdt_cuda::kBlock;
using gbdt_cuda::Launch;
using gbdt_cuda::make_launch;
using gbdt_cuda::predict_kernel;
using gbdt_cuda::to_device;
using gbdt_cuda::upload;

template <class T>
void gbdt_predict_cuda(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                       std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<double> out) {
  DeviceGuard guard(ctx.device().id);
  const Launch L = make_launch(ctx);
  const int dev = L.dev;
  const std::int64_t n = X.rows;
  const int D = model.n_outputs;
  std::vector<std::int64_t> so, lo;
  gbdt::tree_offsets(model, &so, &lo);
  auto xs = stage_to_device(ctx, X);
  auto d_depth = to_device(model.tree_depth, dev, L.stream);
  auto d_so = to_device(so, dev, L.stream);
  auto d_lo = to_device(lo, dev, L.stream);
  auto d_sf = to_device(model.split_feature, dev, L.stream);
  auto d_sb = to_device(model.split_border, dev, L.stream);
  DeviceBuffer<std::uint8_t> d_snan;
  if (!model.split_nan_right.empty()) d_snan = to_device(model.split_nan_right, dev, L.stream);
  auto d_leaves = to_device(model.leaf_values, dev, L.stream);
  auto d_base = to_device(model.base_score, dev, L.stream);
  const bool staged = acc != nullptr;
  DeviceBuffer<double> d_acc;
  if (staged || D > 1) d_acc = DeviceBuffer<double>(static_cast<std::size_t>(n * D), dev);
  if (staged) upload(d_acc, acc, static_cast<std::size_t>(n * D), L.stream);
  DeviceBuffer<double> d_out;
  double* outp = nullptr;
  if (!staged) {
    TL_REQUIRE(out.is_c_contiguous(), ValueError, "gbdt_predict: output must be C-contiguous");
    outp = out.data;
    if (out.on_host()) {
      d_out = DeviceBuffer<double>(static_cast<std::size_t>(n * D), dev);
      outp = d_out.data();
    }
  }
  predict_kernel<T><<<L.grid(n), kBlock, 0, L.stream>>>(
      xs.view.data, n, model.n_features, tree_begin, tree_end, d_depth.data(), d_so.data(), d_lo.data(), d_sf.data(),
      d_sb.data(), d_snan.size() ? d_snan.data() : nullptr, d_leaves.data(), d_base.data(), D,
      model.nan_mode == GbdtNanMode::Max,
      gbdt_per_node(model.grow_policy), model.loss, staged, staged,
      static_cast<int>(kind), d_acc.data(), outp);
  TL_CUDA_CHECK_LAUNCH("predict_kernel");
  if (staged) download(acc, d_acc, static_cast<std::size_t>(n * D), L.stream);
  if (!staged && out.on_host())
    TL_CUDA_CHECK(cudaMemcpyAsync(out.data, outp, sizeof(double) * n * D, cudaMemcpyDeviceToHost, L.stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(L.stream));
}

#define TL_GBDT_INSTANTIATE(T)                                                                            \
  template void gbdt_predict_cuda<T>(const Context&, const GbdtModel&, MatrixView<const T>, std::int64_t, \
                                     std::int64_t, double*, GbdtOutput, MatrixView<double>);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::detail
