#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/column_stats/column_stats_impl.hpp"
#include "core/cpu/float_bits.hpp"
#include "core/cpu/cpu_clones.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {
namespace {

using colstats_detail::ChunkAcc;

using Bits = FloatBits<double>;

// v where mask is all ones, +0.0 where it is zero.
inline double keep_where(double v, std::uint64_t mask) { return Bits::from(Bits::bits(v) & mask); }

// The chunk sums of colstats.hpp's push() for rows with unit column stride,
// all columns side by side and without branches, so that the loop over the
// columns vectorizes (the lanes hold different columns; each column's sums
// still see its rows in order). Per column the shift k (the chunk's first
// finite value) is found first; then every row adds, for a finite entry,
// exactly push()'s terms, and for a NaN or an infinity +0.0 to each sum,
// which changes nothing: the sums start at +0.0 and a rounded sum is -0.0
// only when both terms are, so they never hold -0.0, and s + (+0.0) == s
// bit for bit for every other s, NaN and infinities included. The entries
// are classified and the terms masked by bit operations
// (core/cpu/float_bits.hpp), so the loop vectorizes.
template <class T>
TL_CPU_CLONES void chunk_sums_unit_stride(const T* __restrict x, std::int64_t ld, std::int64_t rows,
                                          std::int64_t cols, const T* __restrict w, double* __restrict k,
                                          double* __restrict s0, double* __restrict s1, double* __restrict s2,
                                          std::int64_t* __restrict n, std::int64_t* __restrict n_inf) {
  for (std::int64_t j = 0; j < cols; ++j) {
    k[j] = 0.0;
    for (std::int64_t i = 0; i < rows; ++i) {
      const double v = static_cast<double>(x[i * ld + j]);
      if (Bits::is_finite(Bits::bits(v))) {
        k[j] = v;
        break;
      }
    }
    s0[j] = s1[j] = s2[j] = 0.0;
    n[j] = n_inf[j] = 0;
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    const T* __restrict row = x + i * ld;
    const double wi = w ? static_cast<double>(w[i]) : 1.0;
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = static_cast<double>(row[j]);
      const std::uint64_t b = Bits::bits(v), fin = Bits::is_finite(b), inf = Bits::is_inf(b);
      const double d = keep_where(v - k[j], 0 - fin);
      const double ws = keep_where(wi, 0 - fin);
      const double wd = ws * d;
      s0[j] = s0[j] + ws;
      s1[j] = s1[j] + wd;
      s2[j] = s2[j] + wd * d;
      n[j] += static_cast<std::int64_t>(fin);
      n_inf[j] += static_cast<std::int64_t>(inf);
    }
  }
}

}  // namespace

template <class T>
void column_stats_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out) {
  using namespace colstats_detail;
  const std::int64_t rows = X.rows, cols = X.cols;
  if (cols == 0) return;
  const std::int64_t nchunks = colstats_num_chunks(rows);
  if (nchunks == 0) {
    for (std::int64_t j = 0; j < cols; ++j) out[j] = ColStat{};
    return;
  }
  // partials[j * nchunks + c]: column j, chunk c.
  std::vector<ColStat> partials(static_cast<std::size_t>(nchunks * cols));
  const bool unit = X.col_stride == 1 && (!w.data || w.stride == 1);
  // One task per chunk; the rows of a chunk are walked in order, all columns
  // side by side, so each column sees exactly the canonical sequence.
  parallel_for(ctx, nchunks, [&](std::int64_t c) {
    const std::int64_t r0 = c * kColStatsChunk;
    const std::int64_t r1 = std::min(rows, r0 + kColStatsChunk);
    std::vector<ChunkAcc> acc(static_cast<std::size_t>(cols));
    if (unit) {
      std::vector<double> sums(static_cast<std::size_t>(4 * cols));
      std::vector<std::int64_t> counts(static_cast<std::size_t>(2 * cols));
      double* k = sums.data();
      chunk_sums_unit_stride(X.data + r0 * X.row_stride, X.row_stride, r1 - r0, cols, w.data ? w.data + r0 : nullptr,
                             k, k + cols, k + 2 * cols, k + 3 * cols, counts.data(), counts.data() + cols);
      for (std::int64_t j = 0; j < cols; ++j) {
        ChunkAcc& a = acc[j];
        a.k = k[j];
        a.s0 = k[cols + j];
        a.s1 = k[2 * cols + j];
        a.s2 = k[3 * cols + j];
        a.n = counts[j];
        a.n_inf = counts[cols + j];
        a.have_k = a.n > 0;
      }
    } else {
      for (std::int64_t i = r0; i < r1; ++i) {
        const double wi = w.data ? static_cast<double>(w[i]) : 1.0;
        for (std::int64_t j = 0; j < cols; ++j) push(acc[j], static_cast<double>(X(i, j)), wi);
      }
    }
    for (std::int64_t j = 0; j < cols; ++j) partials[j * nchunks + c] = finish(acc[j]);
  });
  parallel_for(ctx, cols, [&](std::int64_t j) {
    ColStat* p = partials.data() + j * nchunks;
    tree_reduce_inplace(p, nchunks, 1, [](const ColStat& a, const ColStat& b) { return merge(a, b); });
    out[j] = p[0];
  });
}

template void column_stats_cpu<float>(const Context&, MatrixView<const float>, VectorView<const float>, ColStat*);
template void column_stats_cpu<double>(const Context&, MatrixView<const double>, VectorView<const double>, ColStat*);

}  // namespace tl::detail
