// Backend entry point of tl::linalg::sym_eigh_device (validated, d > 0).
#pragma once
#include <cstdint>

#include "twinlearn/core/error.hpp"
#include "twinlearn/linalg/eigh.hpp"

namespace tl::linalg::detail {

void sym_eigh_cuda(const Context& ctx, const double* A, std::int64_t d, double* w, double* V);

}  // namespace tl::linalg::detail
