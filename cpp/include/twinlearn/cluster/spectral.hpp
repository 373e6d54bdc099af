// Spectral clustering: the normalized affinity whose leading eigenvectors
// give the spectral embedding (scikit-learn's spectral_embedding with
// norm_laplacian=True).
//
// spectral_normalize(ctx, A, S, dd): A is the n x n symmetric affinity
// matrix, S an n x n output, dd n entries (host memory, double). With the
// degree of node i taken without its self-loop (SciPy's csgraph laplacian
// ignores the diagonal),
//
//   deg_i = sum_{j != i} A[i, j]   in double, in the canonical lane order of
//                                  twinlearn/core/lane_reduce.hpp over j
//   dd_i  = sqrt(deg_i), or 1 where deg_i == 0 (an isolated node)
//   S[i, j] = (A[i, j] / dd_j) / dd_i  (two IEEE divisions in double, then
//                                       rounded to T), i != j
//   S[i, i] = 1
//
// so S = 2 I - L for the normalized Laplacian L = I - D^-1/2 A D^-1/2 with
// its diagonal set to 1 (scikit-learn's _set_diag): the largest eigenvalues
// of S are the smallest of L, with the same eigenvectors, and S is positive
// semi-definite (its eigenvalues lie in [0, 2]). Every value is a fixed
// sequence of tl::num operations, so the CPU and any GPU give the same bits.
// A and S are on the host or on the context's device (the same for both);
// A must be finite and its degrees non-negative (ValueError otherwise).
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

template <class T>
void spectral_normalize(const Context& ctx, MatrixView<const T> A, MatrixView<T> S, double* dd);

}  // namespace tl
