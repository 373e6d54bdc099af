#include <vector>

#include "core/cpu/float_bits.hpp"
#include "core/cpu/cpu_clones.hpp"
#include "preprocessing/column_affine/column_affine_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {
namespace {

// Which steps a call has, as template flags: the loop over a row then has no
// per-element branch and the compiler vectorizes it (the infinity count and
// the canonical NaN by the bits: core/cpu/float_bits.hpp). The arithmetic is
// affine_apply's, step by step (each in double, rounded to T in between).
template <bool Sub, bool Div, bool Mul, bool Add, bool Clip>
struct Steps {};

template <class T, bool Sub, bool Div, bool Mul, bool Add, bool Clip>
TL_CPU_CLONES std::int64_t affine_row(Steps<Sub, Div, Mul, Add, Clip>, const T* __restrict__ x, std::int64_t cols,
                                      const AffineParams& p, T* __restrict__ o) {
  using B = FloatBits<T>;
  std::int64_t n_inf = 0;
  const T lo = static_cast<T>(p.lo), hi = static_cast<T>(p.hi);
  for (std::int64_t j = 0; j < cols; ++j) {
    T v = x[j];
    n_inf += static_cast<std::int64_t>(B::is_inf(B::bits(v)));
    if constexpr (Sub) v = static_cast<T>(num::sub(static_cast<double>(v), p.sub[j]));
    if constexpr (Div) v = static_cast<T>(num::div(static_cast<double>(v), p.div[j]));
    if constexpr (Mul) v = static_cast<T>(num::mul(static_cast<double>(v), p.mul[j]));
    if constexpr (Add) v = static_cast<T>(num::add(static_cast<double>(v), p.add[j]));
    if constexpr (Clip) {
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
    }
    o[j] = B::from(B::canonical(B::bits(v)));
  }
  return n_inf;
}

// fn(Steps<...>{}) for the steps p has.
template <bool... Known, class Fn>
auto with_steps(const AffineParams& p, Fn&& fn) {
  constexpr std::size_t k = sizeof...(Known);
  if constexpr (k == 5) {
    return fn(Steps<Known...>{});
  } else {
    const bool has = k == 0 ? p.sub != nullptr
                   : k == 1 ? p.div != nullptr
                   : k == 2 ? p.mul != nullptr
                   : k == 3 ? p.add != nullptr
                            : p.clip;
    return has ? with_steps<Known..., true>(p, fn) : with_steps<Known..., false>(p, fn);
  }
}

}  // namespace

template <class T>
std::int64_t column_affine_apply_cpu(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                     MatrixView<T> out) {
  TL_REQUIRE(X.on_host() && out.on_host(), ValueError, "the CPU backend needs host arrays");
  const AffineParams p{steps.sub, steps.div, steps.mul, steps.add, steps.clip, steps.clip_lo, steps.clip_hi};
  // Rows in blocks of 256, one task per block; infinities counted per block.
  const std::int64_t block = 256, nblocks = (X.rows + block - 1) / block;
  std::vector<std::int64_t> infs(static_cast<std::size_t>(nblocks), 0);
  const bool rows_contiguous = (X.col_stride == 1 || X.cols <= 1) && (out.col_stride == 1 || out.cols <= 1);
  parallel_for(ctx, nblocks, [&](std::int64_t b) {
    std::int64_t n_inf = 0;
    const std::int64_t r1 = std::min(X.rows, (b + 1) * block);
    if (rows_contiguous) {
      n_inf = with_steps(p, [&](auto s) -> std::int64_t {
        std::int64_t c = 0;
        for (std::int64_t i = b * block; i < r1; ++i) c += affine_row(s, &X(i, 0), X.cols, p, &out(i, 0));
        return c;
      });
    } else {
      for (std::int64_t i = b * block; i < r1; ++i) {
        for (std::int64_t j = 0; j < X.cols; ++j) {
          const T x = X(i, j);
          n_inf += num::is_inf(x);
          out(i, j) = affine_one(x, p, j);
        }
      }
    }
    infs[b] = n_inf;
  });
  std::int64_t total = 0;
  for (std::int64_t v : infs) total += v;
  return total;
}

template std::int64_t column_affine_apply_cpu<float>(const Context&, MatrixView<const float>, const ColumnAffine&,
                                                     MatrixView<float>);
template std::int64_t column_affine_apply_cpu<double>(const Context&, MatrixView<const double>, const ColumnAffine&,
                                                      MatrixView<double>);

}  // namespace tl::detail
