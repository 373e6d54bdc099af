// CPU backend of the gradient-boosted trees: borders and bins. Each
// feature's borders from a sorted sample of its values, then every value's bin.
#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"
#include "ensemble/gbdt/gbdt_weighted_borders.hpp"
#include "twinlearn/core/ties.hpp"

namespace tl::gbdt_cpu {

template <class T>
std::vector<std::int64_t> count_nan(const Context& ctx, MatrixView<const T> X, GbdtNanMode nan_mode) {
  const std::int64_t n = X.rows, F = X.cols, nb = ceil_div(n, kRowBlock);
  std::vector<std::int64_t> part(static_cast<std::size_t>(nb * (F + 1)), 0);
  pfor(ctx, nb, n * F, [&](std::int64_t b) {
    std::int64_t* c = part.data() + b * (F + 1);
    const std::int64_t r1 = std::min(n, (b + 1) * kRowBlock);
    for (std::int64_t i = b * kRowBlock; i < r1; ++i)
      for (std::int64_t f = 0; f < F; ++f) {
        const T v = X(i, f);
        c[f] += num::is_nan(v);
        c[F] += num::is_inf(v);
      }
  });
  std::vector<std::int64_t> nan(static_cast<std::size_t>(F + 1), 0);
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t f = 0; f <= F; ++f) nan[f] += part[b * (F + 1) + f];
  TL_REQUIRE(nan[F] == 0, ValueError, "Input X contains infinity or a value too large for dtype('float64').");
  if (nan_mode == GbdtNanMode::Forbidden)
    for (std::int64_t f = 0; f < F; ++f)
      TL_REQUIRE(nan[f] == 0, ValueError, "Input X contains NaN (feature ", f, ") and nan_mode is 'Forbidden'.");
  nan.resize(static_cast<std::size_t>(F));
  return nan;
}

namespace {

// keys sorted ascending by an LSD radix sort, 11 bits a pass; passes whose
// digit is the same for every key are skipped.
template <class K>
void radix_sort(std::vector<K>& keys, std::vector<K>& tmp) {
  const std::size_t m = keys.size();
  tmp.resize(m);
  constexpr int kBits = 11, kBuckets = 1 << kBits;
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < static_cast<int>(8 * sizeof(K)); shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t i = 0; i < m; ++i) ++count[(keys[i] >> shift) & (kBuckets - 1)];
    if (m == 0 || count[(keys[0] >> shift) & (kBuckets - 1)] == m) continue;  // one digit: nothing moves
    std::size_t pos = 0;
    for (int d = 0; d < kBuckets; ++d) {
      const std::size_t c = count[d];
      count[d] = pos;
      pos += c;
    }
    for (std::size_t i = 0; i < m; ++i) tmp[count[(keys[i] >> shift) & (kBuckets - 1)]++] = keys[i];
    keys.swap(tmp);
  }
}

// v sorted ascending (non-NaN values, no -0: canonical_key's, each a value
// of type T), by radix_sort on their ties::total_order_key as T: a float's
// key is half a double's and takes three passes instead of four, and the
// order is the same, float -> double being exact and increasing. Equal
// values are equal bits here, so the sorted array is the one std::sort
// gives: the borders do not depend on the sorting method. (std::sort took
// about an eighth of the CPU fit of 200k x 28 rows, 100 trees of depth 6.)
template <class T>
void sort_sample(std::vector<double>& v) {
  using K = typename num::math_detail::Fmt<T>::U;
  std::vector<K> keys(v.size()), tmp;
  for (std::size_t i = 0; i < v.size(); ++i) keys[i] = ties::total_order_key(static_cast<T>(v[i]));
  radix_sort(keys, tmp);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(ties::from_total_order_key<T>(keys[i]));
}

}  // namespace

template <class T>
Borders compute_borders(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode,
                        const double* w) {
  const std::int64_t n = X.rows;
  const int F = static_cast<int>(X.cols);
  Borders B;
  B.F = F;
  B.nan_max = nan_mode == GbdtNanMode::Max;
  // Slots past a feature's borders hold +inf, so bin_matrix can search them
  // as they are (gbdt::bin_of_padded).
  B.padded.assign(static_cast<std::size_t>(F) * kMaxBordersPadded, num::double_from_bits(0x7ff0000000000000ULL));
  B.count.assign(static_cast<std::size_t>(F), 0);
  const std::vector<std::int64_t> nan = count_nan(ctx, X, nan_mode);
  const std::int64_t S = std::min<std::int64_t>(n, gbdt::kBorderSample);
  if (w) {
    pfor(ctx, F, S * F * 16, [&](std::int64_t f) {
      B.count[f] = gbdt::weighted_feature_borders(X, w, f, border_count, nan_mode,
                                                  B.padded.data() + f * kMaxBordersPadded);
    });
    return B;
  }
  pfor(ctx, F, S * F * 16, [&](std::int64_t f) {
    std::vector<double> v;
    v.reserve(static_cast<std::size_t>(S));
    for (std::int64_t k = 0; k < S; ++k) {
      const std::int64_t row = n <= gbdt::kBorderSample ? k : k * n / S;
      const double x = gbdt::canonical_key(static_cast<double>(X(row, f)));
      if (!num::is_nan(x)) v.push_back(x);
    }
    sort_sample<T>(v);
    const std::int64_t m = static_cast<std::int64_t>(v.size());
    std::vector<std::int32_t> bpos;
    for (std::int64_t i = 1; i < m; ++i)
      if (v[i - 1] < v[i]) bpos.push_back(static_cast<std::int32_t>(i));
    const bool has_nan = nan[f] > 0;
    const int maxb = has_nan ? std::min(border_count, kMaxBordersPadded - 2) : border_count;
    double* out = B.padded.data() + f * kMaxBordersPadded;
    // NaN's own bin: below every value (Min, Learned) or above (Max).
    const bool nan_low = nan_mode != GbdtNanMode::Max;
    int c = gbdt::select_borders(v.data(), m, bpos.data(), static_cast<std::int32_t>(bpos.size()), maxb,
                                 has_nan && nan_low ? out + 1 : out);
    B.count[f] = has_nan ? gbdt::add_nan_border(out, c, nan_low) : c;
  });
  return B;
}

// Feature-major bins: bins[f * n + i]. Each value's bin is gbdt::bin_of,
// found by gbdt::bin_of_padded over the feature's padded borders (+inf past
// the count, compute_borders) up to the smallest power of two above the
// count; the data are finite or NaN (infinities were refused).
template <class T>
void bin_matrix(const Context& ctx, MatrixView<const T> X, const Borders& B, std::vector<std::uint8_t>& bins) {
  const std::int64_t n = X.rows, F = X.cols;
  bins.assign(static_cast<std::size_t>(n * F), 0);
  pfor(ctx, ceil_div(n, kRowBlock), n * F, [&](std::int64_t b) {
    const std::int64_t r1 = std::min(n, (b + 1) * kRowBlock);
    for (std::int64_t f = 0; f < F; ++f) {
      const double* bf = B.padded.data() + f * kMaxBordersPadded;
      int P = 1;
      while (P < B.count[f] + 1) P *= 2;
      const int nan_bin = B.nan_max ? B.count[f] : 0;
      std::uint8_t* col = bins.data() + f * n;
      for (std::int64_t i = b * kRowBlock; i < r1; ++i)
        col[i] = static_cast<std::uint8_t>(gbdt::bin_of_padded(static_cast<double>(X(i, f)), bf, P, nan_bin));
    }
  });
}

std::vector<std::uint8_t> row_major(const Context& ctx, const std::vector<std::uint8_t>& bins, std::int64_t n, int F) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n * F));
  pfor(ctx, ceil_div(n, kRowBlock), n * F, [&](std::int64_t b) {
    const std::int64_t r1 = std::min(n, (b + 1) * kRowBlock);
    for (std::int64_t f = 0; f < F; ++f) {
      const std::uint8_t* col = bins.data() + f * n;
      for (std::int64_t i = b * kRowBlock; i < r1; ++i) out[static_cast<std::size_t>(i * F + f)] = col[i];
    }
  });
  return out;
}

#define TL_GBDT_INSTANTIATE(T)                                                                       \
  template std::vector<std::int64_t> count_nan<T>(const Context&, MatrixView<const T>, GbdtNanMode); \
  template Borders compute_borders<T>(const Context&, MatrixView<const T>, int, GbdtNanMode,         \
                                     const double*);                                                 \
  template void bin_matrix<T>(const Context&, MatrixView<const T>, const Borders&,                   \
                              std::vector<std::uint8_t>&);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::gbdt_cpu

namespace tl::detail {

template <class T>
GbdtModel gbdt_borders_cpu(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode) {
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  gbdt_cpu::Borders B = gbdt_cpu::compute_borders(ctx, X, border_count, nan_mode, nullptr);
  GbdtModel m;
  gbdt::set_borders(m, B.F, B.padded, B.count);
  return m;
}

#define TL_GBDT_INSTANTIATE(T)                                                                   \
  template GbdtModel gbdt_borders_cpu<T>(const Context&, MatrixView<const T>, int, GbdtNanMode);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::detail
