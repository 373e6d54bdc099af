// Fixed-order dense factorizations on the host, for identical mode: a
// cyclic Jacobi symmetric eigensolver, a one-sided Jacobi (Hestenes) SVD and
// a Householder QR.
//
// LAPACK's kernels (chosen per CPU model by OpenBLAS and the like) order
// their sums differently, so their bits differ between machines. These
// routines fix every operation's order: element-wise updates (the same bits
// at any vector width, since the build's -ffp-contract=off forbids fusing
// them), dot products summed in kDotLanes interleaved lanes combined by a
// fixed tree, and sqrt and division, which IEEE rounds correctly. No libm
// function other than sqrt is called, nothing is multithreaded and nothing is
// built more than once (no function multiversioning), so the result is the
// same bits on every x86-64 CPU, for every TWINLEARN_CPU_ISA cap and thread
// count. They cost more than LAPACK (O(d^3) per sweep, a handful of sweeps):
// the decompositions use them for their small host steps in identical mode.
//
// Matrices are dense, row-major, host memory.
#pragma once
#include <cstdint>

namespace tl::jacobi {

// Sweeps before a solver gives up (cyclic Jacobi converges quadratically:
// 5 to 12 sweeps for well-behaved matrices of a few hundred rows).
inline constexpr int kMaxSweeps = 64;
// Interleaved partial sums of dot (below).
inline constexpr int kDotLanes = 8;

struct Result {
  int sweeps = 0;          // sweeps run (the last one found nothing to rotate when converged)
  bool converged = true;   // false: kMaxSweeps ran out
};

// x . y over n entries: lane l (0 <= l < kDotLanes) adds x[j] * y[j] for
// j = l, l + kDotLanes, ... in increasing j from 0.0; the lanes are combined
// by the halving tree (l with l + 4, then l with l + 2, then 0 with 1).
double dot(const double* x, const double* y, std::int64_t n);

// Eigenvalues and eigenvectors of the symmetric d x d matrix A (its upper
// triangle is read; A is not modified). w: d entries, descending, ties in
// the order of their diagonal position; V: d x d, column i the unit
// eigenvector of w[i] (signs as the rotations leave them: callers apply their
// sign rule). A non-finite entry anywhere in A: w and V all NaN, no sweep.
//
// Row-cyclic Jacobi: sweeps over the pairs (p, q), p < q, in row order; the
// rotation zeroing a_pq is computed as Rutishauser's (Golub & Van Loan,
// algorithm 8.5.1): theta = (a_qq - a_pp) / (2 a_pq),
// t = sign(theta) / (|theta| + sqrt(theta^2 + 1)) (sign(0) = +1;
// t = 1 / (2 theta) where theta^2 would overflow), c = 1 / sqrt(t^2 + 1),
// s = t c, tau = s / (1 + c). A pair is skipped when
// |a_pq| <= eps sqrt|a_pp| sqrt|a_qq| (off-diagonal negligible relative to its
// diagonal: the relative accuracy test of Demmel & Veselic) or
// |a_pq| <= eps^2 max|A| (negligible for the whole matrix). Converged: a
// sweep that skips every pair; at most max_sweeps sweeps.
Result sym_eigh(const double* A, std::int64_t d, double* w, double* V, int max_sweeps = kMaxSweeps);

// Thin SVD of the m x n matrix A = U diag(s) Vt, r = min(m, n): s: r entries,
// descending (ties in index order); U: m x r (nullptr: not computed), column
// j zero where s[j] == 0; Vt: r x n (nullptr: not computed). A non-finite
// entry in A: every output NaN, no sweep.
//
// One-sided Jacobi on the r vectors of length max(m, n) (A's columns when
// m >= n, else its rows): sweeps over the pairs (p, q), p < q, in row order,
// each rotating the pair to orthogonality with the formulas of sym_eigh
// applied to their 2 x 2 Gram matrix (alpha = |a_p|^2, beta = |a_q|^2,
// gamma = a_p . a_q, all by dot). A pair is skipped when
// |gamma| <= sqrt(max(m, n)) eps sqrt(alpha) sqrt(beta) (LAPACK dgesvj's
// test) or either vector is zero. The singular values are the final vectors'
// norms.
Result svd(const double* A, std::int64_t m, std::int64_t n, double* U, double* s, double* Vt,
           int max_sweeps = kMaxSweeps);

// Q (m x n, orthonormal columns) of the thin QR of the m x n matrix A,
// m >= n, by Householder reflections H_j = I - beta_j v_j v_j^T
// (v_j = x - alpha e_1 with alpha = -sign(x_1) |x|, sign(0) = +1; H_j = I
// where x = 0), accumulated backwards. Spans A's columns when A has full rank.
void qr_q(const double* A, std::int64_t m, std::int64_t n, double* Q);

}  // namespace tl::jacobi
