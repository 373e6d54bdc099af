// Backend entry points of tl::fixed_histogram (validated inputs, rows >= 1).
#pragma once
#include "twinlearn/core/fixed_point.hpp"

namespace tl::detail {

// Error codes reported by the histogram backends.
enum FixedHistError : int { kFixedBinOutOfRange = 1, kFixedValueOutOfRange = 2 };

template <class T>
void fixed_histogram_cpu(const Context& ctx, MatrixView<const T> values, VectorView<const std::int32_t> bins,
                         std::int64_t n_bins, FixedScale scale, std::int64_t* out);
template <class T>
void fixed_histogram_cuda(const Context& ctx, MatrixView<const T> values, VectorView<const std::int32_t> bins,
                          std::int64_t n_bins, FixedScale scale, std::int64_t* out);

// The exception for a backend's error code.
[[noreturn]] void throw_fixed_histogram_error(int code, std::int64_t rows, FixedScale scale);

}  // namespace tl::detail
