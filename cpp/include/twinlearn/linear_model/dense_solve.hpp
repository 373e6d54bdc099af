// Small dense solves on the host, in double, for both backends (the d x d
// systems built from tl::gram). Every routine is written out with a fixed
// operation order and only IEEE operations (+ - * / sqrt, no fma, no libm
// transcendental), so its results are the same bits on any machine built
// with this project's flags (docs/NUMERICS.md, "Linear solves").
//
// Matrices are row-major n x n doubles in host memory.
#pragma once
#include <cstdint>
#include <functional>

namespace tl::linalg {

// A = Uᵀ U in place: on return the upper triangle of A holds U (the strict
// lower triangle is left as it was). Right-looking, row k of U is finished at
// step k and the trailing rows are updated in increasing column order.
// Returns false when a pivot is not positive or not finite (A is then
// partly overwritten).
bool cholesky_upper(double* A, std::int64_t n);

// x = (Uᵀ U)⁻¹ b in place (forward then back substitution).
void cholesky_solve(const double* U, std::int64_t n, double* b);

// Estimate of ‖A⁻¹‖₁ for a symmetric A given a solver x -> A⁻¹ x (in place):
// Hager's method with Higham's extra test vector, as LAPACK's dlacon.
double inverse_norm1_estimate(std::int64_t n, const std::function<void(double*)>& solve);

// ‖A‖₁ (largest absolute column sum).
double norm1(const double* A, std::int64_t n);

// ‖A‖₁ of the symmetric matrix whose upper triangle (j >= i) A holds; the
// lower triangle is not read. The same bits as norm1 of the mirrored matrix.
double norm1_symmetric_upper(const double* A, std::int64_t n);

// Symmetric eigendecomposition A = V diag(lam) Vᵀ: Householder reduction to
// tridiagonal form and the implicit QL method (EISPACK tred2/tql2).
// lam: n eigenvalues in ascending order; V: n x n row-major, column i the
// eigenvector of lam[i] (V may be nullptr when only eigenvalues are wanted).
// Throws tl::ValueError if A has non-finite entries or QL does not converge.
void symmetric_eigh(const double* A, std::int64_t n, double* lam, double* V);

// Non-negative least squares in Gram form: x >= 0 minimising
// ½ xᵀ A x - bᵀ x (A symmetric positive semi-definite, n x n), by the
// Lawson-Hanson active-set method on the normal equations (Bro and de Jong's
// formulation). Subproblems are solved by Cholesky, or by the minimum-norm
// eigen solution when singular. Returns the number of outer iterations.
std::int64_t nnls_gram(const double* A, const double* b, std::int64_t n, std::int64_t max_iter, double* x);

// Elastic-net coordinate descent in Gram form (scikit-learn's
// enet_coordinate_descent_gram, without its screening, which changes the
// work, not the solution): minimises
//   ½ wᵀ Q w - qᵀ w + ½ y_norm2 + l1 ||w||₁ + ½ l2 ||w||²
// over w (d entries, in/out: the starting point). Coordinates are visited in
// order, or (random) in the order of the Philox draws integer(seed, 0,
// sweep * d + k, d). After a sweep whose largest relative coefficient change
// is at most tol (or the last one), the duality gap is computed; the run
// stops when it is at most tol * y_norm2. positive: w >= 0.
struct EnetResult {
  std::int64_t n_iter = 0;   // sweeps run (0 when the start already meets the gap)
  double gap = 0.0;          // final duality gap (unscaled)
  double tol = 0.0;          // tol * y_norm2
  bool converged = false;
};
EnetResult enet_coordinate_descent_gram(const double* Q, const double* q, double y_norm2, std::int64_t d, double l1,
                                        double l2, std::int64_t max_iter, double tol, bool positive, bool random,
                                        std::uint64_t seed, double* w);

// The parameters of enet_coordinate_descent_gram by name (the bindings fill
// this struct field by field); the overload below runs the same solver.
struct EnetParams {
  double l1 = 0.0;             // l1 penalty (scikit-learn's alpha * l1_ratio * n_samples)
  double l2 = 0.0;             // l2 penalty (alpha * (1 - l1_ratio) * n_samples)
  std::int64_t max_iter = 1000;  // sweeps
  double tol = 1e-4;           // relative to y_norm2
  bool positive = false;       // w >= 0
  bool random = false;         // coordinates in the order of the Philox draws
  std::uint64_t seed = 0;      // of those draws
};
inline EnetResult enet_coordinate_descent_gram(const double* Q, const double* q, double y_norm2, std::int64_t d,
                                               const EnetParams& p, double* w) {
  return enet_coordinate_descent_gram(Q, q, y_norm2, d, p.l1, p.l2, p.max_iter, p.tol, p.positive, p.random, p.seed,
                                      w);
}

}  // namespace tl::linalg

namespace tl {

// Options of solve_normal_equations (see docs/NUMERICS.md, "Linear solves").
struct NormalEquationsOptions {
  // Least squares: singular values of the design below tol * s_max count as
  // zero (scikit-learn's LinearRegression passes tol to lstsq as cond).
  // 0 for ridge systems.
  double tol = 0.0;
  // Relative accuracy of the Gram entries (64 * machine epsilon of the
  // data's dtype): eigenvalues below gram_eps * lam_max are noise.
  double gram_eps = 1.4210854715202004e-14;
  // "auto": Cholesky when well conditioned, else the eigen path;
  // "eigen": always the eigen path; "nnls": non-negative solution.
  enum class Method { Auto, Eigen, Nnls } method = Method::Auto;
  std::int64_t max_iter = 0;  // nnls outer iterations; 0: 3 * n_features
};

struct NormalEquationsInfo {
  std::int64_t rank = 0;      // numerical rank of the (penalised) system, all targets
  bool cholesky = true;       // every target was solved by Cholesky
  std::int64_t n_iter = 0;    // nnls iterations (largest over targets)
};

// Solves the normal equations of every target from the augmented Gram
// matrix G = [XᵀX XᵀY; YᵀX YᵀY] (D x D, D = d + t, from tl::gram):
//   (XᵀX + alpha_t I) coef_t = Xᵀy_t
// coef: t x d row-major (output). alpha: t penalties >= 0.
// Auto: per distinct alpha, Cholesky of the equilibrated system accepted
// when its condition estimate is below 0.01 / gram_eps and, with tol > 0,
// the unscaled estimate below 0.1 / tol²; otherwise the minimum-norm
// solution from the eigendecomposition of XᵀX, keeping the eigenvalues above
// max(tol², gram_eps) * lam_max (for alpha > 0: 1 / (lam + alpha) on them).
// Exactly zero columns (constant features) get coefficient 0.
NormalEquationsInfo solve_normal_equations(const double* G, std::int64_t d, std::int64_t t, const double* alpha,
                                           const NormalEquationsOptions& opt, double* coef);

}  // namespace tl
