#include <algorithm>
#include <utility>
#include <vector>

#include "core/random/random_impl.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl {

template <class T>
void weighted_cdf(const T* weights, std::int64_t n, double* cdf) {
  const std::int64_t nc = detail::cdf_num_chunks(n);
  std::vector<double> totals(static_cast<std::size_t>(nc)), offsets(static_cast<std::size_t>(nc));
  for (std::int64_t c = 0; c < nc; ++c) totals[c] = detail::cdf_chunk_prefix(weights, n, c, cdf);
  detail::cdf_offsets(totals.data(), nc, offsets.data());
  for (std::int64_t i = 0; i < n; ++i) cdf[i] = tl::num::add(offsets[i / kCdfChunk], cdf[i]);
}
template void weighted_cdf<float>(const float*, std::int64_t, double*);
template void weighted_cdf<double>(const double*, std::int64_t, double*);

namespace detail {

inline constexpr std::int64_t kRandomBlock = 4096;  // CPU work unit (any value gives the same bits)

template <class Fn>
void for_blocks(const Context& ctx, std::int64_t n, Fn&& fn) {
  const std::int64_t nb = (n + kRandomBlock - 1) / kRandomBlock;
  parallel_for(ctx, nb, [&](std::int64_t b) {
    const std::int64_t e = std::min(n, (b + 1) * kRandomBlock);
    for (std::int64_t i = b * kRandomBlock; i < e; ++i) fn(i);
  });
}

template <class T>
std::int64_t validate_weights(const T* w, std::int64_t n) {
  std::int64_t positive = 0;
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = w[i];
    TL_REQUIRE(!tl::num::is_nan(v) && !tl::num::is_inf(v), ValueError, "weights must be finite (entry ", i, " is ",
               v, ")");
    TL_REQUIRE(v >= T(0), ValueError, "weights must be non-negative (entry ", i, " is ", v, ")");
    if (v > T(0)) ++positive;
    sum = tl::num::add(sum, static_cast<double>(v));
  }
  TL_REQUIRE(positive > 0, ValueError, "weights must have a positive sum");
  TL_REQUIRE(!tl::num::is_inf(sum), ValueError, "the sum of the weights overflows");
  return positive;
}
template std::int64_t validate_weights<float>(const float*, std::int64_t);
template std::int64_t validate_weights<double>(const double*, std::int64_t);

template <class T>
void random_uniform_cpu(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                        VectorView<T> out) {
  for_blocks(ctx, out.size, [&](std::int64_t i) { out[i] = rng::uniform<T>(seed, stream, offset + i); });
}

template <class T>
void random_normal_cpu(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                       VectorView<T> out) {
  for_blocks(ctx, out.size, [&](std::int64_t i) { out[i] = rng::normal<T>(seed, stream, offset + i); });
}

void random_integers_cpu(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                         std::int64_t high, VectorView<std::int64_t> out) {
  const std::uint64_t n = static_cast<std::uint64_t>(high);
  for_blocks(ctx, out.size, [&](std::int64_t i) {
    out[i] = static_cast<std::int64_t>(rng::integer(seed, stream, offset + i, n));
  });
}

// Keys are computed in parallel; (key, index) pairs are distinct, so any
// correct sort or selection gives the one result.
template <class K>
void smallest_pairs(std::vector<std::pair<K, std::int64_t>>& kv, VectorView<std::int64_t> out) {
  const std::int64_t k = out.size;
  auto mid = kv.begin() + k;
  if (k < static_cast<std::int64_t>(kv.size())) std::nth_element(kv.begin(), mid, kv.end());
  std::sort(kv.begin(), mid);
  for (std::int64_t j = 0; j < k; ++j) out[j] = kv[j].second;
}

void random_smallest_keys_cpu(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::int64_t n,
                              VectorView<std::int64_t> out) {
  std::vector<std::pair<std::uint64_t, std::int64_t>> kv(static_cast<std::size_t>(n));
  for_blocks(ctx, n, [&](std::int64_t i) { kv[i] = {rng::permutation_key(seed, stream, i), i}; });
  smallest_pairs(kv, out);
}

template <class T>
void random_weighted_choice_cpu(const Context& ctx, std::uint64_t seed, std::uint64_t stream,
                                VectorView<const T> weights, bool replace, VectorView<std::int64_t> out) {
  const std::int64_t n = weights.size;
  std::vector<T> w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) w[i] = weights[i];
  const std::int64_t positive = validate_weights(w.data(), n);
  if (replace) {
    std::vector<double> cdf(static_cast<std::size_t>(n));
    weighted_cdf(w.data(), n, cdf.data());
    for_blocks(ctx, out.size, [&](std::int64_t j) { out[j] = weighted_draw(cdf.data(), n, seed, stream, j); });
    return;
  }
  TL_REQUIRE(out.size <= positive, ValueError, "cannot draw ", out.size, " samples without replacement: only ",
             positive, " weights are positive");
  // Keys are non-negative doubles (+inf for zero weights): their bit patterns
  // order like the values.
  std::vector<std::pair<std::uint64_t, std::int64_t>> kv(static_cast<std::size_t>(n));
  for_blocks(ctx, n, [&](std::int64_t i) {
    const double wi = static_cast<double>(w[i]);
    const double key = wi > 0.0 ? rng::weighted_key(seed, stream, i, wi) : tl::num::math_detail::inf<double>();
    kv[i] = {tl::num::to_bits(key), i};
  });
  smallest_pairs(kv, out);
}

template void random_uniform_cpu<float>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                        VectorView<float>);
template void random_uniform_cpu<double>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                         VectorView<double>);
template void random_normal_cpu<float>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                       VectorView<float>);
template void random_normal_cpu<double>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                        VectorView<double>);
template void random_weighted_choice_cpu<float>(const Context&, std::uint64_t, std::uint64_t,
                                                VectorView<const float>, bool, VectorView<std::int64_t>);
template void random_weighted_choice_cpu<double>(const Context&, std::uint64_t, std::uint64_t,
                                                 VectorView<const double>, bool, VectorView<std::int64_t>);

}  // namespace detail
}  // namespace tl
