// The canonical matrix product (docs/NUMERICS.md, rule 7).
//
//   transpose_b == false:  C = A · B     A: m x k, B: k x n, C: m x n
//   transpose_b == true:   C = A · Bᵀ    A: m x k, B: n x k, C: m x n
//
// Order. Every C[i, j] is ONE fused multiply-add chain over p = 0, 1, ...,
// k-1 in increasing order, starting from +0.0:
//     acc = +0.0;  for p in 0..k-1: acc = fma(A[i, p], B[p, j] (or B[j, p]), acc);
//     C[i, j] = acc  (a NaN result is stored as the canonical quiet NaN)
// computed in T (float or double). The chain of one element does not depend on
// how the product is tiled, blocked, vectorised or parallelised, so the CPU
// backend (blocked, vectorised loops, any thread count) and the CUDA backend
// (a tiled shared-memory kernel, any GPU) produce the same bits.
//
// Modes. In identical and deterministic mode both backends run the canonical
// product. In fast mode the CUDA backend calls cuBLAS (SGEMM/DGEMM with the
// default math mode, so no TF32): faster, not canonical; the CPU backend runs
// the canonical product in every mode.
//
// Memory. A, B and C may live on the host or on the context's device (any
// mix); the CUDA backend copies host operands in and the result out. Views
// may be strided on the host; CUDA arrays must be C-contiguous. C must not
// overlap A or B. m, n or k may be 0 (k == 0 gives C = +0.0).
#pragma once
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

template <class T>
void gemm(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, bool transpose_b, MatrixView<T> C);

}  // namespace tl
