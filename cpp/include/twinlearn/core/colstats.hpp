// Canonical column statistics: weighted count, mean and sum of squared
// deviations per column of a matrix, in one pass over the data.
//
// Order (docs/NUMERICS.md, rule 1): rows are cut into chunks of kColStatsChunk
// rows, a size fixed by the data alone. Within a chunk each column is
// accumulated sequentially in double, shifted by the chunk's first finite
// value; the chunk partials are then merged by a fixed pairwise tree (Chan's
// formula). The CPU and CUDA backends use the same geometry and the same
// spelled-out operations, so the results are the same bits on both.
#pragma once
#include <cstdint>

#include "twinlearn/core/numerics.hpp"

namespace tl {

inline constexpr std::int64_t kColStatsChunk = 1024;

// Statistics of one column over some rows. NaN entries are skipped (they
// count in neither w nor n); infinities are counted in n_inf and skipped.
struct ColStat {
  double w = 0.0;       // sum of weights of the finite entries
  double mean = 0.0;    // weighted mean of the finite entries
  double m2 = 0.0;      // weighted sum of squared deviations from mean
  std::int64_t n = 0;   // number of finite entries
  std::int64_t n_inf = 0;
};

namespace colstats_detail {

// Running sums of one column within one chunk, shifted by the chunk's first
// finite value k. push() is called for the chunk's rows in increasing order.
struct ChunkAcc {
  double k = 0.0;
  double s0 = 0.0, s1 = 0.0, s2 = 0.0;
  std::int64_t n = 0, n_inf = 0;
  bool have_k = false;
};

TL_HD void push(ChunkAcc& a, double v, double wi) {
  using namespace tl::num;
  if (is_nan(v)) return;
  if (is_inf(v)) {
    ++a.n_inf;
    return;
  }
  if (!a.have_k) {
    a.k = v;
    a.have_k = true;
  }
  const double d = sub(v, a.k);
  const double wd = mul(wi, d);
  a.s0 = add(a.s0, wi);
  a.s1 = add(a.s1, wd);
  a.s2 = add(a.s2, mul(wd, d));
  ++a.n;
}

TL_HD ColStat finish(const ChunkAcc& a) {
  using namespace tl::num;
  ColStat c;
  c.n = a.n;
  c.n_inf = a.n_inf;
  c.w = a.s0;
  if (a.s0 != 0.0) {
    const double q = div(a.s1, a.s0);
    c.mean = add(a.k, q);
    const double m2 = sub(a.s2, mul(a.s1, q));
    c.m2 = (m2 > 0.0 || m2 != m2) ? m2 : 0.0;  // rounding below 0 clamps; an overflowed sum (NaN) stays NaN
  }
  return c;
}

// Chan et al. merge of two partials. Fixed operand order: a is the earlier rows.
TL_HD ColStat merge(const ColStat& a, const ColStat& b) {
  using namespace tl::num;
  ColStat r;
  r.n = a.n + b.n;
  r.n_inf = a.n_inf + b.n_inf;
  if (a.w == 0.0) {
    r.w = b.w; r.mean = b.mean; r.m2 = b.m2;
    return r;
  }
  if (b.w == 0.0) {
    r.w = a.w; r.mean = a.mean; r.m2 = a.m2;
    return r;
  }
  const double w = add(a.w, b.w);
  const double delta = sub(b.mean, a.mean);
  r.w = w;
  r.mean = add(a.mean, mul(delta, div(b.w, w)));
  r.m2 = add(add(a.m2, b.m2), mul(mul(delta, delta), div(mul(a.w, b.w), w)));
  return r;
}

}  // namespace colstats_detail

inline std::int64_t colstats_num_chunks(std::int64_t rows) {
  return (rows + kColStatsChunk - 1) / kColStatsChunk;
}

}  // namespace tl
