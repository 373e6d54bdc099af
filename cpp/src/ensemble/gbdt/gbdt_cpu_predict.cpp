// CPU backend of the gradient-boosted trees: applying trees. The trainer
// adds each new tree's leaf values to the training and eval rows'
// approximations; prediction walks the model's trees over raw features.
#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"

namespace tl::gbdt_cpu {

template <class T>
void CpuTrainer<T>::apply_tree(const std::vector<double>& values) {
  pfor(ctx_, ceil_div(n_, kRowBlock), n_ * D_, [&](std::int64_t blk) {
    const std::int64_t r1 = std::min(n_, (blk + 1) * kRowBlock);
    for (std::int64_t i = blk * kRowBlock; i < r1; ++i)
      for (int k = 0; k < D_; ++k)
        approx_[i * D_ + k] = num::add(approx_[i * D_ + k], values[leaf_[i] * D_ + k]);
  });
}

template <class T>
void CpuTrainer<T>::apply_tree_eval(int depth, const std::vector<std::int32_t>& sf,
                                    const std::vector<std::int32_t>& sb, const std::vector<double>& values) {
  const bool dw = gbdt_per_node(p_.grow_policy);
  pfor(ctx_, ceil_div(m_, kRowBlock), m_ * (depth + D_), [&](std::int64_t blk) {
    const std::int64_t r1 = std::min(m_, (blk + 1) * kRowBlock);
    for (std::int64_t i = blk * kRowBlock; i < r1; ++i) {
      std::int64_t leaf = 0;
      for (int d = 0; d < depth; ++d) {
        const std::int64_t s = gbdt::split_slot(dw, d, leaf);
        if (sf[s] < 0) continue;
        leaf |= static_cast<std::int64_t>(gbdt::bin_right(ebins_[static_cast<std::int64_t>(sf[s]) * m_ + i], sb[s])) << d;
      }
      for (int k = 0; k < D_; ++k)
        eapprox_[i * D_ + k] = num::add(eapprox_[i * D_ + k], values[leaf * D_ + k]);
    }
  });
}

#define TL_GBDT_INSTANTIATE(T)                                                                                \
  template void CpuTrainer<T>::apply_tree(const std::vector<double>&);                                        \
  template void CpuTrainer<T>::apply_tree_eval(int, const std::vector<std::int32_t>&,                         \
                                               const std::vector<std::int32_t>&, const std::vector<double>&);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::gbdt_cpu

namespace tl::detail {

using gbdt_cpu::ceil_div;
using gbdt_cpu::kRowBlock;
using gbdt_cpu::pfor;

template <class T>
void gbdt_predict_cpu(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                      std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<double> out) {
  TL_REQUIRE(X.on_host() && (acc || out.on_host()), ValueError, "the CPU backend needs host arrays");
  std::vector<std::int64_t> so, lo;
  gbdt::tree_offsets(model, &so, &lo);
  const int D = model.n_outputs;
  const bool nan_max = model.nan_mode == GbdtNanMode::Max;
  const std::uint8_t* nan_right = model.split_nan_right.empty() ? nullptr : model.split_nan_right.data();
  const bool depthwise = gbdt_per_node(model.grow_policy);
  const std::int64_t n = X.rows;
  pfor(ctx, ceil_div(n, kRowBlock), n * (tree_end - tree_begin) * 4, [&](std::int64_t blk) {
    std::vector<double> a(static_cast<std::size_t>(D)), pr(static_cast<std::size_t>(D));
    const std::int64_t r1 = std::min(n, (blk + 1) * kRowBlock);
    for (std::int64_t i = blk * kRowBlock; i < r1; ++i) {
      for (int k = 0; k < D; ++k) a[k] = acc ? acc[i * D + k] : model.base_score[k];
      for (std::int64_t t = tree_begin; t < tree_end; ++t) {
        const int depth = model.tree_depth[t];
        std::int64_t leaf = 0;
        for (int d = 0; d < depth; ++d) {
          const std::int64_t s = so[t] + gbdt::split_slot(depthwise, d, leaf);
          const int f = model.split_feature[s];
          if (f < 0) continue;  // a Depthwise node that does not split: left
          const double x = static_cast<double>(X(i, f));
          leaf |= static_cast<std::int64_t>(gbdt::goes_right(x, model.split_border[s], gbdt::nan_goes_right(nan_right, s, nan_max))) << d;
        }
        const double* v = model.leaf_values.data() + lo[t] + leaf * D;
        for (int k = 0; k < D; ++k) a[k] = num::add(a[k], v[k]);
      }
      if (acc) {
        for (int k = 0; k < D; ++k) acc[i * D + k] = a[k];
      } else if (kind != GbdtOutput::Raw) {
        gbdt::link(model.loss, D, kind, a.data(), pr.data());
        for (int k = 0; k < D; ++k) out(i, k) = pr[k];
      } else {
        for (int k = 0; k < D; ++k) out(i, k) = a[k];
      }
    }
  });
}

#define TL_GBDT_INSTANTIATE(T)                                                                           \
  template void gbdt_predict_cpu<T>(const Context&, const GbdtModel&, MatrixView<const T>, std::int64_t, \
                                    std::int64_t, double*, GbdtOutput, MatrixView<double>);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::detail
