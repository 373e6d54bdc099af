#include <algorithm>
#include <vector>

#include "core/column_extrema/column_extrema_impl.hpp"
#include "core/cpu/cpu_clones.hpp"
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/ties.hpp"

namespace tl::detail {
namespace {

// One chunk's extrema of rows r0..r1 (contiguous rows of `cols` values), the
// rule's result without a branch per value: per column the smallest and
// largest ties::total_order_key (-0 below +0), the largest |x| bits and the
// non-NaN count, so the loop over a row's columns vectorizes. The same
// values as push() on each entry.
template <class T>
TL_CPU_CLONES void chunk_extrema(const T* __restrict__ X, std::int64_t ld, std::int64_t r0, std::int64_t r1,
                                 std::int64_t cols, typename num::math_detail::Fmt<T>::U* __restrict__ kmin,
                                 typename num::math_detail::Fmt<T>::U* __restrict__ kmax,
                                 typename num::math_detail::Fmt<T>::U* __restrict__ amax,
                                 std::int64_t* __restrict__ cnt) {
  using F = num::math_detail::Fmt<T>;
  using U = typename F::U;
  constexpr U kTop = ~U(0), kBottom = 0;  // above / below the key of every non-NaN value
  for (std::int64_t j = 0; j < cols; ++j) {
    kmin[j] = kTop;
    kmax[j] = kBottom;
    amax[j] = 0;
    cnt[j] = 0;
  }
  for (std::int64_t i = r0; i < r1; ++i) {
    const T* row = X + i * ld;
    for (std::int64_t j = 0; j < cols; ++j) {
      const U a = F::bits(row[j]) & ~F::SIGN;
      const bool ok = a <= F::INF;  // not NaN
      const U k = ties::total_order_key(row[j]);
      const U lo = ok ? k : kTop, hi = ok ? k : kBottom;
      kmin[j] = lo < kmin[j] ? lo : kmin[j];
      kmax[j] = hi > kmax[j] ? hi : kmax[j];
      const U av = ok ? a : U(0);
      amax[j] = av > amax[j] ? av : amax[j];
      cnt[j] += ok;
    }
  }
}

}  // namespace

template <class T>
void column_extrema_cpu(const Context& ctx, MatrixView<const T> X, ColExtrema* out) {
  using namespace extrema_detail;
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  const std::int64_t rows = X.rows, cols = X.cols;
  const std::int64_t nchunks = colstats_num_chunks(rows);
  // partials[j * nchunks + c]: column j, chunk c (the geometry of column_stats).
  std::vector<ColExtrema> partials(static_cast<std::size_t>(nchunks * cols));
  const bool contiguous = X.col_stride == 1 || cols <= 1;
  parallel_for(ctx, nchunks, [&](std::int64_t c) {
    const std::int64_t r0 = c * kColStatsChunk;
    const std::int64_t r1 = std::min(rows, r0 + kColStatsChunk);
    if (contiguous) {
      using F = num::math_detail::Fmt<T>;
      std::vector<typename F::U> kmin(static_cast<std::size_t>(cols)), kmax(static_cast<std::size_t>(cols)),
          amax(static_cast<std::size_t>(cols));
      std::vector<std::int64_t> cnt(static_cast<std::size_t>(cols));
      chunk_extrema<T>(X.data, X.row_stride, r0, r1, cols, kmin.data(), kmax.data(), amax.data(), cnt.data());
      for (std::int64_t j = 0; j < cols; ++j) {
        ColExtrema e;  // n == 0: the empty partial push() leaves
        if (cnt[j] > 0) {
          e.min = static_cast<double>(ties::from_total_order_key<T>(kmin[j]));
          e.max = static_cast<double>(ties::from_total_order_key<T>(kmax[j]));
          e.max_abs = static_cast<double>(F::from(amax[j]));
          e.n = cnt[j];
        }
        partials[j * nchunks + c] = e;
      }
      return;
    }
    std::vector<ColExtrema> acc(static_cast<std::size_t>(cols));
    for (std::int64_t i = r0; i < r1; ++i)
      for (std::int64_t j = 0; j < cols; ++j) push(acc[j], static_cast<double>(X(i, j)));
    for (std::int64_t j = 0; j < cols; ++j) partials[j * nchunks + c] = acc[j];
  });
  parallel_for(ctx, cols, [&](std::int64_t j) {
    // Chunk order, as the CUDA backend; the rule makes any order give these bits.
    ColExtrema acc;
    for (std::int64_t c = 0; c < nchunks; ++c) acc = merge(acc, partials[j * nchunks + c]);
    out[j] = finish(acc);
  });
}

template void column_extrema_cpu<float>(const Context&, MatrixView<const float>, ColExtrema*);
template void column_extrema_cpu<double>(const Context&, MatrixView<const double>, ColExtrema*);

}  // namespace tl::detail
