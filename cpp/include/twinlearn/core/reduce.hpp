// Canonical reductions (docs/NUMERICS.md, rule 1). Results are the same bits
// on the CPU and CUDA backends and for any thread count, block count or GPU.
//
// The canonical order of a reduction over n elements x[0..n) (a vector, or
// one column of a matrix, walked down its rows):
//
//   1. Chunks. x is cut into chunks of kReduceChunk = 2048 consecutive
//      elements; chunk c holds x[2048c .. min(2048(c+1), n)).
//   2. Lanes. A chunk has kReduceLanes = 256 lanes; lane l of chunk c owns the
//      elements 2048c + l + 256s for s = 0..7 (strided, so that 256 GPU threads
//      read consecutive addresses) and accumulates them sequentially in
//      increasing s, starting from the operation's identity. Lanes past the end
//      of the data keep the identity.
//   3. Lane tree. The 256 lane partials of a chunk are merged by the pairwise
//      tree of twinlearn/core/tree.hpp (level by level, p[i] = merge(p[2i],
//      p[2i+1])), giving the chunk partial.
//   4. Chunk tree. The chunk partials are merged by the same pairwise tree.
//
// The geometry depends on n alone. On the GPU a block of 256 threads computes
// a chunk (thread l = lane l) and the trees run as warp shuffles; the CPU
// evaluates the same lanes with vectorisable loops. Both give the same bits.
//
// Operations:
//   sum   accumulator Acc = T (reduce_sum) or double (reduce_sum_double, for
//         float input); lane step acc = add(acc, Acc(x)); merge = add. The
//         identity is -0.0, which is exact for IEEE addition (x + -0.0 == x
//         for every x, including +0.0), so padding lanes change nothing.
//   dot   lane step acc = fma(Acc(x), Acc(y), acc) (one rounding per element);
//         merge = add; identity -0.0.
//   min / max / argmin / argmax
//         exact selections, so their result does not depend on any order.
//         Ties go to the lowest index; -0.0 and +0.0 compare equal (the lower
//         index wins, its sign is kept). NaN: the first NaN (lowest index)
//         wins, as numpy's argmin/argmax; min/max therefore return NaN when
//         any element is NaN, as numpy's min/max.
//
// NaN results of every reduction are returned as the canonical quiet NaN
// (the CPU propagates NaN payloads, the GPU does not). The sum and dot of
// zero elements are +0.0; min/max/argmin/argmax of zero elements raise
// tl::ValueError, as numpy does.
//
// Every numeric mode uses this order (it costs little on either backend).
// Inputs may live on the host or on the context's device; results are written
// to host memory.
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/colstats.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

inline constexpr std::int64_t kReduceChunk = 2048;
inline constexpr std::int64_t kReduceLanes = 256;
inline constexpr std::int64_t kReduceLaneLen = kReduceChunk / kReduceLanes;  // 8

inline std::int64_t reduce_num_chunks(std::int64_t n) { return (n + kReduceChunk - 1) / kReduceChunk; }

// Per-column statistics of X (rows x cols, host or device), weighted by w
// (rows entries, host or device; w.data == nullptr means unit weights).
// out: cols entries, host memory. NaN entries are skipped, infinities counted.
// (Its own order: see twinlearn/core/colstats.hpp.)
template <class T>
void column_stats(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out);

// Sum of x (n entries), accumulated in T.
template <class T>
T reduce_sum(const Context& ctx, VectorView<const T> x);
// Sum of x, each element widened to double and accumulated in double.
template <class T>
double reduce_sum_double(const Context& ctx, VectorView<const T> x);

// Dot product of x and y (n entries each), accumulated in T.
template <class T>
T reduce_dot(const Context& ctx, VectorView<const T> x, VectorView<const T> y);
// Dot product with the elements widened to double and accumulated in double.
template <class T>
double reduce_dot_double(const Context& ctx, VectorView<const T> x, VectorView<const T> y);

template <class T>
T reduce_min(const Context& ctx, VectorView<const T> x);
template <class T>
T reduce_max(const Context& ctx, VectorView<const T> x);
template <class T>
std::int64_t reduce_argmin(const Context& ctx, VectorView<const T> x);
template <class T>
std::int64_t reduce_argmax(const Context& ctx, VectorView<const T> x);

// Column-wise reductions of X (rows x cols, host or device). Column j is
// reduced in the canonical order of the vector X[:, j], so column_sums(X)[j]
// has the bits of reduce_sum(X[:, j]). out: cols entries, host memory.
template <class T>
void column_sums(const Context& ctx, MatrixView<const T> X, T* out);
template <class T>
void column_sums_double(const Context& ctx, MatrixView<const T> X, double* out);
template <class T>
void column_min(const Context& ctx, MatrixView<const T> X, T* out);
template <class T>
void column_max(const Context& ctx, MatrixView<const T> X, T* out);
template <class T>
void column_argmin(const Context& ctx, MatrixView<const T> X, std::int64_t* out);
template <class T>
void column_argmax(const Context& ctx, MatrixView<const T> X, std::int64_t* out);

}  // namespace tl
