// Backend entry points of the random-array functions (validated inputs only).
#pragma once
#include <vector>

#include "core/random/random_common.hpp"

namespace tl::detail {

// Checks weights (host memory): finite, >= 0, with a finite positive sum.
// Returns the number of positive weights.
template <class T>
std::int64_t validate_weights(const T* w, std::int64_t n);

template <class T>
void random_uniform_cpu(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<T>);
template <class T>
void random_normal_cpu(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<T>);
void random_integers_cpu(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, std::int64_t,
                         VectorView<std::int64_t>);
// The k smallest (permutation_key(i), i) pairs of i in [0, n), in order.
void random_smallest_keys_cpu(const Context&, std::uint64_t, std::uint64_t, std::int64_t n, VectorView<std::int64_t>);
template <class T>
void random_weighted_choice_cpu(const Context&, std::uint64_t, std::uint64_t, VectorView<const T>, bool,
                                VectorView<std::int64_t>);

template <class T>
void random_uniform_cuda(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<T>);
template <class T>
void random_normal_cuda(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, VectorView<T>);
void random_integers_cuda(const Context&, std::uint64_t, std::uint64_t, std::uint64_t, std::int64_t,
                          VectorView<std::int64_t>);
void random_smallest_keys_cuda(const Context&, std::uint64_t, std::uint64_t, std::int64_t n,
                               VectorView<std::int64_t>);
template <class T>
void random_weighted_choice_cuda(const Context&, std::uint64_t, std::uint64_t, VectorView<const T>, bool,
                                 VectorView<std::int64_t>);

}  // namespace tl::detail
