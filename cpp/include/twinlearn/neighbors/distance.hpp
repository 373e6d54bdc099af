// Exact pairwise distances and brute-force nearest neighbours (CPU and CUDA).
//
// Metrics and their spelled-out arithmetic (docs/NUMERICS.md): every value is
// a fixed sequence of tl::num operations, the same on both backends, so in
// identical mode the CPU and any GPU give the same bits.
//
//   dot(a, b)        one fma chain over features p = 0, 1, ..., d-1 from +0.0:
//                    acc = fma(a[p], b[p], acc)  (the canonical GEMM's chain)
//   sqnorm(a)        dot(a, a)
//   sqeuclidean      s = (sqnorm(x) + sqnorm(y)) - 2 dot(x, y), then max(s, +0)
//                    (the GEMM form, for speed); with Metric::direct the
//                    direct form acc = fma(x[p] - y[p], x[p] - y[p], acc),
//                    exact to a few ulps also for data far from the origin
//   euclidean        sqrt(sqeuclidean)
//   cosine           1 - dot(x, y) / (sqrt(sqnorm(x)) * sqrt(sqnorm(y))),
//                    clipped to [0, 2]; a zero-norm row has norm 1 (as
//                    scikit-learn's normalize), so its distance to any row is 1
//   manhattan        acc = acc + |x[p] - y[p]|, p increasing, from +0.0
//   chebyshev        acc = max(acc, |x[p] - y[p]|), p increasing, from +0.0
//   minkowski(p)     acc = acc + |x[q] - y[q]|^p, then acc^(1/p); p = 1, 2 and
//                    infinity are manhattan, euclidean and chebyshev
//
// Ties: neighbours are ordered by (distance, index); among equal distances
// the lowest index comes first. Selection uses the metric's ranking value
// (the squared distance for euclidean), so sqrt cannot merge two distinct
// squared distances into a tie that reorders neighbours.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

enum class MetricKind : int { Euclidean = 0, SqEuclidean = 1, Manhattan = 2, Cosine = 3, Chebyshev = 4, Minkowski = 5 };

struct Metric {
  MetricKind kind = MetricKind::Euclidean;
  double p = 2.0;        // Minkowski only
  bool direct = false;   // (sq)euclidean by differences instead of dot products
};

// Parses "euclidean", "sqeuclidean", "manhattan" (also "cityblock", "l1"),
// "l2", "cosine", "chebyshev" (also "infinity"), "minkowski" (with p >= 1;
// p = 1, 2, inf map to manhattan, euclidean, chebyshev).
Metric parse_metric(const std::string& name, double p);
const char* to_string(MetricKind k);

// out[i, j] = distance(X[i], Y[j]). X: m x d, Y: n x d, out: m x n; each on
// the host or on the context's device (out may be a strided host view; on the
// device it must be C-contiguous). Batched over rows of X, so any size fits
// as long as out does.
template <class T>
void pairwise_distances(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, Metric metric,
                        MatrixView<T> out);

// The k nearest rows of `index` (n x d) to each row of `queries` (m x d),
// nearest first, ties by lowest index. dist: m x k, ind: m x k, both host
// memory, C order. Exact (a brute-force scan); the distance matrix is never
// written whole. 1 <= k <= n; k up to 1024 on the GPU's fused path, larger k
// on the CPU.
template <class T>
void knn_search(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                std::int64_t k, T* dist, std::int64_t* ind);

// For every query row, the indices (ascending) and distances of the index rows
// within `radius` (distance <= radius). offsets: m + 1 entries (host);
// results are appended to ind / dist.
template <class T>
void radius_search(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                   double radius, std::int64_t* offsets, std::vector<std::int64_t>& ind, std::vector<T>& dist);

}  // namespace tl
