// Matrix products with either operand transposed, and the row preparation
// (centring, weighting, transposition) that Gram products of tall data need.
//
// Shapes (row-major views; op(M) is M or Mᵀ):
//   matmul:  C = op(A) · op(B)     op(A): m x k, op(B): k x n, C: m x n
//   prepare: Z[i, j] = (X[i, j] - offset[j]) * sqrt(w[i])     X, Z: n x d
//            written as Z (n x d) or as Zᵀ (d x n)
//
// Order. matmul is the canonical GEMM of twinlearn/core/gemm.hpp: every
// C[i, j] is one fma chain over p = 0..k-1 in increasing order, in T. A
// transposed A is first copied into a contiguous Aᵀ (a copy is exact), so
// the chain, and the bits, are the same as tl::gemm on that copy, on both
// backends and for any thread count. prepare is elementwise: each entry is
// one IEEE subtraction in T, then one multiplication by sqrt(w[i]) rounded to
// T (IEEE sqrt), spelled out (twinlearn/core/numerics.hpp).
//
// Modes. identical and deterministic: the canonical product on both
// backends. fast on the CUDA backend: cuBLAS (SGEMM/DGEMM, no TF32) with the
// transpositions passed to it, without copies; the CPU backend runs the
// canonical product in every mode. The return value is the mode the result
// honours: NumericMode::Identical for the canonical product, Fast for cuBLAS.
//
// Memory. Operands may live on the host or on the context's device (any
// mix); CUDA arrays must be C-contiguous; C and Z must not overlap the
// inputs. offset (d entries) and w (n entries) are host memory for offset and
// host or device memory for w (where X lives); either may be null.
#pragma once
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numeric_mode.hpp"

namespace tl::linalg {

template <class T>
NumericMode matmul(const Context& ctx, MatrixView<const T> A, bool transpose_a, MatrixView<const T> B,
                   bool transpose_b, MatrixView<T> C);

// Z = (X - offset) * sqrt(w) by rows; out is n x d, or d x n when transpose.
// w must be finite and >= 0 (checked by the caller).
template <class T>
void prepare_rows(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset, bool transpose,
                  MatrixView<T> out);

}  // namespace tl::linalg
