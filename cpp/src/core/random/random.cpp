#include "core/random/random_impl.hpp"

namespace tl {

namespace {
template <class V>
void check_out(const Context& ctx, const V& out) {
  check_placement(ctx, out, "out");
  TL_REQUIRE(static_cast<std::uint64_t>(out.size) < rng::kMaxBlock, ValueError, "too many draws requested");
}
void check_positions(std::uint64_t offset, std::int64_t n) {
  TL_REQUIRE(offset < rng::kMaxBlock && static_cast<std::uint64_t>(n) <= rng::kMaxBlock - offset, ValueError,
             "random positions must stay below 2^56 (offset ", offset, " + ", n, " draws)");
}
}  // namespace

template <class T>
void random_uniform(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                    VectorView<T> out) {
  check_out(ctx, out);
  check_positions(offset, out.size);
  if (out.size == 0) return;
  ctx.dispatch([&] { detail::random_uniform_cpu(ctx, seed, stream, offset, out); },
               [&] { detail::random_uniform_cuda(ctx, seed, stream, offset, out); });
}

template <class T>
void random_normal(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                   VectorView<T> out) {
  check_out(ctx, out);
  check_positions(offset, out.size);
  if (out.size == 0) return;
  ctx.dispatch([&] { detail::random_normal_cpu(ctx, seed, stream, offset, out); },
               [&] { detail::random_normal_cuda(ctx, seed, stream, offset, out); });
}

void random_integers(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                     std::int64_t high, VectorView<std::int64_t> out) {
  TL_REQUIRE(high >= 1, ValueError, "high must be at least 1, got ", high);
  check_out(ctx, out);
  check_positions(offset, out.size);
  if (out.size == 0) return;
  ctx.dispatch([&] { detail::random_integers_cpu(ctx, seed, stream, offset, high, out); },
               [&] { detail::random_integers_cuda(ctx, seed, stream, offset, high, out); });
}

void random_permutation(const Context& ctx, std::uint64_t seed, std::uint64_t stream, VectorView<std::int64_t> out) {
  check_out(ctx, out);
  if (out.size == 0) return;
  ctx.dispatch([&] { detail::random_smallest_keys_cpu(ctx, seed, stream, out.size, out); },
               [&] { detail::random_smallest_keys_cuda(ctx, seed, stream, out.size, out); });
}

void random_choice(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::int64_t n, bool replace,
                   VectorView<std::int64_t> out) {
  TL_REQUIRE(n >= 0, ValueError, "n must be non-negative, got ", n);
  check_out(ctx, out);
  if (out.size == 0) return;
  TL_REQUIRE(n >= 1, ValueError, "cannot draw ", out.size, " samples from an empty population");
  if (replace) {
    random_integers(ctx, seed, stream, 0, n, out);
    return;
  }
  TL_REQUIRE(out.size <= n, ValueError, "cannot draw ", out.size, " samples without replacement from ", n);
  TL_REQUIRE(static_cast<std::uint64_t>(n) < rng::kMaxBlock, ValueError, "population too large");
  ctx.dispatch([&] { detail::random_smallest_keys_cpu(ctx, seed, stream, n, out); },
               [&] { detail::random_smallest_keys_cuda(ctx, seed, stream, n, out); });
}

template <class T>
void random_weighted_choice(const Context& ctx, std::uint64_t seed, std::uint64_t stream, VectorView<const T> weights,
                            bool replace, VectorView<std::int64_t> out) {
  check_placement(ctx, weights, "weights");
  check_out(ctx, out);
  TL_REQUIRE(weights.size >= 1, ValueError, "weights must not be empty");
  if (out.size == 0) return;
  ctx.dispatch([&] { detail::random_weighted_choice_cpu(ctx, seed, stream, weights, replace, out); },
               [&] { detail::random_weighted_choice_cuda(ctx, seed, stream, weights, replace, out); });
}

template void random_uniform<float>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<float>);
template void random_uniform<double>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<double>);
template void random_normal<float>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<float>);
template void random_normal<double>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<double>);
template void random_weighted_choice<float>(const Context&, std::uint64_t, std::uint64_t, VectorView<const float>,
                                            bool, VectorView<std::int64_t>);
template void random_weighted_choice<double>(const Context&, std::uint64_t, std::uint64_t, VectorView<const double>,
                                             bool, VectorView<std::int64_t>);

}  // namespace tl
