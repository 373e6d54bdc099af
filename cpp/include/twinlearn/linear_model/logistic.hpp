// Logistic regression by L-BFGS (binary and multinomial), and its
// probabilities.
//
// Objective (scikit-learn's, solver 'lbfgs'): with S = sum of the sample
// weights (n without weights) and W the K x (d + fit_intercept) parameters
// (K = 1 for two classes, else the number of classes; the intercept is the
// last column and is not penalised),
//   f(W) = (1/S) sum_i s_i loss_i(W) + (l2/2) ||W without intercept||²
//          + l1 ||W without intercept||₁
// binary: loss_i = log(1 + exp(z_i)) - y_i z_i,  y_i in {0, 1}
// multinomial: loss_i = log(sum_k exp(z_ik)) - z_i,y_i
// where z_ik = sum_j x_ij W_kj (+ W_k,d). With l1 > 0 the orthant-wise
// variant (OWL-QN) is used.
//
// Canonical order (docs/NUMERICS.md, "Logistic regression"). Rows are cut
// into chunks of kLogisticChunk rows. Within a chunk: z_ik is one fma chain
// in double over the features in increasing order from +0.0 (x widened from
// T), then + intercept; the loss and residuals use the project's own exp and
// log (core/math.hpp); the chunk's loss is one fma chain over its rows
// (s_i * loss_i); each gradient entry is one fma chain over its rows
// (r_ik * x_ij). The chunk partials are merged by the pairwise tree of
// core/tree.hpp. The optimizer's vector algebra is sequential or chunked
// (dot products: chains over 64 entries, then the pairwise tree) and its
// scalar logic is the same code on both backends, so the CPU backend and the
// CUDA backend produce the same iterates, bit for bit. The CUDA backend keeps
// the whole loop on the device: each step is a fused evaluation kernel, a
// tree kernel and a single-block controller kernel; the host only looks at a
// completion flag every few steps.
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

inline constexpr std::int64_t kLogisticChunk = 128;

struct LogisticOptions {
  std::int64_t n_classes = 2;  // >= 2; two classes use one coefficient row
  bool fit_intercept = true;
  double sum_weights = 0.0;    // S > 0
  double l2 = 0.0;             // penalty strengths, >= 0
  double l1 = 0.0;
  std::int64_t max_iter = 100;
  double gtol = 1e-4;          // stop when max |(pseudo-)gradient| <= gtol
  // A run stopped by max_iter still counts as converged when the largest
  // gradient entry is at most gtol_converged (>= gtol; 0: gtol).
  double gtol_converged = 0.0;
  double ftol = 1.4210854715202004e-14;  // stop when the relative decrease <= ftol
  int memory = 10;             // stored correction pairs
  int max_linesearch = 50;     // evaluations per line search
};

enum class LogisticStatus : int { Converged = 0, MaxIter = 1, LineSearchFailed = 2, NonFinite = 3 };

struct LogisticResult {
  std::int64_t n_iter = 0;
  std::int64_t n_evals = 0;
  LogisticStatus status = LogisticStatus::Converged;
  double objective = 0.0;
};

// X: n x d (host or the context's device); y: n class indices in [0, K)
// (for two classes: 1 for the positive class); w: n sample weights or
// w.data == nullptr. W: K_rows x (d + fit_intercept) doubles in host memory,
// the starting point on entry (warm start) and the solution on exit.
template <class T>
LogisticResult logistic_lbfgs(const Context& ctx, MatrixView<const T> X, VectorView<const std::int32_t> y,
                              VectorView<const T> w, const LogisticOptions& opt, double* W);

// Probabilities (or their logarithms) from decision scores: two classes
// (scores n x 1) give [1 - sigmoid(s), sigmoid(s)]; more give the softmax of
// each row. scores and out (n x n_classes) may be on the host or the device;
// the project's own transcendentals, so both backends give the same bits.
template <class T>
void logistic_proba(const Context& ctx, MatrixView<const T> scores, bool log, MatrixView<T> out);

}  // namespace tl
