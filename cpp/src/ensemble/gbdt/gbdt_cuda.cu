// CUDA backend of the gradient-boosted trees: the CPU backend's algorithm,
// step for step, with the whole tree built on the device. The host loop only
// launches kernels; nothing is copied back until the model is exported,
// except the per-round eval loss when an eval set is given, the eval set's
// predictions when a host-side eval metric or a callback asks for them
// (eval_raw), and each level's chosen score when a split constraint
// (min_child_weight, min_split_gain) may stop the tree.
//
// Identity with the CPU backend rests on: the same sorted border sample (a
// total order on canonical keys, so any sort gives one array); exact integer
// histograms (per-block shared-memory histograms of 64-bit sums kept as
// 32-bit words, flushed into int64 with atomics: order-free); the shared
// TL_HD math of gbdt_common.hpp for every floating-point value; sequential
// sums over leaves and outputs in the CPU's order; and a total order on split candidates (score, then index) so
// that any reduction tree picks the same winner.
//
// The stages: borders and bins (gbdt_cuda_borders.cu), per-row gradients
// and losses (gbdt_cuda_rows.cuh), histograms (gbdt_cuda_hist.cuh), split
// search (gbdt_cuda_split.cuh), leaves (gbdt_cuda_leaves.cuh), the trainer
// (gbdt_cuda_trainer.cuh) and its tree growth (gbdt_cuda_tree.cuh), and
// prediction (gbdt_cuda_predict.cu). This file is the fit's entry point; the
// trainer's headers are compiled here, in one translation unit.
#include "ensemble/gbdt/gbdt_cuda_trainer.cuh"
#include "ensemble/gbdt/gbdt_cuda_tree.cuh"

namespace tl::detail {

template <class T>
GbdtModel gbdt_fit_cuda(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                        const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                        GbdtFitInfo* info, const GbdtCallback& callback, const GbdtInit* init) {
  DeviceGuard guard(ctx.device().id);
  gbdt_cuda::CudaTrainer<T> tr(ctx, X, y, weight, params, eval, init ? init->model : nullptr);
  return gbdt::run_fit(tr, params, y, weight, X.rows, eval.y, eval.weight, eval.X.rows, record_train_loss,
                       ctx.n_threads(), info, callback, init);
}

#define TL_GBDT_INSTANTIATE(T)                                                                           \
  template GbdtModel gbdt_fit_cuda<T>(const Context&, MatrixView<const T>, const double*, const double*, \
                                      const GbdtParams&, const GbdtEvalSet<T>&, bool, GbdtFitInfo*,      \
                                      const GbdtCallback&, const GbdtInit*);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::detail
