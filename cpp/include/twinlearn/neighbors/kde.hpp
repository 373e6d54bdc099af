// Kernel density estimation by exact sums over every training row (CPU and
// CUDA), the core of twinlearn.neighbors.KernelDensity.
//
// For query x_i the routine returns the log of the (weighted) kernel sum
//   log S_i,   S_i = sum_j w_j K(dist(x_i, y_j) / h)
// (w_j = 1 without weights); normalisation (the kernel's volume, the total
// weight) is left to the caller. Kernels and their values at u = dist / h,
// as scikit-learn's:
//   gaussian      log K = -0.5 d^2 / h^2      (computed as d*d / (h*h))
//   exponential   log K = -d / h
//   tophat        K = 1                 where d < h, else 0
//   epanechnikov  K = 1 - d^2 / h^2     where d < h
//   linear        K = 1 - d / h         where d < h
//   cosine        K = cos(pi d / (2 h)) where d < h
//
// Order (docs/NUMERICS.md, "Kernel density"): every query's sum over the
// training rows j = 0..n-1 runs in the canonical order of core/reduce.hpp
// (chunks of 2048 rows, 256 strided lanes of 8 sequential terms, the
// pairwise lane tree, then the pairwise chunk tree), on both backends. The
// gaussian and exponential kernels are summed as log-sum-exp: first the
// exact maximum M_i of log K over the rows with w_j > 0, then the sum of
// w_j exp(log K - M_i) in that order, log S_i = M_i + log(sum). Compact
// kernels are plain sums of w_j K, then the log (log 0 = -inf). Distances are
// the metric chains of twinlearn/neighbors/distance.hpp, euclidean in its
// direct form (differences, not dot products). Every step is tl::num
// arithmetic shared by the backends, so any numeric mode gives the same bits
// on the CPU and on any GPU.
#pragma once
#include <cstdint>
#include <string>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/neighbors/distance.hpp"

namespace tl {

enum class KdeKernel : int { Gaussian = 0, Tophat = 1, Epanechnikov = 2, Exponential = 3, Linear = 4, Cosine = 5 };

// "gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine".
KdeKernel parse_kde_kernel(const std::string& name);
const char* to_string(KdeKernel k);
// Kernels summed as log-sum-exp (gaussian, exponential).
constexpr bool kde_kernel_is_log(KdeKernel k) { return k == KdeKernel::Gaussian || k == KdeKernel::Exponential; }

// out[i] = log S_i (above) for the m rows of `queries` against the n rows of
// `train` (both m x d / n x d, host or the context's device). weights: n
// host values >= 0, or nullptr for unit weights. metric: euclidean,
// manhattan, chebyshev or minkowski (sqeuclidean and cosine are refused, as
// scikit-learn's KernelDensity does). bandwidth > 0 and finite. out: m host
// values. No n x m matrix is formed: a query's terms are folded into its
// lane partials as they are computed.
template <class T>
void kde_log_sum(const Context& ctx, MatrixView<const T> train, const T* weights, MatrixView<const T> queries,
                 Metric metric, KdeKernel kernel, double bandwidth, T* out);

}  // namespace tl
