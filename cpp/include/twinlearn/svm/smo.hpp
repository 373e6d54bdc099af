// Support vector machines: libsvm's SMO solver (C-SVC and epsilon-SVR duals)
// and the kernel expansions of prediction.
//
// Every kernel value is computed in double (float32 input is widened exactly,
// as libsvm widens its nodes) by one shared function, detail::svm_kernel_value
// (svm/smo/smo_common.hpp): dot products and squared distances are summed in
// the canonical lane order (twinlearn/core/lane_reduce.hpp), so the value of a
// pair does not depend on thread count, cache state or backend.
#pragma once
#include <cstdint>
#include <string>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

enum class SvmKernel : int { Linear = 0, Poly = 1, Rbf = 2, Sigmoid = 3, Precomputed = 4 };

SvmKernel parse_svm_kernel(const std::string& name);
const char* svm_kernel_name(SvmKernel k);

// Parameters of the kernel and of the solver (libsvm's svm_parameter, less
// what the caller spells out per variable: C and the linear term).
struct SvmParams {
  SvmKernel kernel = SvmKernel::Rbf;
  int degree = 3;            // poly: (gamma <x, y> + coef0)^degree by repeated squaring
  double gamma = 1.0;        // rbf, poly, sigmoid
  double coef0 = 0.0;        // poly, sigmoid
  double tol = 1e-3;         // stop when the maximal violating pair's gap m(a) - M(a) < tol
  std::int64_t max_iter = -1;  // -1: no limit
  bool shrinking = true;     // libsvm's shrinking heuristic (changes the path, not the optimum)
  double cache_size = 200;   // MB of kernel rows kept (least recently used rows are dropped)
};

struct SmoResult {
  double rho = 0;          // decision = sum_i coef_i K(x_i, x) - rho
  double obj = 0;          // the dual objective at the solution
  std::int64_t n_iter = 0;
  int status = 0;          // 0: converged, 1: stopped at max_iter
};

// libsvm's Solver (Fan, Chen & Lin 2005 second-order working set selection,
// shrinking and gradient reconstruction, libsvm's rho) on
//   min_a 0.5 a' Q a + p' a,  0 <= a_v <= C_v,  sum_v y_v a_v = 0,
//   Q_uv = y_u y_v K(x_{rows[sample[u]]}, x_{rows[sample[v]]}).
// X: n x d samples (host), or, for a precomputed kernel, n x n kernel values.
// rows: m indices into X (host) -- the problem's samples; sample, y, p, C,
// alpha: l entries each (host); sample[v] in [0, m), y[v] = +1 or -1.
// alpha is the starting point on entry (feasible) and the solution on exit.
// A C-SVC problem has l = m, sample[v] = v, p = -1; epsilon-SVR has l = 2m,
// sample[v] = v mod m, y = +1 then -1, p = eps - z then eps + z.
template <class T>
SmoResult smo_solve(const Context& ctx, MatrixView<const T> X, const std::int64_t* rows, std::int64_t m,
                    std::int64_t l, const std::int64_t* sample, const std::int8_t* y, const double* p,
                    const double* C, const SvmParams& params, double* alpha);

// out[i * k + c] = sum over the support vectors s in the two ranges of
// classifier c (ranges[4c], ranges[4c+1]) then (ranges[4c+2], ranges[4c+3]),
// in that order, of coef[c * nsv + s] * K(X_i, SV_s), minus rho[c].
// The sum is sequential (libsvm's order). For a precomputed kernel X holds
// the kernel values against the support vectors (X.cols == nsv), SV is unused.
// X, SV: host; coef: k x nsv, ranges: 4k, rho: k, out: X.rows x k, host.
template <class T>
void svm_decision(const Context& ctx, MatrixView<const T> X, MatrixView<const T> SV, const double* coef,
                  const std::int64_t* ranges, const double* rho, std::int64_t k, const SvmParams& params,
                  double* out);

}  // namespace tl
