// CPU building blocks of the distance kernels, shared by pairwise distances,
// nearest neighbours and KMeans.
//
// The right-hand rows Y are packed once, transposed, in panels of `width`
// rows (kPanel, or fewer for a small Y; panel q holds Y[q*width + j, f] at
// data[q*d*width + f*width + j], zero past the last row). accumulate_block then runs, for a few left-hand rows at
// a time, acc[r][j] = step(x[r][f], panel[f][j], acc[r][j]) for f = 0..d-1 in
// increasing order: the vector lanes run across j (different pairs), never
// across f, so every pair's accumulator is the one chain of distance.hpp.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/distance/distance_common.hpp"
#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/error.hpp"

namespace tl::detail {

inline constexpr std::int64_t kPanel = 256;  // right-hand rows per packed panel
inline constexpr std::int64_t kRowBlock = 32;  // left-hand rows per task

template <class T>
struct PackedPanels {
  std::int64_t n = 0, d = 0, npanels = 0, width = kPanel;
  std::vector<T> data;   // npanels * d * width
  std::vector<T> norms;  // n squared norms (dot metrics), else empty
  const T* panel(std::int64_t q) const { return data.data() + q * d * width; }
  std::int64_t rows_in(std::int64_t q) const { return std::min(width, n - q * width); }
};

// Packs Y (host, unit column stride). Computes the squared norms when asked.
template <class T>
PackedPanels<T> pack_panels(const Context& ctx, MatrixView<const T> Y, bool with_norms);

// A block kernel: acc[r * width + j] = accumulator of (x row r, panel row j)
// for r < nr, j < width; x row r at x + r * ldx (unit stride), d features.
template <class T>
using BlockKernel = void (*)(const T* x, std::int64_t ldx, std::int64_t nr, const T* panel, std::int64_t width,
                             std::int64_t d, T p, T* acc);
// The block kernel of a metric family for this CPU (its build chosen by
// cpu_isa(), core/cpu/cpu_clones.hpp): taken once per call, outside the
// loops over blocks.
template <class T>
BlockKernel<T> block_kernel(dist::Family fam);

// Row loops with fma chains, compiled for x86-64-v3 as well as baseline
// x86-64 (where std::fma is a library call): out[i] for rows i < n of x (row
// stride ldx, d features).
//   sqnorms_rows:  sqnorm(x_i)
//   dot_rows:      the dot chain of x_i with c
//   sqdiff_rows:   sum_f (x_if - c_{labels[i], f})^2 as one fma chain (centers: k x d)
template <class T>
void sqnorms_rows(const T* x, std::int64_t ldx, std::int64_t n, std::int64_t d, T* out);
template <class T>
void dot_rows(const T* x, std::int64_t ldx, std::int64_t n, std::int64_t d, const T* c, T* out);
template <class T>
void sqdiff_rows(const T* x, std::int64_t ldx, std::int64_t n, std::int64_t d, const std::int32_t* labels,
                 const T* centers, T* out);

// The ranking key of a squared distance v (>= +0, -0 or NaN, as
// dist::sq_from_dot gives): equal for equal values (-0 and +0 alike),
// ordered as dist::value_less orders the values, NaN above everything.
template <class T>
using RankKey = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
template <class T>
inline constexpr RankKey<T> kNanRankKey = std::numeric_limits<RankKey<T>>::max();
template <class T>
RankKey<T> rank_key(T v) {
  RankKey<T> k;
  std::memcpy(&k, &v, sizeof k);
  return num::is_nan(v) ? kNanRankKey<T> : (v == T(0) ? RankKey<T>(0) : k);
}

// One left-hand row against nc right-hand rows, from their dot products:
// v[j] = dist::sq_from_dot(xn, yn[j], dot[j]) and key[j] = rank_key(v[j]),
// the same bits, computed with integer masks instead of floating-point
// comparisons so that the loop vectorizes. Returns the smallest key
// (kNanRankKey<T> when nc == 0).
template <class T>
RankKey<T> sq_distances_and_keys(T xn, const T* yn, const T* dot, std::int64_t nc, T* v, RankKey<T>* key);

// key[j] = rank_key(v[j]) for j < n (values >= +0, -0 or NaN), by a loop
// that vectorizes; returns the smallest key (kNanRankKey<T> when n == 0).
template <class T>
RankKey<T> rank_keys(const T* v, std::int64_t n, RankKey<T>* key);

// The first j < n with key[j] == k (n when there is none), by a loop that
// vectorizes (a minimum over the positions holding k).
template <class T>
std::int64_t first_key(const RankKey<T>* key, std::int64_t n, RankKey<T> k);

// The CPU backend's check of a host matrix whose rows it reads as contiguous
// runs (unit column stride); name is the argument in the message.
template <class T>
void check_host_rows(MatrixView<const T> m, const char* name) {
  TL_REQUIRE(m.on_host(), ValueError, name, ": the CPU backend needs host arrays");
  TL_REQUIRE(m.col_stride == 1 || m.cols <= 1, ValueError, name, ": rows must have unit stride");
}

// Squared norms of the rows of X (host), n entries.
template <class T>
void row_sqnorms_cpu(const Context& ctx, MatrixView<const T> X, T* out);

}  // namespace tl::detail
