// Math shared by the CPU and CUDA backends of the gradient-boosted trees.
// Everything here is TL_HD and spelled out with tl::num operations, so both
// backends compute the same bits (docs/NUMERICS.md, rules 2-4, 6).
//
// By subject: numerics and fixed point (gbdt_math.hpp), losses
// (gbdt_losses.hpp), row sampling (gbdt_sampling.hpp), splits and bins
// (gbdt_splits.hpp); and here the backends' entry points.
#pragma once
#include <cstdint>
#include <vector>

#include "ensemble/gbdt/gbdt_losses.hpp"
#include "ensemble/gbdt/gbdt_math.hpp"
#include "ensemble/gbdt/gbdt_sampling.hpp"
#include "ensemble/gbdt/gbdt_splits.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

namespace tl::detail {

// A fit that continues from a model (gbdt_fit's init): the model, and the
// raw predictions its trees give the training rows (approx, n x n_outputs)
// and the eval rows (eval_approx, m x n_outputs), host doubles computed by
// gbdt_predict_stage before the backend runs.
struct GbdtInit {
  const GbdtModel* model = nullptr;
  std::vector<double> approx, eval_approx;
};

// The approximations a trainer starts `rows` rows from (rows x n_outputs,
// host): a continued fit's (`from`, approx or eval_approx of a GbdtInit),
// else base (n_outputs values) for every row.
inline std::vector<double> start_approx(const std::vector<double>& base, std::int64_t rows,
                                        const std::vector<double>* from) {
  if (from) return *from;
  const std::size_t D = base.size();
  std::vector<double> a(static_cast<std::size_t>(rows) * D);
  for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i)
    for (std::size_t k = 0; k < D; ++k) a[i * D + k] = base[k];
  return a;
}

// Backend entry points (validated inputs only; init: nullptr for a fresh fit).
template <class T>
GbdtModel gbdt_fit_cpu(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                       const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                       GbdtFitInfo* info, const GbdtCallback& callback, const GbdtInit* init);
template <class T>
GbdtModel gbdt_fit_cuda(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                        const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                        GbdtFitInfo* info, const GbdtCallback& callback, const GbdtInit* init);
template <class T>
void gbdt_predict_cpu(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                      std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<double> out);
template <class T>
void gbdt_predict_cuda(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                       std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<double> out);
template <class T>
GbdtModel gbdt_borders_cpu(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode);
template <class T>
GbdtModel gbdt_borders_cuda(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode);

}  // namespace tl::detail
