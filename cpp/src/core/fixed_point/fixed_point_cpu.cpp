// CPU backend of tl::fixed_histogram: rows split into parts, one private
// histogram per part, the parts added up. Integer sums are exact, so neither
// the split nor the thread count can change a bit.
#include <algorithm>
#include <vector>

#include "core/fixed_point/fixed_point_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
void fixed_histogram_cpu(const Context& ctx, MatrixView<const T> values, VectorView<const std::int32_t> bins,
                         std::int64_t n_bins, FixedScale scale, std::int64_t* out) {
  const std::int64_t rows = values.rows, nv = values.cols, width = n_bins * nv;
  const int value_bits = fixed_value_bits(rows);
  const std::int64_t parts = std::max<std::int64_t>(1, std::min<std::int64_t>(ctx.n_threads(), (rows + 4095) / 4096));
  // Unsigned: two's-complement wrap-around is defined, and the bound keeps
  // every true partial sum inside int64 anyway.
  std::vector<std::uint64_t> hist(static_cast<std::size_t>(parts * width), 0);
  std::vector<int> err(static_cast<std::size_t>(parts), 0);
  parallel_for(ctx, parts, [&](std::int64_t p) {
    const std::int64_t r0 = rows * p / parts, r1 = rows * (p + 1) / parts;
    std::uint64_t* h = hist.data() + p * width;
    for (std::int64_t i = r0; i < r1; ++i) {
      const std::int64_t b = bins[i];
      if (b < 0 || b >= n_bins) {
        err[p] |= kFixedBinOutOfRange;
        continue;
      }
      for (std::int64_t v = 0; v < nv; ++v) {
        const double s = fixed_detail::scaled(static_cast<double>(values(i, v)), scale.exponent);
        if (!fixed_in_range(s, value_bits)) {
          err[p] |= kFixedValueOutOfRange;
          continue;
        }
        h[b * nv + v] += static_cast<std::uint64_t>(fixed_round(s));
      }
    }
  });
  int code = 0;
  for (int e : err) code |= e;
  if (code) throw_fixed_histogram_error(code, rows, scale);
  parallel_for(ctx, width, [&](std::int64_t k) {
    std::uint64_t s = 0;
    for (std::int64_t p = 0; p < parts; ++p) s += hist[p * width + k];
    out[k] = static_cast<std::int64_t>(s);
  });
}

template void fixed_histogram_cpu<float>(const Context&, MatrixView<const float>, VectorView<const std::int32_t>,
                                         std::int64_t, FixedScale, std::int64_t*);
template void fixed_histogram_cpu<double>(const Context&, MatrixView<const double>, VectorView<const std::int32_t>,
                                          std::int64_t, FixedScale, std::int64_t*);

}  // namespace tl::detail
