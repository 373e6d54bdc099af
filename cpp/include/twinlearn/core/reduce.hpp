// Canonical reductions over matrices (docs/NUMERICS.md, rule 1). Results are
// the same bits on the CPU and CUDA backends and for any thread count.
#pragma once
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/colstats.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

// Per-column statistics of X (rows x cols, host or device), weighted by w
// (rows entries, host or device; w.data == nullptr means unit weights).
// out: cols entries, host memory. NaN entries are skipped, infinities counted.
template <class T>
void column_stats(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out);

}  // namespace tl
