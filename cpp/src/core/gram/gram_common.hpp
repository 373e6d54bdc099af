// Pieces of the canonical Gram product shared by the CPU and CUDA backends
// (order: twinlearn/core/gram.hpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "twinlearn/core/colstats.hpp"

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/gram.hpp"

namespace tl::gram_detail {

// One entry of Zc: (z - offset) * s, each step one IEEE operation in T, as
// scikit-learn's `X -= X_offset; X *= sqrt(sample_weight)[:, None]`;
// centred_by takes the column's offset o already loaded.
template <class T>
TL_HD T centred_by(T z, bool has_offset, T o, T s, bool weighted) {
  T v = z;
  if (has_offset) v = num::sub(v, o);
  if (weighted) v = num::mul(v, s);
  return v;
}
template <class T>
TL_HD T centred(T z, const T* offset, std::int64_t col, T s, bool weighted) {
  return centred_by(z, offset != nullptr, offset ? offset[col] : T(0), s, weighted);
}

// The canonical pairwise tree (twinlearn/core/tree.hpp) computed while the
// leaves arrive in order, with O(log n) memory: a binary counter of complete
// subtrees. push() merges the new leaf with the stack's top while they are
// subtrees of the same height; result() folds what is left from the right.
// For every leaf count this is exactly tree_reduce_inplace with addition
// (tested in cpp/tests/linear_model/test_gram.cpp).
struct TreeStack {
  static constexpr int kMax = 64;
  double v[kMax];
  int level[kMax];
  int top = 0;

  TL_HD void push(double x) {
    int l = 0;
    while (top > 0 && level[top - 1] == l) {
      x = num::add(v[top - 1], x);
      --top;
      ++l;
    }
    v[top] = x;
    level[top] = l;
    ++top;
  }
  TL_HD double result() const {
    if (top == 0) return 0.0;
    double r = v[top - 1];
    for (int s = top - 2; s >= 0; --s) r = num::add(v[s], r);
    return r;
  }
};

// Chunks per batch for a D x D product with element size `bytes`: the
// largest power of two <= kGramBatchChunks whose partials fit in `budget`
// bytes (at least 1). Any power of two gives the same bits (see gram.hpp).
inline std::int64_t batch_chunks(std::int64_t D, std::int64_t bytes, std::int64_t budget) {
  std::int64_t b = kGramBatchChunks;
  while (b > 1 && b * D * D * bytes > budget) b /= 2;
  return b;
}

// gram_moments' fast path on CUDA takes at most this many targets and X of
// at most this many columns (rounded up to a multiple of 8); other shapes
// take the two passes (column_stats, then gram).
inline constexpr std::int64_t kMomentsMaxTargets = 4;
inline constexpr std::int64_t kMomentsMaxCols = 512;

// The moment sums of gram_moments' fast path, one block of them per
// widening block and their total: for each column j < ldz of X, [j*(1+t)]
// the sum of z_j and [j*(1+t) + 1 + c] the sum of z_j * u_c; then the
// targets' sums of u_c at ldz*(1+t) + c and of u_c * u_e at
// ldz*(1+t) + t + c*t + e; z = X - x0 and u = Y - y0 in double, shifted by
// the first row (x0, y0), so that the sums of squares keep their digits when
// the columns' means are far from zero.
TL_HD std::int64_t moments_size(std::int64_t ldz, std::int64_t t) { return ldz * (1 + t) + t + t * t; }

// The fast path's last step, on the host in double. C: the upper triangle of
// zᵀz (ldz x ldz, column-major) for z = X - x0; m: the moment sums in
// moments_size's layout; x0: the D entries of the first row. Writes the
// D x D Gram matrix and each column's statistics (all n entries finite):
// with `center`, zᵀz - s sᵀ / n for the sums s (the Gram matrix centred at
// the means, whatever the shift), else ZᵀZ = zᵀz + x0 sᵀ + s x0ᵀ + n x0 x0ᵀ.
// Returns false, and the caller falls back to the two passes, when a
// result is not finite (NaN or infinity in the data: the canonical
// statistics count them).
inline bool centre_moments(std::int64_t n, std::int64_t d, std::int64_t t, std::int64_t ldz, const double* C,
                           const double* m, const double* x0, bool center, double* out, ColStat* stats) {
  const std::int64_t D = d + t, w = 1 + t;
  const double nn = static_cast<double>(n);
  std::vector<double> s(static_cast<std::size_t>(D));
  for (std::int64_t j = 0; j < d; ++j) s[j] = m[j * w];
  for (std::int64_t c = 0; c < t; ++c) s[d + c] = m[ldz * w + c];
  auto shifted = [&](std::int64_t j, std::int64_t k) {  // the sum of z_j z_k, j <= k
    if (k < d) return C[j + k * ldz];
    const std::int64_t c = k - d;
    return j < d ? m[j * w + 1 + c] : m[ldz * w + t + (j - d) * t + c];
  };
  for (std::int64_t j = 0; j < D; ++j) {
    if (!std::isfinite(s[j])) return false;
    for (std::int64_t k = j; k < D; ++k) {
      const double v = center ? shifted(j, k) - s[j] * s[k] / nn
                              : shifted(j, k) + x0[j] * s[k] + s[j] * x0[k] + nn * x0[j] * x0[k];
      if (!std::isfinite(v)) return false;
      out[j * D + k] = v;
      out[k * D + j] = v;
    }
  }
  for (std::int64_t c = 0; c < D; ++c) {
    ColStat& st = stats[c];
    st.w = nn;
    st.n = n;
    st.n_inf = 0;
    st.mean = x0[c] + s[c] / nn;
    const double m2 = shifted(c, c) - s[c] * s[c] / nn;
    st.m2 = (m2 > 0.0 || m2 != m2) ? m2 : 0.0;  // as colstats.hpp's finish: NaN (overflow) stays NaN
  }
  return true;
}

}  // namespace tl::gram_detail

namespace tl::detail {

// Backend entry points (validated input, n > 0, D > 0). Each appends the
// batch results (upper triangles, D x D doubles, row-major) to `batches` in
// row order; chunk is the canonical chunk size (kGramChunk outside tests).
template <class T>
NumericMode gram_cpu(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                     const T* offset, std::int64_t chunk, std::vector<double>& batches);
// gram_moments in fast mode on CUDA (no weights); false when the shape is
// not the fast path's or a result is not finite (the caller then runs the
// two passes).
template <class T>
bool gram_moments_fast_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, bool center,
                            double* out, ColStat* stats);
template <class T>
NumericMode gram_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                      const T* offset, std::vector<double>& batches);

}  // namespace tl::detail
