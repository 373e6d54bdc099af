// Validation and dispatch of agglomerative clustering; the host steps every
// backend shares: SciPy's nearest-neighbour chain on the condensed matrix,
// the labelling of sorted merges, scikit-learn's cut of the tree.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "cluster/agglomerative/agglomerative_common.hpp"
#include "neighbors/distance/distance_impl.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl {

namespace detail {
AggloDist agglo_dist_of(Metric metric) {
  switch (metric.kind) {
    case MetricKind::Euclidean: return AggloDist::L2;
    case MetricKind::Manhattan: return AggloDist::L1;
    case MetricKind::Cosine: return AggloDist::Cosine;
    default:
      throw ValueError(std::string("AgglomerativeClustering: metric '") + to_string(metric.kind) +
                       "' is not supported (euclidean, manhattan, cosine or precomputed)");
  }
}
}  // namespace detail

Linkage parse_linkage(const std::string& name) {
  if (name == "ward") return Linkage::Ward;
  if (name == "complete") return Linkage::Complete;
  if (name == "average") return Linkage::Average;
  if (name == "single") return Linkage::Single;
  throw ValueError("The 'linkage' parameter of AgglomerativeClustering must be a str among {'average', 'complete', "
                   "'single', 'ward'}. Got '" + name + "' instead.");
}

namespace {

using detail::AggloDist;
using detail::AggloPoints;

// SciPy's condensed index of the pair i != j.
inline std::int64_t condensed_index(std::int64_t n, std::int64_t i, std::int64_t j) {
  if (i > j) std::swap(i, j);
  return n * i - (i * (i + 1)) / 2 + (j - i - 1);
}

struct Merge {
  std::int64_t a, b;  // the merged clusters (points for Prim's edges, slots for the chain)
  double w;
};

// Union-find over the 2n - 1 nodes, the merged node of the k-th union
// numbered n + k (scikit-learn's UnionFind, SciPy's LinkageUnionFind: the
// roots are the same whatever the path compression).
struct NodeUnionFind {
  std::vector<std::int64_t> parent;
  std::int64_t next;
  explicit NodeUnionFind(std::int64_t n) : parent(static_cast<std::size_t>(2 * n - 1), -1), next(n) {}
  std::int64_t find(std::int64_t x) {
    std::int64_t r = x;
    while (parent[r] != -1) r = parent[r];
    while (x != r && parent[x] != r) {
      const std::int64_t up = parent[x];
      parent[x] = r;
      x = up;
    }
    return r;
  }
  void merge(std::int64_t a, std::int64_t b) {
    parent[a] = next;
    parent[b] = next;
    ++next;
  }
};

// The tree of the merges: stably sorted by height (numpy's mergesort), then
// labelled by union-find. smaller_first: SciPy's label() (the smaller root
// first); else scikit-learn's single_linkage_label (the roots of a and b in
// that order).
void label_merges(std::int64_t n, std::vector<Merge>& m, bool smaller_first, std::int64_t* children,
                  double* distances) {
  std::stable_sort(m.begin(), m.end(), [](const Merge& x, const Merge& y) { return x.w < y.w; });
  NodeUnionFind uf(n);
  for (std::size_t k = 0; k < m.size(); ++k) {
    std::int64_t a = uf.find(m[k].a), b = uf.find(m[k].b);
    if (smaller_first && b < a) std::swap(a, b);
    children[2 * k] = a;
    children[2 * k + 1] = b;
    distances[k] = m[k].w;
    uf.merge(a, b);
  }
}

// SciPy's nn_chain (scipy/cluster/_hierarchy.pyx) on the condensed matrix D
// (overwritten). The scans of a cluster's row and the updates run in
// parallel: a scan's answer is the first index of the row's minimum unless
// that minimum is not below the chain's previous element, which then wins
// (the sequential scan's "strictly smaller" rule), the same for any split.
void nn_chain(const Context& ctx, std::int64_t n, std::vector<double>& D, Linkage linkage, std::int64_t* children,
              double* distances) {
  std::vector<std::int64_t> size(static_cast<std::size_t>(n), 1), chain(static_cast<std::size_t>(n));
  std::vector<Merge> merges(static_cast<std::size_t>(n - 1));
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t nchunks = (n + kChunk - 1) / kChunk;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> cv(static_cast<std::size_t>(nchunks));
  std::vector<std::int64_t> ci(static_cast<std::size_t>(nchunks));
  std::int64_t len = 0, x = 0, y = 0;
  double current = inf;
  for (std::int64_t k = 0; k + 1 < n; ++k) {
    if (len == 0) {
      len = 1;
      for (std::int64_t i = 0; i < n; ++i)
        if (size[i] > 0) {
          chain[0] = i;
          break;
        }
    }
    for (;;) {
      x = chain[len - 1];
      if (len > 1) {
        y = chain[len - 2];
        current = D[condensed_index(n, x, y)];
      } else {
        current = inf;
      }
      parallel_for(ctx, nchunks, [&](std::int64_t c) {
        double bv = inf;
        std::int64_t bi = -1;
        const std::int64_t i1 = std::min(n, (c + 1) * kChunk);
        for (std::int64_t i = c * kChunk; i < i1; ++i) {
          if (size[i] == 0 || i == x) continue;
          const double v = D[condensed_index(n, x, i)];
          if (v < bv) {
            bv = v;
            bi = i;
          }
        }
        cv[c] = bv;
        ci[c] = bi;
      });
      for (std::int64_t c = 0; c < nchunks; ++c)
        if (cv[c] < current) {
          current = cv[c];
          y = ci[c];
        }
      if (len > 1 && y == chain[len - 2]) break;
      chain[len++] = y;
    }
    len -= 2;
    if (x > y) std::swap(x, y);
    const std::int64_t nx = size[x], ny = size[y];
    merges[k] = Merge{x, y, current};
    size[x] = 0;
    size[y] = nx + ny;
    const double dxy = current;
    const std::int64_t xx = x, yy = y;
    parallel_for(ctx, nchunks, [&](std::int64_t c) {
      const std::int64_t i1 = std::min(n, (c + 1) * kChunk);
      for (std::int64_t i = c * kChunk; i < i1; ++i) {
        const std::int64_t ni = size[i];
        if (ni == 0 || i == yy) continue;
        double& dy = D[condensed_index(n, i, yy)];
        dy = detail::agglo_update(linkage, D[condensed_index(n, i, xx)], dy, dxy, nx, ny, ni);
      }
    });
  }
  label_merges(n, merges, true, children, distances);
}

std::vector<double> condensed_storage(std::int64_t n, Linkage linkage) {
  TL_REQUIRE(n <= kAggloMaxCondensedSamples, ValueError, "AgglomerativeClustering: linkage='",
             linkage == Linkage::Ward ? "ward" : (linkage == Linkage::Complete ? "complete" : "average"),
             "' holds the n * (n - 1) / 2 float64 distances (", static_cast<double>(n) * (n - 1) * 4.0 / 1e9,
             " GB for n = ", n, "); at most ", kAggloMaxCondensedSamples,
             " samples are supported (linkage='single' takes any n)");
  try {
    return std::vector<double>(static_cast<std::size_t>(n * (n - 1) / 2));
  } catch (const std::bad_alloc&) {
    throw ValueError("AgglomerativeClustering: cannot allocate the " + std::to_string(n * (n - 1) / 2) +
                     " float64 distances of the condensed matrix");
  }
}

// Distance rows [r0, r1) of X into the condensed matrix: queries X[r0:r1]
// against X[r0 + 1:], each row's entries right of the diagonal.
struct CondensedState {
  double* out;
  std::int64_t n, r0;
};

void condensed_sink(void* s, std::int64_t row0, std::int64_t rows, const double* block) {
  auto* st = static_cast<CondensedState*>(s);
  const std::int64_t n = st->n, r0 = st->r0, width = n - r0 - 1;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t i = r0 + row0 + r;
    const std::int64_t lo = i - r0;  // column of the pair (i, i + 1)
    std::copy(block + r * width + lo, block + (r + 1) * width, st->out + condensed_index(n, i, i + 1));
  }
}

void check_out(std::int64_t n) { TL_REQUIRE(n >= 2, ValueError, "AgglomerativeClustering needs at least 2 samples, got ", n); }

}  // namespace

void agglomerative_tree(const Context& ctx, MatrixView<const double> X, Metric metric, Linkage linkage,
                        std::int64_t* children, double* distances) {
  check_placement(ctx, X, "X");
  const std::int64_t n = X.rows;
  check_out(n);
  TL_REQUIRE(X.col_stride == 1 || X.cols <= 1, ValueError, "X: rows must have unit stride");
  const AggloDist kind = detail::agglo_dist_of(metric);
  TL_REQUIRE(linkage != Linkage::Ward || kind == AggloDist::L2, ValueError, to_string(metric.kind),
             " was provided as metric. Ward can only work with euclidean distances (i.e. 'euclidean' and 'l2').");
  if (linkage == Linkage::Single) {
    AggloPoints p;
    p.x = X.data;
    p.n = n;
    p.d = X.cols;
    p.ld = X.row_stride;
    p.kind = kind;
    p.device = X.device;
    std::vector<std::int64_t> from(static_cast<std::size_t>(n - 1)), to(static_cast<std::size_t>(n - 1));
    std::vector<double> w(static_cast<std::size_t>(n - 1));
    ctx.dispatch(
        [&] {
          std::vector<double> norms;
          if (kind == AggloDist::Cosine) {
            norms.resize(static_cast<std::size_t>(n));
            parallel_for(ctx, n, [&](std::int64_t i) { norms[i] = dist::sqnorm(X.data + i * X.row_stride, X.cols); });
            p.sqnorm = norms.data();
          }
          detail::agglo_prim_cpu(ctx, p, from.data(), to.data(), w.data());
        },
        [&] { detail::agglo_prim_cuda(ctx, p, from.data(), to.data(), w.data()); });
    std::vector<Merge> m(static_cast<std::size_t>(n - 1));
    for (std::int64_t k = 0; k + 1 < n; ++k) {
      TL_REQUIRE(std::isfinite(w[k]), ValueError,
                 "AgglomerativeClustering: a distance overflows to infinity; scale X down");
      m[k] = Merge{from[k], to[k], w[k]};
    }
    // scikit-learn's own MST for its metrics; SciPy's (smaller root first) for cosine.
    label_merges(n, m, kind == AggloDist::Cosine, children, distances);
    return;
  }
  std::vector<double> D = condensed_storage(n, linkage);
  Metric m;
  m.kind = metric.kind;
  m.direct = true;
  for (std::int64_t r0 = 0; r0 + 1 < n;) {
    const std::int64_t width = n - r0 - 1;
    const std::int64_t rows = std::min(width, std::max<std::int64_t>(32, (std::int64_t(8) << 20) / width));
    MatrixView<const double> Q(X.data + r0 * X.row_stride, rows, X.cols, X.row_stride, 1, X.device);
    MatrixView<const double> I(X.data + (r0 + 1) * X.row_stride, width, X.cols, X.row_stride, 1, X.device);
    CondensedState st{D.data(), n, r0};
    ctx.dispatch([&] { detail::distance_blocks_cpu<double>(ctx, I, Q, m, &condensed_sink, &st); },
                 [&] { detail::distance_blocks_cuda<double>(ctx, I, Q, m, &condensed_sink, &st); });
    r0 += rows;
  }
  for (std::size_t k = 0; k < D.size(); ++k)
    TL_REQUIRE(std::isfinite(D[k]), ValueError,
               "AgglomerativeClustering: a distance overflows to infinity; scale X down");
  nn_chain(ctx, n, D, linkage, children, distances);
}

void agglomerative_tree_precomputed(const Context& ctx, MatrixView<const double> Dm, Linkage linkage,
                                    std::int64_t* children, double* distances) {
  TL_REQUIRE(Dm.on_host(), ValueError, "X: a precomputed distance matrix must be a host array");
  TL_REQUIRE(Dm.rows == Dm.cols, ValueError, "Distance matrix should be square, got matrix of shape (", Dm.rows,
             ", ", Dm.cols, ")");
  TL_REQUIRE(Dm.col_stride == 1 || Dm.cols <= 1, ValueError, "X: rows must have unit stride");
  const std::int64_t n = Dm.rows;
  check_out(n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j)
      TL_REQUIRE(std::isfinite(Dm.data[i * Dm.row_stride + j]), ValueError,
                 "The condensed distance matrix must contain only finite values.");
  if (linkage == Linkage::Single) {
    AggloPoints p;
    p.x = Dm.data;
    p.n = n;
    p.ld = Dm.row_stride;
    p.kind = AggloDist::Precomputed;
    std::vector<std::int64_t> from(static_cast<std::size_t>(n - 1)), to(static_cast<std::size_t>(n - 1));
    std::vector<double> w(static_cast<std::size_t>(n - 1));
    detail::agglo_prim_cpu(ctx, p, from.data(), to.data(), w.data());
    std::vector<Merge> m(static_cast<std::size_t>(n - 1));
    for (std::int64_t k = 0; k + 1 < n; ++k) m[k] = Merge{from[k], to[k], w[k]};
    label_merges(n, m, true, children, distances);
    return;
  }
  std::vector<double> D = condensed_storage(n, linkage);
  for (std::int64_t i = 0; i + 1 < n; ++i)
    std::copy(Dm.data + i * Dm.row_stride + i + 1, Dm.data + i * Dm.row_stride + n, D.data() + condensed_index(n, i, i + 1));
  nn_chain(ctx, n, D, linkage, children, distances);
}

namespace {
void heappush(std::vector<std::int64_t>& h, std::int64_t item) { detail::py_heappush(h, item, std::less<>{}); }
void heappushpop(std::vector<std::int64_t>& h, std::int64_t item) {
  if (!h.empty() && h[0] < item) {
    h[0] = item;  // the old top is returned (and dropped) by _hc_cut
    detail::py_sift_up(h, 0, std::less<>{});
  }
}
}  // namespace

void agglomerative_cut(std::int64_t n_clusters, std::int64_t n_leaves, const std::int64_t* children,
                       std::int64_t* labels) {
  TL_REQUIRE(n_leaves >= 1, ValueError, "agglomerative_cut: n_leaves = ", n_leaves);
  TL_REQUIRE(n_clusters >= 1, ValueError, "The 'n_clusters' parameter of AgglomerativeClustering must be an int "
             "in the range [1, inf) or None. Got ", n_clusters, " instead.");
  TL_REQUIRE(n_clusters <= n_leaves, ValueError, "Cannot extract more clusters than samples: ", n_clusters,
             " clusters were given for a tree with ", n_leaves, " leaves.");
  const std::int64_t nodes = 2 * n_leaves - 1;
  for (std::int64_t k = 0; k + 1 < n_leaves; ++k)
    for (int s = 0; s < 2; ++s) {
      const std::int64_t c = children[2 * k + s];
      TL_REQUIRE(c >= 0 && c < n_leaves + k, ValueError, "agglomerative_cut: children[", k, "] = ", c,
                 " is not a node below node ", n_leaves + k);
    }
  if (n_leaves == 1) {
    labels[0] = 0;
    return;
  }
  // _hc_cut: negated node ids in a heap, the largest node split first.
  std::vector<std::int64_t> heap{-(std::max(children[2 * (n_leaves - 2)], children[2 * (n_leaves - 2) + 1]) + 1)};
  for (std::int64_t c = 0; c + 1 < n_clusters; ++c) {
    const std::int64_t node = -heap[0];
    TL_REQUIRE(node >= n_leaves, ValueError, "agglomerative_cut: the tree has a leaf above its internal nodes");
    const std::int64_t* ch = children + 2 * (node - n_leaves);
    heappush(heap, -ch[0]);
    heappushpop(heap, -ch[1]);
  }
  std::vector<std::int64_t> node_label(static_cast<std::size_t>(nodes), -1);
  for (std::size_t i = 0; i < heap.size(); ++i) node_label[static_cast<std::size_t>(-heap[i])] = static_cast<std::int64_t>(i);
  for (std::int64_t v = nodes - 1; v >= n_leaves; --v) {
    const std::int64_t l = node_label[v];
    if (l < 0) continue;
    const std::int64_t* ch = children + 2 * (v - n_leaves);
    node_label[ch[0]] = l;
    node_label[ch[1]] = l;
  }
  std::copy(node_label.begin(), node_label.begin() + n_leaves, labels);
}

void agglomerative_label_edges(std::int64_t n, const std::int64_t* a, const std::int64_t* b, const double* w,
                               std::int64_t* children, double* distances) {
  check_out(n);
  std::vector<Merge> m(static_cast<std::size_t>(n - 1));
  for (std::int64_t k = 0; k + 1 < n; ++k) {
    TL_REQUIRE(a[k] >= 0 && a[k] < n && b[k] >= 0 && b[k] < n, ValueError, "agglomerative_label_edges: edge ", k,
               " joins nodes outside [0, ", n, ")");
    m[static_cast<std::size_t>(k)] = Merge{a[k], b[k], w[k]};
  }
  label_merges(n, m, false, children, distances);
}

}  // namespace tl
