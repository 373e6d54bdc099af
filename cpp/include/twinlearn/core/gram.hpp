// Cross-products of tall data: G = Zcᵀ Zc for Z = [X | Y], the Gram matrix
// XᵀWX, the cross-product XᵀWY and YᵀWY in one pass over the rows.
//
//   X: n x d, Y: n x t (t may be 0), Z = [X | Y]: n x D, D = d + t
//   Zc[i, c] = s_i * (Z[i, c] - offset[c]),  s_i = sqrt(w_i)
//   G[j, k]  = sum_i Zc[i, j] * Zc[i, k]     (D x D, symmetric)
//
// This is scikit-learn's preprocessing for linear models spelled out: the
// offsets (weighted column means when fitting an intercept, rounded to T) are
// subtracted in T, then the rows are scaled by sqrt(sample_weight) in T.
//
// Canonical order (docs/NUMERICS.md, "Linear solves"). The rows are cut into
// chunks of kGramChunk rows, a size fixed by the data alone. The entries of
// Zc are formed in T and widened to double (exactly). For every chunk c and
// every j <= k, the chunk partial is ONE fused multiply-add chain in double
// over the chunk's rows in increasing order, starting from +0.0:
//     p = +0.0;  for i in chunk c (ascending): p = fma(Zc[i, j], Zc[i, k], p)
// and the partials are merged over the chunks by the pairwise tree of
// twinlearn/core/tree.hpp (element-wise addition in double). G[k, j] is a
// copy of G[j, k]; NaN results are the canonical quiet NaN. The CPU backend
// (OpenMP over chunks, any thread count) and the CUDA backend (a block per
// (chunk, 128 x 128 output tile)) compute the same bits. Products of float32
// entries are exact in double, so for float32 data the Gram matrix is as
// accurate as for float64 data: the normal equations lose nothing more to
// the product than scikit-learn's float32 solvers lose to their own arithmetic.
//
// Memory is bounded by processing kGramBatchChunks chunks (a power of two) at
// a time: a full batch is a complete subtree of the canonical tree, so the
// batching changes nothing in the result.
//
// Modes. identical / deterministic: the canonical order on both backends.
// fast on CUDA: cuBLAS DGEMM (the upper triangle's blocks) over a centred,
// weighted copy of the rows widened to double (any summation order); the CPU backend runs the canonical order
// in every mode.
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/colstats.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numeric_mode.hpp"

namespace tl {

inline constexpr std::int64_t kGramChunk = 4096;
inline constexpr std::int64_t kGramBatchChunks = 256;

// X: n x d (host or the context's device); Y: n x t or empty (Y.data may be
// nullptr when t == 0); w: n weights or w.data == nullptr for unit weights.
// offset: D = d + t entries in host memory (nullptr: no centring).
// out: D x D doubles in host memory, row-major. Returns the mode the result
// honours (Identical for the canonical order, Fast for the cuBLAS path).
template <class T>
NumericMode gram(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                 const T* offset, double* out);

// The Gram matrix and the column statistics of Z = [X | Y], unit weights,
// for the linear models' fits. stats: D entries (column_stats of each column
// of Z, host memory); out as gram's: with `center`, (Z - m)ᵀ (Z - m) for the
// columns' means m, else ZᵀZ.
//   identical / deterministic, and the CPU backend in every mode: column_stats
//   of X and of Y, then gram with the offsets m rounded to T (the canonical
//   bits of both).
//   fast on CUDA (at most 4 targets, at most 512 columns of X): one pass
//   widens X - x0 to double for cuBLAS (x0: the first row) and sums its
//   columns and their products with the targets on the way; the centring
//   at the means, in double, follows on the host (zᵀz - s sᵀ / n), so X is
//   read once and the targets ride outside the DGEMM's tiles. Other shapes,
//   and data whose sums are not finite (NaN or infinity), take the two
//   passes: column_stats (which counts the NaN and infinities), then gram
//   (cuBLAS in fast mode).
// Returns the mode the result honours.
template <class T>
NumericMode gram_moments(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, bool center, double* out,
                         ColStat* stats);

// The same product computed with a caller-chosen chunk size (rows, > 0), on
// the CPU backend. Only for tests: a different chunking is a different
// canonical order, and the separating tests show that it changes the bits.
template <class T>
void gram_with_chunk_for_testing(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y,
                                 VectorView<const T> w, const T* offset, std::int64_t chunk, double* out);

}  // namespace tl
