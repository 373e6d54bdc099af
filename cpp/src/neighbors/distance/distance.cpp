// Validation and dispatch of pairwise distances and nearest-neighbour search.
#include <cmath>
#include <limits>

#include "neighbors/distance/distance_impl.hpp"

namespace tl {

Metric parse_metric(const std::string& name, double p) {
  Metric m;
  if (name == "euclidean" || name == "l2") {
    m.kind = MetricKind::Euclidean;
  } else if (name == "sqeuclidean") {
    m.kind = MetricKind::SqEuclidean;
  } else if (name == "manhattan" || name == "cityblock" || name == "l1") {
    m.kind = MetricKind::Manhattan;
  } else if (name == "cosine") {
    m.kind = MetricKind::Cosine;
  } else if (name == "chebyshev" || name == "infinity") {
    m.kind = MetricKind::Chebyshev;
  } else if (name == "minkowski") {
    TL_REQUIRE(!(p < 1.0) && !std::isnan(p), ValueError, "minkowski needs p >= 1; got p=", p);
    if (p == 1.0) {
      m.kind = MetricKind::Manhattan;
    } else if (p == 2.0) {
      m.kind = MetricKind::Euclidean;
    } else if (std::isinf(p)) {
      m.kind = MetricKind::Chebyshev;
    } else {
      m.kind = MetricKind::Minkowski;
      m.p = p;
    }
  } else {
    throw ValueError("metric '" + name +
                     "' is not supported; use 'euclidean', 'sqeuclidean', 'manhattan', 'cosine', 'chebyshev' or "
                     "'minkowski'");
  }
  return m;
}

const char* to_string(MetricKind k) {
  switch (k) {
    case MetricKind::Euclidean: return "euclidean";
    case MetricKind::SqEuclidean: return "sqeuclidean";
    case MetricKind::Manhattan: return "manhattan";
    case MetricKind::Cosine: return "cosine";
    case MetricKind::Chebyshev: return "chebyshev";
    case MetricKind::Minkowski: return "minkowski";
  }
  return "?";
}

namespace {
template <class T>
void check_pair(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, const char* an, const char* bn) {
  check_placement(ctx, A, an);
  check_placement(ctx, B, bn);
  TL_REQUIRE(A.cols == B.cols, ValueError, "Incompatible dimension for ", an, " and ", bn, " matrices: ", an,
             ".shape[1] == ", A.cols, " while ", bn, ".shape[1] == ", B.cols);
}
}  // namespace

template <class T>
void pairwise_distances(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, Metric metric,
                        MatrixView<T> out) {
  check_pair(ctx, X, Y, "X", "Y");
  check_placement(ctx, out, "out");
  TL_REQUIRE(out.rows == X.rows && out.cols == Y.rows, ValueError, "pairwise_distances: out has shape (", out.rows,
             ", ", out.cols, "), expected (", X.rows, ", ", Y.rows, ")");
  if (X.rows == 0 || Y.rows == 0) return;
  ctx.dispatch([&] { detail::pairwise_distances_cpu(ctx, X, Y, metric, out); },
               [&] { detail::pairwise_distances_cuda(ctx, X, Y, metric, out); });
}

template <class T>
void knn_search(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                std::int64_t k, T* dist, std::int64_t* ind) {
  check_pair(ctx, queries, index, "X", "the fitted data");
  TL_REQUIRE(k >= 1 && k <= index.rows, ValueError, "Expected n_neighbors <= n_samples_fit, but n_neighbors = ", k,
             ", n_samples_fit = ", index.rows);
  if (queries.rows == 0) return;
  // The fused GPU selection keeps k up to 1024 per list; past that the CPU
  // backend serves (same bits: the k nearest by (value, index) are unique).
  if (ctx.is_cuda() && k > 1024) {
    TL_REQUIRE(index.on_host() && queries.on_host(), ValueError,
               "n_neighbors > 1024 on the GPU needs host arrays (the selection runs on the CPU)");
    Context cpu(Device{}, ctx.n_threads(), ctx.mode(), ctx.seed());
    detail::knn_search_cpu(cpu, index, queries, metric, k, dist, ind);
    return;
  }
  ctx.dispatch([&] { detail::knn_search_cpu(ctx, index, queries, metric, k, dist, ind); },
               [&] { detail::knn_search_cuda(ctx, index, queries, metric, k, dist, ind); });
}

namespace {
template <class T>
struct RadiusState {
  double radius;
  std::int64_t n;
  std::int64_t* offsets;
  std::vector<std::int64_t>* ind;
  std::vector<T>* dist;
};
template <class T>
void radius_sink(void* s, std::int64_t row0, std::int64_t rows, const T* block) {
  auto* st = static_cast<RadiusState<T>*>(s);
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = block + r * st->n;
    for (std::int64_t j = 0; j < st->n; ++j) {
      if (static_cast<double>(row[j]) <= st->radius) {
        st->ind->push_back(j);
        st->dist->push_back(row[j]);
      }
    }
    st->offsets[row0 + r + 1] = static_cast<std::int64_t>(st->ind->size());
  }
}
}  // namespace

template <class T>
void radius_search(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                   double radius, std::int64_t* offsets, std::vector<std::int64_t>& ind, std::vector<T>& dist) {
  check_pair(ctx, queries, index, "X", "the fitted data");
  offsets[0] = 0;
  if (queries.rows == 0) return;
  if (index.rows == 0) {
    for (std::int64_t i = 0; i < queries.rows; ++i) offsets[i + 1] = 0;
    return;
  }
  RadiusState<T> st{radius, index.rows, offsets, &ind, &dist};
  ctx.dispatch([&] { detail::distance_blocks_cpu<T>(ctx, index, queries, metric, &radius_sink<T>, &st); },
               [&] { detail::distance_blocks_cuda<T>(ctx, index, queries, metric, &radius_sink<T>, &st); });
}

#define TL_INST(T)                                                                                                \
  template void pairwise_distances<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric,             \
                                      MatrixView<T>);                                                             \
  template void knn_search<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric, std::int64_t, T*,   \
                              std::int64_t*);                                                                     \
  template void radius_search<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric, double,          \
                                 std::int64_t*, std::vector<std::int64_t>&, std::vector<T>&);
TL_INST(float)
TL_INST(double)
#undef TL_INST

}  // namespace tl
