// Connectivity-constrained trees (twinlearn/cluster/agglomerative.hpp):
// scikit-learn's ward_tree and linkage_tree with a connectivity graph, their
// heaps and merges reproduced on the host (the same for every backend).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/agglomerative/agglomerative_common.hpp"

namespace tl {

namespace {

using detail::AggloDist;

struct Edges {
  MatrixView<const double> X;
  bool precomputed;
  AggloDist kind;
  bool round32;                // weights rounded to float32 (float32 data)
  std::vector<double> sqnorm;  // cosine only
  Edges(MatrixView<const double> x, bool pre, Metric metric, bool r32)
      : X(x), precomputed(pre), kind(AggloDist::L2), round32(r32) {
    TL_REQUIRE(X.on_host(), ValueError, "AgglomerativeClustering: structured trees take host arrays");
    TL_REQUIRE(X.col_stride == 1 || X.cols <= 1, ValueError, "X: rows must have unit stride");
    if (precomputed) return;
    kind = detail::agglo_dist_of(metric);
    if (kind == AggloDist::Cosine) {
      sqnorm.resize(static_cast<std::size_t>(X.rows));
      for (std::int64_t i = 0; i < X.rows; ++i) sqnorm[i] = dist::sqnorm(X.data + i * X.row_stride, X.cols);
    }
  }
  double operator()(std::int64_t i, std::int64_t j) const {
    const double w = exact(i, j);
    return round32 ? static_cast<double>(static_cast<float>(w)) : w;
  }
  double exact(std::int64_t i, std::int64_t j) const {
    if (precomputed) return X.data[i * X.row_stride + j];
    detail::AggloPoints p;
    p.x = X.data;
    p.sqnorm = sqnorm.empty() ? nullptr : sqnorm.data();
    p.n = X.rows;
    p.d = X.cols;
    p.ld = X.row_stride;
    p.kind = kind;
    p.device = X.device;
    return detail::agglo_distance(p, i, j);
  }
};

void check_graph(std::int64_t n, const std::int64_t* offsets, const std::int64_t* indices, std::int64_t n_nodes) {
  TL_REQUIRE(n >= 2, ValueError, "AgglomerativeClustering needs at least 2 samples, got ", n);
  TL_REQUIRE(n_nodes > n && n_nodes <= 2 * n - 1, ValueError, "agglomerative_tree_structured: n_nodes = ", n_nodes,
             " is not in (", n, ", ", 2 * n - 1, "]");
  TL_REQUIRE(offsets[0] == 0, ValueError, "connectivity: offsets must start at 0");
  for (std::int64_t i = 0; i < n; ++i) {
    TL_REQUIRE(offsets[i + 1] >= offsets[i], ValueError, "connectivity: offsets must not decrease");
    for (std::int64_t e = offsets[i]; e < offsets[i + 1]; ++e)
      TL_REQUIRE(indices[e] >= 0 && indices[e] < n, ValueError, "connectivity: index ", indices[e],
                 " out of range [0, ", n, ")");
  }
}

// compute_ward_dist of scikit-learn's _hierarchical_fast.pyx for one pair.
double ward_dist(const std::vector<double>& m1, const std::vector<double>& m2, std::int64_t d, std::int64_t r,
                 std::int64_t c) {
  const double nrc = num::div(num::mul(m1[r], m1[c]), num::add(m1[r], m1[c]));
  double pa = 0.0;
  for (std::int64_t f = 0; f < d; ++f) {
    const double t = num::sub(num::div(m2[r * d + f], m1[r]), num::div(m2[c * d + f], m1[c]));
    pa = num::add(pa, num::mul(t, t));
  }
  return num::mul(pa, nrc);
}

using WardItem = std::tuple<double, std::int64_t, std::int64_t>;  // Python's (inertia, i, j), tuple order

void ward_structured(MatrixView<const double> X, const std::int64_t* offsets, const std::int64_t* indices,
                     std::int64_t n_nodes, std::int64_t* children, double* distances, std::int64_t* parent) {
  const std::int64_t n = X.rows, d = X.cols;
  std::vector<double> m1(static_cast<std::size_t>(n_nodes), 0.0), m2(static_cast<std::size_t>(n_nodes * d), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    m1[i] = 1.0;
    for (std::int64_t f = 0; f < d; ++f) m2[i * d + f] = X.data[i * X.row_stride + f];
  }
  std::vector<std::vector<std::int64_t>> A(static_cast<std::size_t>(n_nodes));
  std::vector<WardItem> heap;
  for (std::int64_t i = 0; i < n; ++i) {
    A[i].assign(indices + offsets[i], indices + offsets[i + 1]);
    for (std::int64_t e = offsets[i]; e < offsets[i + 1]; ++e)
      if (indices[e] < i) heap.emplace_back(ward_dist(m1, m2, d, i, indices[e]), i, indices[e]);
  }
  const auto less = [](const WardItem& a, const WardItem& b) { return a < b; };
  detail::py_heapify(heap, less);
  for (std::int64_t k = 0; k < n_nodes; ++k) parent[k] = k;
  std::vector<char> used(static_cast<std::size_t>(n_nodes), 1);
  // not_visited of scikit-learn's loop, as the step that last visited a node.
  std::vector<std::int64_t> visited(static_cast<std::size_t>(n_nodes), -1);
  for (std::int64_t k = n; k < n_nodes; ++k) {
    WardItem top;
    do {
      TL_REQUIRE(!heap.empty(), ValueError, "AgglomerativeClustering: the connectivity graph ran out of edges");
      top = detail::py_heappop(heap, less);
    } while (!(used[std::get<1>(top)] && used[std::get<2>(top)]));
    const auto [inert, i, j] = top;
    parent[i] = parent[j] = k;
    children[2 * (k - n)] = j;  // scikit-learn reverses each pair at the end
    children[2 * (k - n) + 1] = i;
    used[i] = used[j] = 0;
    distances[k - n] = num::sqrt(num::mul(2.0, inert));
    m1[k] = num::add(m1[i], m1[j]);
    for (std::int64_t f = 0; f < d; ++f) m2[k * d + f] = num::add(m2[i * d + f], m2[j * d + f]);
    visited[k] = k;
    std::vector<std::int64_t> cols;
    for (std::int64_t side : {i, j})
      for (std::int64_t node : A[side]) {  // _get_parents: the current roots of the neighbours
        std::int64_t p = parent[node];
        while (p != node) {
          node = p;
          p = parent[node];
        }
        if (visited[node] != k) {
          visited[node] = k;
          cols.push_back(node);
        }
      }
    for (std::int64_t c : cols) A[c].push_back(k);
    for (std::int64_t c : cols) detail::py_heappush(heap, WardItem(ward_dist(m1, m2, d, k, c), k, c), less);
    A[k] = std::move(cols);
  }
}

struct Edge {  // _hierarchical_fast.WeightedEdge, ordered by weight alone
  double w;
  std::int64_t a, b;
};

void linkage_structured(const Edges& dist, Linkage linkage, const std::int64_t* offsets, const std::int64_t* indices,
                        std::int64_t n_nodes, std::int64_t* children, double* distances, std::int64_t* parent) {
  const std::int64_t n = dist.X.rows;
  std::vector<std::map<std::int64_t, double>> A(static_cast<std::size_t>(n_nodes));
  std::vector<Edge> heap;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t e = offsets[i]; e < offsets[i + 1]; ++e) {
      const std::int64_t r = indices[e];
      if (r == i) continue;  // scikit-learn drops the diagonal
      const double w = dist(i, r);
      TL_REQUIRE(std::isfinite(w), ValueError, "AgglomerativeClustering: a distance is not finite");
      A[i].emplace(r, w);
      if (r < i) heap.push_back(Edge{w, i, r});
    }
  const auto less = [](const Edge& x, const Edge& y) { return x.w < y.w; };
  detail::py_heapify(heap, less);
  for (std::int64_t k = 0; k < n_nodes; ++k) parent[k] = k;
  std::vector<std::int64_t> size(static_cast<std::size_t>(n_nodes), 1);  // scikit-learn's used_node
  for (std::int64_t k = n; k < n_nodes; ++k) {
    Edge top;
    do {
      TL_REQUIRE(!heap.empty(), ValueError, "AgglomerativeClustering: the connectivity graph ran out of edges");
      top = detail::py_heappop(heap, less);
    } while (!(size[top.a] && size[top.b]));
    const std::int64_t i = top.a, j = top.b;
    distances[k - n] = top.w;
    parent[i] = parent[j] = k;
    children[2 * (k - n)] = j;
    children[2 * (k - n) + 1] = i;
    const std::int64_t n_i = size[i], n_j = size[j];
    size[k] = n_i + n_j;
    size[i] = size[j] = 0;
    // max_merge / average_merge: A[i]'s live entries, then A[j]'s merged in.
    std::map<std::int64_t, double> out;
    for (const auto& [key, v] : A[i])
      if (size[key]) out[key] = v;
    const double n_out = static_cast<double>(n_i + n_j);
    for (const auto& [key, v] : A[j]) {
      if (!size[key]) continue;
      auto it = out.find(key);
      if (it == out.end()) {
        out.emplace(key, v);
      } else if (linkage == Linkage::Complete) {
        it->second = it->second > v ? it->second : v;
      } else {
        it->second = num::div(
            num::add(num::mul(static_cast<double>(n_i), it->second), num::mul(static_cast<double>(n_j), v)), n_out);
      }
    }
    for (const auto& [col, v] : out) {
      A[col].emplace(k, v);
      detail::py_heappush(heap, Edge{v, k, col}, less);
    }
    A[k] = std::move(out);
    A[i].clear();
    A[j].clear();
  }
}

}  // namespace

void agglomerative_tree_structured(MatrixView<const double> X, bool precomputed, Metric metric, Linkage linkage,
                                   const std::int64_t* offsets, const std::int64_t* indices, std::int64_t n_nodes,
                                   bool float32_weights, std::int64_t* children, double* distances,
                                   std::int64_t* parent) {
  const std::int64_t n = X.rows;
  check_graph(n, offsets, indices, n_nodes);
  TL_REQUIRE(!precomputed || X.cols == n, ValueError, "Distance matrix should be square, got matrix of shape (", n,
             ", ", X.cols, ")");
  TL_REQUIRE(linkage != Linkage::Single, ValueError,
             "agglomerative_tree_structured: single linkage takes the spanning tree (agglomerative_label_edges)");
  if (linkage == Linkage::Ward) {
    TL_REQUIRE(!precomputed, ValueError, "Ward can only work with euclidean distances");
    TL_REQUIRE(X.on_host() && (X.col_stride == 1 || X.cols <= 1), ValueError,
               "AgglomerativeClustering: structured trees take host arrays with unit-stride rows");
    ward_structured(X, offsets, indices, n_nodes, children, distances, parent);
    return;
  }
  linkage_structured(Edges(X, precomputed, metric, float32_weights), linkage, offsets, indices, n_nodes, children,
                     distances, parent);
}

void agglomerative_edge_distances(MatrixView<const double> X, bool precomputed, Metric metric, const std::int64_t* rows,
                                  const std::int64_t* cols, std::int64_t m, bool float32_weights, double* w) {
  const Edges dist(X, precomputed, metric, float32_weights);
  for (std::int64_t e = 0; e < m; ++e) {
    TL_REQUIRE(rows[e] >= 0 && rows[e] < X.rows && cols[e] >= 0 && cols[e] < X.rows, ValueError,
               "agglomerative_edge_distances: edge ", e, " out of range");
    w[e] = dist(rows[e], cols[e]);
  }
}

}  // namespace tl
