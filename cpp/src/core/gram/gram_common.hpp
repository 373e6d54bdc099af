// Pieces of the canonical Gram product shared by the CPU and CUDA backends
// (order: twinlearn/core/gram.hpp).
#pragma once
#include <cstdint>
#include <vector>

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

}  // namespace tl::gram_detail

namespace tl::detail {

// Backend entry points (validated input, n > 0, D > 0). Each appends the
// batch results (upper triangles, D x D doubles, row-major) to `batches` in
// row order; chunk is the canonical chunk size (kGramChunk outside tests).
template <class T>
NumericMode gram_cpu(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                     const T* offset, std::int64_t chunk, std::vector<double>& batches);
template <class T>
NumericMode gram_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                      const T* offset, std::vector<double>& batches);

}  // namespace tl::detail
