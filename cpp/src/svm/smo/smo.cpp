#include "twinlearn/svm/smo.hpp"

#include <string>

#include "svm/smo/smo_impl.hpp"
#include "twinlearn/core/error.hpp"

namespace tl {

SvmKernel parse_svm_kernel(const std::string& name) {
  if (name == "linear") return SvmKernel::Linear;
  if (name == "poly") return SvmKernel::Poly;
  if (name == "rbf") return SvmKernel::Rbf;
  if (name == "sigmoid") return SvmKernel::Sigmoid;
  if (name == "precomputed") return SvmKernel::Precomputed;
  throw ValueError("kernel must be one of 'linear', 'poly', 'rbf', 'sigmoid', 'precomputed', got '" + name + "'");
}

const char* svm_kernel_name(SvmKernel k) {
  switch (k) {
    case SvmKernel::Linear: return "linear";
    case SvmKernel::Poly: return "poly";
    case SvmKernel::Rbf: return "rbf";
    case SvmKernel::Sigmoid: return "sigmoid";
    case SvmKernel::Precomputed: return "precomputed";
  }
  return "?";
}

namespace {

void check_params(const SvmParams& p) {
  TL_REQUIRE(p.gamma >= 0, ValueError, "gamma must be >= 0, got ", p.gamma);
  TL_REQUIRE(p.degree >= 0, ValueError, "degree must be >= 0, got ", p.degree);
  TL_REQUIRE(p.tol > 0, ValueError, "tol must be > 0, got ", p.tol);
  TL_REQUIRE(p.max_iter >= -1, ValueError, "max_iter must be >= -1, got ", p.max_iter);
  TL_REQUIRE(p.cache_size > 0, ValueError, "cache_size must be > 0, got ", p.cache_size);
}

// The SVM solver has a CPU backend only: the estimators route 'auto' to the CPU.
[[noreturn]] void no_cuda() {
  throw NotAvailable("the SVM solver has no CUDA backend yet: use device='cpu'");
}

}  // namespace

template <class T>
SmoResult smo_solve(const Context& ctx, MatrixView<const T> X, const std::int64_t* rows, std::int64_t m,
                    std::int64_t l, const std::int64_t* sample, const std::int8_t* y, const double* p,
                    const double* C, const SvmParams& params, double* alpha) {
  check_params(params);
  TL_REQUIRE(X.on_host(), ValueError, "smo_solve: X must be in host memory");
  TL_REQUIRE(m >= 1 && l >= 1, ValueError, "smo_solve: empty problem");
  if (params.kernel == SvmKernel::Precomputed)
    TL_REQUIRE(X.rows == X.cols, ValueError, "Precomputed matrix must be a square matrix. Input is a ", X.rows, "x",
               X.cols, " matrix.");
  for (std::int64_t s = 0; s < m; ++s)
    TL_REQUIRE(rows[s] >= 0 && rows[s] < X.rows, ValueError, "smo_solve: row index ", rows[s], " out of range");
  for (std::int64_t v = 0; v < l; ++v) {
    TL_REQUIRE(sample[v] >= 0 && sample[v] < m, ValueError, "smo_solve: sample index out of range");
    TL_REQUIRE(y[v] == 1 || y[v] == -1, ValueError, "smo_solve: y must be +1 or -1");
    TL_REQUIRE(C[v] > 0, ValueError, "smo_solve: every C must be > 0");
    TL_REQUIRE(alpha[v] >= 0 && alpha[v] <= C[v], ValueError, "smo_solve: alpha outside [0, C]");
  }
  return ctx.dispatch([&] { return detail::smo_solve_cpu(ctx, X, rows, m, l, sample, y, p, C, params, alpha); },
                      [&]() -> SmoResult { no_cuda(); });
}

template <class T>
void svm_decision(const Context& ctx, MatrixView<const T> X, MatrixView<const T> SV, const double* coef,
                  const std::int64_t* ranges, const double* rho, std::int64_t k, const SvmParams& params,
                  double* out) {
  check_params(params);
  TL_REQUIRE(X.on_host() && SV.on_host(), ValueError, "svm_decision: X and SV must be in host memory");
  const bool pre = params.kernel == SvmKernel::Precomputed;
  const std::int64_t nsv = pre ? X.cols : SV.rows;
  if (!pre) TL_REQUIRE(SV.cols == X.cols, ValueError, "svm_decision: X has ", X.cols, " features, SV ", SV.cols);
  for (std::int64_t c = 0; c < 4 * k; ++c)
    TL_REQUIRE(ranges[c] >= 0 && ranges[c] <= nsv, ValueError, "svm_decision: range out of bounds");
  if (X.rows == 0 || k == 0) return;
  ctx.dispatch([&] { detail::svm_decision_cpu(ctx, X, SV, coef, ranges, rho, k, params, out); },
               [&] { no_cuda(); });
}

#define TL_SVM_INST(T)                                                                                       \
  template SmoResult smo_solve<T>(const Context&, MatrixView<const T>, const std::int64_t*, std::int64_t,    \
                                  std::int64_t, const std::int64_t*, const std::int8_t*, const double*,      \
                                  const double*, const SvmParams&, double*);                                 \
  template void svm_decision<T>(const Context&, MatrixView<const T>, MatrixView<const T>, const double*,     \
                                const std::int64_t*, const double*, std::int64_t, const SvmParams&, double*);
TL_SVM_INST(float)
TL_SVM_INST(double)
#undef TL_SVM_INST

}  // namespace tl
