#include <algorithm>
#include <vector>

#include "core/cuda/kit.cuh"
#include "ensemble/forest/forest_common.hpp"

namespace tl::forest_detail {
using namespace tl::cuda_kit;

namespace {

// One device thread builds one tree: build_tree, the code the CPU backend
// runs, so the trees are the same bits.
template <class T>
__global__ void build_kernel(TreeInput<T> in, ForestParams p, std::int64_t t0, std::int64_t nb, std::int32_t* i32,
                             double* wbuf, T* keys, StackRec* stack, std::int64_t* nodes_i, double* nodes_d,
                             std::int64_t* n_nodes, std::int64_t mae_i, std::int64_t mae_d) {
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= nb) return;
  const std::int64_t rows = in.rows, cols = in.cols, V = values_per_node(in);
  const std::int64_t cap = node_capacity(rows), ss = stats_size(in.class_sum, in.n_outputs);
  // mae_i, mae_d: the absolute-error criterion's scratch (0 for the others).
  std::int32_t* ib = i32 + b * (5 * rows + cols + mae_i);
  double* wb = wbuf + b * (rows + ss + mae_d);
  T* kb = keys + b * 2 * rows;
  TreeWork<T> wk{ib,
                 wb,
                 ib + rows,
                 ib + 2 * rows,
                 ib + 3 * rows,
                 ib + 4 * rows,
                 kb,
                 kb + rows,
                 ib + 5 * rows,
                 wb + rows,
                 stack + b * (rows + 1),
                 mae_i ? ib + 5 * rows + cols : nullptr,
                 mae_d ? wb + rows + ss : nullptr};
  std::int64_t* ni = nodes_i + b * 4 * cap;
  double* nd = nodes_d + b * (3 + V) * cap;
  TreeOut out{ni, ni + cap, ni + 2 * cap, ni + 3 * cap, nd, nd + cap, nd + 2 * cap, nd + 3 * cap, cap};
  n_nodes[b] = build_tree(in, p, p.first_tree + t0 + b, wk, out);
}

template <class T>
__global__ void apply_kernel(const T* __restrict__ X, std::int64_t rows, std::int64_t cols, std::int64_t n_trees,
                             const std::int64_t* __restrict__ offsets, const std::int64_t* __restrict__ left,
                             const std::int64_t* __restrict__ right, const std::int64_t* __restrict__ feature,
                             const double* __restrict__ threshold, std::int64_t* __restrict__ out) {
  const std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= rows * n_trees) return;
  const std::int64_t i = q / n_trees, t = q % n_trees, o = offsets[t];
  out[q] = tree_leaf(X + i * cols, 1, left + o, right + o, feature + o, threshold + o);
}

}  // namespace

template <class T>
ForestTrees fit_cuda(const Context& ctx, MatrixView<const T> X, const TreeInput<T>& hin, const ForestParams& p) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t rows = hin.rows, cols = hin.cols, V = values_per_node(hin);
  const std::size_t ur = static_cast<std::size_t>(rows);
  auto xs = stage_to_device(ctx, X);
  const std::size_t uo = static_cast<std::size_t>(hin.n_outputs);
  auto yc = upload_async(hin.y_class, hin.y_class ? ur * uo : 0, dev, stream);
  auto yr = upload_async(hin.y_reg, hin.y_reg ? ur * uo : 0, dev, stream);
  auto oc = upload_async(hin.out_classes, hin.out_classes ? uo : 0, dev, stream);
  auto wt = upload_async(hin.weight, hin.weight ? ur : 0, dev, stream);
  auto cw = upload_async(hin.cum_weight, hin.cum_weight ? ur : 0, dev, stream);
  TreeInput<T> in = hin;
  in.X = xs.view.data;
  in.rs = cols;
  in.cs = 1;
  in.y_class = hin.y_class ? yc.data() : nullptr;
  in.y_reg = hin.y_reg ? yr.data() : nullptr;
  in.out_classes = hin.out_classes ? oc.data() : nullptr;
  in.weight = hin.weight ? wt.data() : nullptr;
  in.cum_weight = hin.cum_weight ? cw.data() : nullptr;

  const std::int64_t cap = node_capacity(rows), ss = stats_size(hin.class_sum, hin.n_outputs);
  const bool mae = p.criterion == ForestCriterion::AbsoluteError;
  const std::int64_t mae_i = mae ? rows * hin.n_outputs : 0, mae_d = mae ? mae_doubles(rows, hin.n_outputs) : 0;
  const std::int64_t ni32 = 5 * rows + cols + mae_i, nf64 = rows + ss + mae_d;
  const std::int64_t per_tree = ni32 * 4 + nf64 * 8 + 2 * rows * static_cast<std::int64_t>(sizeof(T)) +
                                (rows + 1) * static_cast<std::int64_t>(sizeof(StackRec)) + 4 * cap * 8 +
                                (3 + V) * cap * 8;
  const std::int64_t budget = std::int64_t(2) << 30;  // scratch of one batch: 2 GiB
  const std::int64_t batch = std::max<std::int64_t>(1, std::min<std::int64_t>(p.n_trees, budget / per_tree));

  ForestTrees f;
  f.n_values = V;
  f.offsets.push_back(0);
  std::vector<std::int64_t> hn(static_cast<std::size_t>(batch));
  std::vector<std::int64_t> hi;
  std::vector<double> hd;
  std::vector<std::int32_t> hc;
  for (std::int64_t t0 = 0; t0 < p.n_trees; t0 += batch) {
    const std::int64_t nb = std::min(batch, p.n_trees - t0);
    DeviceBuffer<std::int32_t> i32(static_cast<std::size_t>(nb * ni32), dev);
    DeviceBuffer<double> wbuf(static_cast<std::size_t>(nb * nf64), dev);
    DeviceBuffer<T> keys(static_cast<std::size_t>(nb * 2 * rows), dev);
    DeviceBuffer<StackRec> stack(static_cast<std::size_t>(nb * (rows + 1)), dev);
    DeviceBuffer<std::int64_t> nodes_i(static_cast<std::size_t>(nb * 4 * cap), dev);
    DeviceBuffer<double> nodes_d(static_cast<std::size_t>(nb * (3 + V) * cap), dev);
    DeviceBuffer<std::int64_t> n_nodes(static_cast<std::size_t>(nb), dev);
    const int block = 32;
    build_kernel<T><<<blocks_for(nb, block), block, 0, stream>>>(in, p, t0, nb, i32.data(), wbuf.data(), keys.data(),
                                                                 stack.data(), nodes_i.data(), nodes_d.data(),
                                                                 n_nodes.data(), mae_i, mae_d);
    TL_CUDA_CHECK_LAUNCH("forest build_kernel");
    download_async(hn.data(), n_nodes.data(), static_cast<std::size_t>(nb), stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::int64_t b = 0; b < nb; ++b) {
      const std::int64_t n = hn[static_cast<std::size_t>(b)];
      const std::size_t un = static_cast<std::size_t>(n);
      hi.resize(4 * un);
      hd.resize((3 + static_cast<std::size_t>(V)) * un);
      const std::int64_t* ni = nodes_i.data() + b * 4 * cap;
      const double* nd = nodes_d.data() + b * (3 + V) * cap;
      for (int a = 0; a < 4; ++a) download_async(hi.data() + a * un, ni + a * cap, un, stream);
      for (int a = 0; a < 3; ++a) download_async(hd.data() + a * un, nd + a * cap, un, stream);
      download_async(hd.data() + 3 * un, nd + 3 * cap, un * static_cast<std::size_t>(V), stream);
      if (p.keep_in_bag) {
        hc.resize(ur);
        download_async(hc.data(), i32.data() + b * ni32, ur, stream);
      }
      TL_CUDA_CHECK(cudaStreamSynchronize(stream));
      TreeOut o{hi.data(),          hi.data() + un,     hi.data() + 2 * un,
                hi.data() + 3 * un, hd.data(),          hd.data() + un,
                hd.data() + 2 * un, hd.data() + 3 * un, n};
      append_tree(f, o, n, V);
      if (p.keep_in_bag) f.in_bag.insert(f.in_bag.end(), hc.begin(), hc.end());
    }
  }
  return f;
}

template <class T>
void apply_cuda(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
                const double* threshold, std::int64_t* out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  const std::size_t nodes = static_cast<std::size_t>(offsets[n_trees]);
  auto d_off = upload_async(offsets, static_cast<std::size_t>(n_trees + 1), dev, stream);
  auto d_l = upload_async(left, nodes, dev, stream);
  auto d_r = upload_async(right, nodes, dev, stream);
  auto d_f = upload_async(feature, nodes, dev, stream);
  auto d_t = upload_async(threshold, nodes, dev, stream);
  const std::int64_t total = X.rows * n_trees;
  DeviceBuffer<std::int64_t> d_out(static_cast<std::size_t>(total), dev);
  const int block = 256;
  apply_kernel<T><<<blocks_for(total, block), block, 0, stream>>>(xs.view.data, X.rows, X.cols, n_trees, d_off.data(),
                                                                  d_l.data(), d_r.data(), d_f.data(), d_t.data(),
                                                                  d_out.data());
  TL_CUDA_CHECK_LAUNCH("forest apply_kernel");
  download_async(out, d_out.data(), static_cast<std::size_t>(total), stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define TL_FOREST_CUDA_INST(T)                                                                                     \
  template ForestTrees fit_cuda<T>(const Context&, MatrixView<const T>, const TreeInput<T>&, const ForestParams&); \
  template void apply_cuda<T>(const Context&, MatrixView<const T>, std::int64_t, const std::int64_t*,              \
                              const std::int64_t*, const std::int64_t*, const std::int64_t*, const double*,        \
                              std::int64_t*);
TL_FOREST_CUDA_INST(float)
TL_FOREST_CUDA_INST(double)
#undef TL_FOREST_CUDA_INST

}  // namespace tl::forest_detail
