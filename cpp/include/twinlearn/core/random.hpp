// Array-producing random draws on the counter-based generator of
// twinlearn/core/rng.hpp. Each output element is a pure function of (seed,
// stream, position), so the CPU and CUDA backends give the same bits for any
// thread count or launch geometry.
//
// Outputs are 1-D views on the host or on the context's device (the CUDA
// backend needs them contiguous). Indices are int64.
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

// out[i] = rng::uniform<T>(seed, stream, offset + i): in [0, 1).
template <class T>
void random_uniform(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                    VectorView<T> out);

// out[i] = rng::normal<T>(seed, stream, offset + i): standard normal.
template <class T>
void random_normal(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                   VectorView<T> out);

// out[i] = rng::integer(seed, stream, offset + i, high): uniform in [0, high), high >= 1.
void random_integers(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                     std::int64_t high, VectorView<std::int64_t> out);

// A uniformly random permutation of 0..n-1, n = out.size: index i gets the
// key rng::permutation_key(seed, stream, i) and the indices are sorted by
// (key, index) — the index breaks the (rare) equal keys.
void random_permutation(const Context& ctx, std::uint64_t seed, std::uint64_t stream, VectorView<std::int64_t> out);

// k = out.size indices drawn from 0..n-1. With replacement: the integers
// rng::integer(seed, stream, j, n), j = 0..k-1. Without replacement (k <= n):
// the first k entries of random_permutation(seed, stream) for n, i.e. the k
// smallest (key, index) pairs, in that order.
void random_choice(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::int64_t n, bool replace,
                   VectorView<std::int64_t> out);

// k = out.size indices drawn from 0..n-1 with probabilities proportional to
// weights (n entries, finite, >= 0, positive sum).
// With replacement: draw j takes u = rng::uniform<double>(seed, stream, j)
// and returns the first i with cdf[i] > u * cdf[n-1] (if rounding leaves none,
// the first i with cdf[i] == cdf[n-1]), cdf being weighted_cdf below.
// Without replacement (k <= number of positive weights): exponential keys
// rng::weighted_key(seed, stream, i, w_i) (Efraimidis-Spirakis); the k
// smallest (key, index) pairs in that order; zero weights are never drawn.
template <class T>
void random_weighted_choice(const Context& ctx, std::uint64_t seed, std::uint64_t stream, VectorView<const T> weights,
                            bool replace, VectorView<std::int64_t> out);

// The canonical cumulative sum used above, in double: weights are cut into
// chunks of kCdfChunk; within a chunk a sequential inclusive prefix p_i; the
// chunk offsets o_c are the sequential prefix of the chunk totals; cdf[i] =
// o_c + p_i. Host arrays; cdf has n entries.
inline constexpr std::int64_t kCdfChunk = 1024;
template <class T>
void weighted_cdf(const T* weights, std::int64_t n, double* cdf);

}  // namespace tl
