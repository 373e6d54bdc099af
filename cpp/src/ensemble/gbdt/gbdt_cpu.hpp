// CPU backend of the gradient-boosted trees: internals its tests reach.
#pragma once

#include <cstdint>

#include "twinlearn/ensemble/gbdt.hpp"

namespace tl::detail {

// g, h of rows 0..n-1 (D outputs a row, weights w or none, no bootstrap)
// by the code the CPU trainer runs, in the build cpu_isa() picks
// (TWINLEARN_CPU_ISA caps it): the same bits as gbdt::row_gradients row by
// row. Returns max |g| and max |h| through maxg, maxh.
void gbdt_gradients_cpu(GbdtLoss loss, int D, double param, const double* approx, const double* y, const double* w,
                        std::int64_t n, double* g, double* h, double* maxg, double* maxh);

}  // namespace tl::detail
