// CPU backend of the canonical reductions: one task per chunk (or per chunk
// and column tile), lanes evaluated with loops the compiler can vectorise,
// then the canonical trees. No result depends on which thread ran a task.
#include <algorithm>
#include <vector>

#include "core/cpu/cpu_clones.hpp"
#include "core/reduce/reduce_common.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {
namespace {

using namespace reduce_detail;

// Columns per task for matrices: lanes of kTile columns side by side, so that
// each row of a chunk is read once and contiguously.
constexpr std::int64_t kTile = 64;

template <class Op>
void merge_tree(typename Op::acc_type* p, std::int64_t n, std::int64_t stride) {
  using Acc = typename Op::acc_type;
  tree_reduce_inplace(p, n, stride, [](const Acc& a, const Acc& b) { return Op::merge(a, b); });
}

// argmin/argmax of one chunk, computed directly: the selection is exact, so
// any scan that finds the best element under the total order of ArgOp (first
// NaN; else the extreme value, lowest index on ties) gives the canonical
// result. Two passes over a chunk that stays in cache (three when it holds a
// NaN); the first is vectorisable.
template <class Op, class Get>
inline __attribute__((always_inline)) typename Op::acc_type select_scan(Get get, std::int64_t base,
                                                                        std::int64_t m) {
  using T = typename Op::value_type;
  // Pass 1: the extreme value and whether there is a NaN, with kW running
  // extremes side by side (elementwise, so vectorisable). Which of two equal
  // values (-0.0, +0.0) a running extreme keeps does not matter: pass 2 looks
  // for the first element equal to it.
  constexpr std::int64_t kW = 16;
  T ext[kW];
  int nan[kW];
  for (std::int64_t j = 0; j < kW; ++j) {
    ext[j] = get(0);
    nan[j] = 0;
  }
  std::int64_t k = 0;
  for (; k + kW <= m; k += kW) {
    for (std::int64_t j = 0; j < kW; ++j) {
      const T v = get(k + j);
      nan[j] |= num::is_nan(v);
      ext[j] = (Op::kIsMax ? v > ext[j] : v < ext[j]) ? v : ext[j];
    }
  }
  for (; k < m; ++k) {
    const T v = get(k);
    nan[0] |= num::is_nan(v);
    ext[0] = (Op::kIsMax ? v > ext[0] : v < ext[0]) ? v : ext[0];
  }
  int any_nan = 0;
  T best = ext[0];
  for (std::int64_t j = 0; j < kW; ++j) {
    any_nan |= nan[j];
    best = (Op::kIsMax ? ext[j] > best : ext[j] < best) ? ext[j] : best;
  }
  // Pass 2: the first NaN, or the first element equal to the extreme.
  if (any_nan) {
    for (k = 0; k < m; ++k)
      if (num::is_nan(get(k))) return {get(k), base + k};
  }
  k = 0;
  while (!(get(k) == best)) ++k;
  return {get(k), base + k};
}

template <class Op>
TL_CPU_CLONES typename Op::acc_type select_chunk(const typename Op::value_type* x, std::int64_t xs,
                                                 std::int64_t base, std::int64_t m) {
  const typename Op::value_type* p = x + base * xs;
  if (xs == 1) return select_scan<Op>([p](std::int64_t k) { return p[k]; }, base, m);
  return select_scan<Op>([p, xs](std::int64_t k) { return p[k * xs]; }, base, m);
}

// The canonical tree over the 256 lane partials of a chunk: the pairing of
// tree.hpp (level by level, merge(p[2i], p[2i+1])), written with two buffers
// so that each level is a loop the compiler can vectorise.
template <class Op>
typename Op::acc_type lane_tree(typename Op::acc_type* lanes) {
  using Acc = typename Op::acc_type;
  Acc tmp[kReduceLanes / 2];
  Acc* src = lanes;
  Acc* dst = tmp;
  for (std::int64_t n = kReduceLanes; n > 1; n /= 2) {
    for (std::int64_t i = 0; i < n / 2; ++i) dst[i] = Op::merge(src[2 * i], src[2 * i + 1]);
    Acc* t = src;
    src = dst;
    dst = t;
  }
  return src[0];
}

// The partial of one chunk of a vector: x[(base + k) * xs] (and y) for k < m,
// of a vector of n elements.
template <class Op>
TL_CPU_CLONES typename Op::acc_type chunk_vector(const typename Op::value_type* x, std::int64_t xs,
                                                 const typename Op::value_type* y, std::int64_t ys,
                                                 std::int64_t base, std::int64_t m, std::int64_t n) {
  using T = typename Op::value_type;
  using Acc = typename Op::acc_type;
  static_assert(kReduceLanes == 256, "lane_tree is written for 256 lanes (a power of two)");
  Acc lanes[kReduceLanes];
  for (std::int64_t l = 0; l < kReduceLanes; ++l) lanes[l] = Op::identity();
  const bool contiguous = xs == 1 && (!Op::kBinary || ys == 1);
  if (m == kReduceChunk && contiguous) {
    // Full contiguous chunk, read in order: for each s, lanes 0..255 read 256
    // consecutive elements and no iteration depends on another. The lanes
    // alternate with the data in the load stream, which hides the stream from
    // the hardware prefetcher: the data kPrefetch elements ahead is asked
    // for explicitly.
    constexpr std::int64_t kPrefetch = 16 * kReduceChunk;
    constexpr std::int64_t kLine = 64 / static_cast<std::int64_t>(sizeof(T));
    for (std::int64_t s = 0; s < kReduceLaneLen; ++s) {
      const std::int64_t off = base + s * kReduceLanes;
      if (off + kPrefetch + kReduceLanes <= n) {
        for (std::int64_t q = 0; q < kReduceLanes; q += kLine) {
          __builtin_prefetch(x + off + kPrefetch + q);
          if constexpr (Op::kBinary) __builtin_prefetch(y + off + kPrefetch + q);
        }
      }
      const T* xp = x + off;
      if constexpr (Op::kBinary) {
        const T* yp = y + off;
        for (std::int64_t l = 0; l < kReduceLanes; ++l) Op::push(lanes[l], xp[l], yp[l], off + l);
      } else {
        for (std::int64_t l = 0; l < kReduceLanes; ++l) Op::push(lanes[l], xp[l], T(0), off + l);
      }
    }
  } else {
    for (std::int64_t k = 0; k < m; ++k) {
      const std::int64_t i = base + k;
      const T yv = Op::kBinary ? y[i * ys] : T(0);
      Op::push(lanes[k % kReduceLanes], x[i * xs], yv, i);
    }
  }
  return lane_tree<Op>(lanes);
}

// The partials of one chunk (rows base..base+m) of columns c0..c0+tw of X.
// lanes: kReduceLanes * tw scratch, lane l of column c at lanes[l * tw + c].
template <class Op>
TL_CPU_CLONES void chunk_tile(MatrixView<const typename Op::value_type> X, std::int64_t base, std::int64_t m,
                              std::int64_t c0, std::int64_t tw, typename Op::acc_type* lanes,
                              typename Op::acc_type* out) {
  using T = typename Op::value_type;
  for (std::int64_t i = 0; i < kReduceLanes * tw; ++i) lanes[i] = Op::identity();
  // Rows in increasing order: row base + k feeds lane k % 256, so every lane
  // sees its elements in increasing s.
  for (std::int64_t k = 0; k < m; ++k) {
    const std::int64_t r = base + k;
    const T* row = X.data + r * X.row_stride + c0 * X.col_stride;
    typename Op::acc_type* lk = lanes + (k % kReduceLanes) * tw;
    if (X.col_stride == 1) {
      for (std::int64_t c = 0; c < tw; ++c) Op::push(lk[c], row[c], T(0), r);
    } else {
      for (std::int64_t c = 0; c < tw; ++c) Op::push(lk[c], row[c * X.col_stride], T(0), r);
    }
  }
  for (std::int64_t c = 0; c < tw; ++c) {
    merge_tree<Op>(lanes + c, kReduceLanes, tw);
    out[c] = lanes[c];
  }
}

}  // namespace

template <class Op>
void reduce_cpu(const Context& ctx, MatrixView<const typename Op::value_type> X,
                MatrixView<const typename Op::value_type> Y, typename Op::acc_type* out) {
  using Acc = typename Op::acc_type;
  const std::int64_t rows = X.rows, cols = X.cols;
  const std::int64_t nchunks = reduce_num_chunks(rows);
  // partials[j * nchunks + c]: column j, chunk c.
  std::vector<Acc> partials(static_cast<std::size_t>(nchunks * cols));
  if (cols == 1) {
    parallel_for(ctx, nchunks, [&](std::int64_t c) {
      const std::int64_t base = c * kReduceChunk;
      if constexpr (Op::kSelect) {
        partials[c] = select_chunk<Op>(X.data, X.row_stride, base, std::min(kReduceChunk, rows - base));
        return;
      }
      partials[c] = chunk_vector<Op>(X.data, X.row_stride, Y.data, Y.row_stride, base,
                                     std::min(kReduceChunk, rows - base), rows);
    });
  } else {
    const std::int64_t ntiles = (cols + kTile - 1) / kTile;
    parallel_for(ctx, nchunks * ntiles, [&](std::int64_t t) {
      const std::int64_t c = t / ntiles, c0 = (t % ntiles) * kTile;
      const std::int64_t tw = std::min(kTile, cols - c0);
      const std::int64_t base = c * kReduceChunk;
      std::vector<Acc> lanes(static_cast<std::size_t>(kReduceLanes * tw));
      Acc res[kTile];
      chunk_tile<Op>(X, base, std::min(kReduceChunk, rows - base), c0, tw, lanes.data(), res);
      for (std::int64_t j = 0; j < tw; ++j) partials[(c0 + j) * nchunks + c] = res[j];
    });
  }
  parallel_for(ctx, cols, [&](std::int64_t j) {
    merge_tree<Op>(partials.data() + j * nchunks, nchunks, 1);
    out[j] = partials[j * nchunks];
  });
}

#define TL_INSTANTIATE_REDUCE_CPU(...)                                                 \
  template void reduce_cpu<__VA_ARGS__>(const Context&, MatrixView<const __VA_ARGS__::value_type>, \
                                        MatrixView<const __VA_ARGS__::value_type>, __VA_ARGS__::acc_type*);
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::SumOp<float, float>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::SumOp<float, double>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::SumOp<double, double>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::DotOp<float, float>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::DotOp<float, double>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::DotOp<double, double>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::ArgMinOp<float>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::ArgMinOp<double>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::ArgMaxOp<float>)
TL_INSTANTIATE_REDUCE_CPU(reduce_detail::ArgMaxOp<double>)
#undef TL_INSTANTIATE_REDUCE_CPU

}  // namespace tl::detail
