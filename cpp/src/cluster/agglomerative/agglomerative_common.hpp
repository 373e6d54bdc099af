// Agglomerative clustering steps shared by the CPU and CUDA backends
// (twinlearn/cluster/agglomerative.hpp): the distance of a pair and the
// order of Prim's candidates, TL_HD and spelled out with tl::num so that a
// value is the same bits on both backends.
#pragma once
#include <cstdint>
#include <vector>

#include "core/distance/distance_common.hpp"
#include "twinlearn/cluster/agglomerative.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::detail {

// The pair distances of agglomerative clustering.
enum class AggloDist : int { L2 = 0, L1 = 1, Cosine = 2, Precomputed = 3 };

// The pair distance family of a metric (euclidean, manhattan, cosine);
// ValueError for the others.
AggloDist agglo_dist_of(Metric metric);

// What Prim's scan reads: the rows of X (n x d, row stride ld) with their
// squared norms (Cosine only), or a precomputed n x n matrix (row stride ld)
// of which the entries above the diagonal are read.
struct AggloPoints {
  const double* x = nullptr;
  const double* sqnorm = nullptr;
  std::int64_t n = 0, d = 0, ld = 0;
  AggloDist kind = AggloDist::L2;
  Device device{};  // where x lives (host or the context's device)
};

// The distance of rows i != j: the project's chains (core/distance/
// distance_common.hpp), euclidean by differences; SciPy's condensed entry
// D[min(i, j), max(i, j)] for a precomputed matrix.
TL_HD double agglo_distance(const AggloPoints& p, std::int64_t i, std::int64_t j) {
  if (p.kind == AggloDist::Precomputed) {
    const std::int64_t a = i < j ? i : j, b = i < j ? j : i;
    return p.x[a * p.ld + b];
  }
  const double* a = p.x + i * p.ld;
  const double* b = p.x + j * p.ld;
  switch (p.kind) {
    case AggloDist::L1: return num::canonical(dist::accumulate<double, dist::Family::L1>(a, b, p.d, 0.0));
    case AggloDist::Cosine:
      return num::canonical(
          dist::cosine_from_dot(p.sqnorm[i], p.sqnorm[j], dist::accumulate<double, dist::Family::Dot>(a, b, p.d, 0.0)));
    default:
      return num::canonical(num::sqrt(dist::accumulate<double, dist::Family::L2>(a, b, p.d, 0.0)));
  }
}

// Prim's choice: the smallest distance, the lowest index among equal ones
// (scikit-learn's and SciPy's sequential scan keeps the first strictly
// smaller value). A total order on (value, index), so any reduction order
// picks the same candidate. Empty candidate: (+inf, INT64_MAX).
TL_HD bool agglo_better(double v, std::int64_t i, double bv, std::int64_t bi) {
  return v < bv || (v == bv && i < bi);
}

// SciPy's Lance-Williams updates (_hierarchy_distance_update.pxi), the same
// operations in the same order: the distance of cluster i to the union of
// x and y from d(x, i), d(y, i), d(x, y) and the sizes.
TL_HD double agglo_update(Linkage linkage, double d_xi, double d_yi, double d_xy, std::int64_t sx, std::int64_t sy,
                          std::int64_t si) {
  switch (linkage) {
    case Linkage::Complete: return d_yi > d_xi ? d_yi : d_xi;
    case Linkage::Average:
      return num::div(num::add(num::mul(static_cast<double>(sx), d_xi), num::mul(static_cast<double>(sy), d_yi)),
                      static_cast<double>(sx + sy));
    case Linkage::Ward: {
      const double t = num::div(1.0, static_cast<double>(sx + sy + si));
      const double a = num::mul(num::mul(num::mul(static_cast<double>(si + sx), t), d_xi), d_xi);
      const double b = num::mul(num::mul(num::mul(static_cast<double>(si + sy), t), d_yi), d_yi);
      const double c = num::mul(num::mul(num::mul(static_cast<double>(si), t), d_xy), d_xy);
      return num::sqrt(num::sub(num::add(a, b), c));
    }
    default: return d_xi < d_yi ? d_xi : d_yi;
  }
}

// Python's heapq (the C implementation's algorithm, step for step) on a
// vector of items ordered by less(a, b) (heapq's `a < b`): scikit-learn's
// trees pop their merges from such heaps, so the same sifts give the same
// pops, ties included.
template <class T, class Less>
void py_sift_down(std::vector<T>& h, std::size_t start, std::size_t pos, Less less) {
  T item = h[pos];
  while (pos > start) {
    const std::size_t parent = (pos - 1) >> 1;
    if (less(item, h[parent])) {
      h[pos] = h[parent];
      pos = parent;
      continue;
    }
    break;
  }
  h[pos] = item;
}
template <class T, class Less>
void py_sift_up(std::vector<T>& h, std::size_t pos, Less less) {
  const std::size_t end = h.size(), start = pos;
  T item = h[pos];
  std::size_t child = 2 * pos + 1;
  while (child < end) {
    const std::size_t right = child + 1;
    if (right < end && !less(h[child], h[right])) child = right;
    h[pos] = h[child];
    pos = child;
    child = 2 * pos + 1;
  }
  h[pos] = item;
  py_sift_down(h, start, pos, less);
}
template <class T, class Less>
void py_heappush(std::vector<T>& h, const T& item, Less less) {
  h.push_back(item);
  py_sift_down(h, 0, h.size() - 1, less);
}
template <class T, class Less>
T py_heappop(std::vector<T>& h, Less less) {
  T last = h.back();
  h.pop_back();
  if (h.empty()) return last;
  T top = h[0];
  h[0] = last;
  py_sift_up(h, 0, less);
  return top;
}
template <class T, class Less>
void py_heapify(std::vector<T>& h, Less less) {
  for (std::size_t i = h.size() / 2; i-- > 0;) py_sift_up(h, i, less);
}

// Prim's minimum spanning tree from vertex 0: edge k joins from[k] (the
// vertex added at step k, 0 first) and to[k] (the next vertex: the nearest
// to the tree), at distance w[k]; n - 1 edges. Points on the host (CPU) or
// the context's device (CUDA); outputs on the host.
void agglo_prim_cpu(const Context& ctx, const AggloPoints& p, std::int64_t* from, std::int64_t* to, double* w);
void agglo_prim_cuda(const Context& ctx, const AggloPoints& p, std::int64_t* from, std::int64_t* to, double* w);

}  // namespace tl::detail
