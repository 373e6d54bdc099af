// Validation and dispatch of DBSCAN; the eps-neighbourhood graph from the
// distance blocks of neighbors/distance.
#include <algorithm>
#include <cmath>
#include <string>

#include "cluster/dbscan/dbscan_common.hpp"
#include "neighbors/distance/distance_impl.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl {

namespace {

void check_params(const DbscanParams& p) {
  TL_REQUIRE(p.eps > 0.0 && std::isfinite(p.eps), ValueError,
             "The 'eps' parameter of DBSCAN must be a float in the range (0.0, inf). Got ", p.eps, " instead.");
  TL_REQUIRE(p.min_samples >= 1, ValueError,
             "The 'min_samples' parameter of DBSCAN must be an int in the range [1, inf). Got ", p.min_samples,
             " instead.");
}

// The sink of the distance blocks: each block of query rows becomes the
// next rows of the CSR graph. Rows are counted, then filled, in parallel;
// each row's entries are its columns in increasing order, so the graph does
// not depend on the thread count or on the block size.
template <class T>
struct GraphState {
  const Context* ctx;
  double eps;
  std::int64_t n;
  std::vector<std::int64_t>* offsets;
  std::vector<std::int64_t>* ind;
};

template <class T>
void graph_sink(void* s, std::int64_t row0, std::int64_t rows, const T* block) {
  auto* st = static_cast<GraphState<T>*>(s);
  const std::int64_t n = st->n;
  const double eps = st->eps;
  std::vector<std::int64_t>& off = *st->offsets;
  parallel_for(*st->ctx, rows, [&](std::int64_t r) {
    const T* row = block + r * n;
    std::int64_t c = 0;
    for (std::int64_t j = 0; j < n; ++j) c += static_cast<double>(row[j]) <= eps;
    off[row0 + r + 1] = c;
  });
  for (std::int64_t r = 0; r < rows; ++r) off[row0 + r + 1] += off[row0 + r];
  st->ind->resize(static_cast<std::size_t>(off[row0 + rows]));
  std::int64_t* out = st->ind->data();
  parallel_for(*st->ctx, rows, [&](std::int64_t r) {
    const T* row = block + r * n;
    std::int64_t k = off[row0 + r];
    for (std::int64_t j = 0; j < n; ++j)
      if (static_cast<double>(row[j]) <= eps) out[k++] = j;
  });
}

}  // namespace

template <class T>
void eps_neighborhoods(const Context& ctx, MatrixView<const T> X, Metric metric, double eps,
                       std::vector<std::int64_t>& offsets, std::vector<std::int64_t>& ind) {
  check_placement(ctx, X, "X");
  const std::int64_t n = X.rows;
  offsets.assign(static_cast<std::size_t>(n + 1), 0);
  ind.clear();
  if (n == 0) return;
  GraphState<T> st{&ctx, eps, n, &offsets, &ind};
  ctx.dispatch([&] { detail::distance_blocks_cpu<T>(ctx, X, X, metric, &graph_sink<T>, &st); },
               [&] { detail::distance_blocks_cuda<T>(ctx, X, X, metric, &graph_sink<T>, &st); });
}

void dbscan_from_graph(const Context& ctx, std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                       const double* weight, const DbscanParams& params, std::int64_t* labels,
                       std::uint8_t* is_core) {
  check_params(params);
  TL_REQUIRE(n >= 0, ValueError, "DBSCAN: n = ", n, " rows");
  if (n == 0) return;
  TL_REQUIRE(offsets[0] == 0, ValueError, "DBSCAN: the neighbourhood graph's offsets must start at 0");
  // Rows strictly ascending and in range: the weighted counts' order and the
  // binary searches rely on it.
  std::int64_t bad = -1;
  for (std::int64_t i = 0; i < n && bad < 0; ++i) {
    if (offsets[i + 1] < offsets[i]) {
      bad = i;
      break;
    }
    for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      const std::int64_t j = ind[k];
      if (j < 0 || j >= n || (k > offsets[i] && j <= ind[k - 1])) {
        bad = i;
        break;
      }
    }
  }
  TL_REQUIRE(bad < 0, ValueError, "DBSCAN: row ", bad,
             " of the neighbourhood graph is not strictly ascending within [0, n)");
  ctx.dispatch([&] { detail::dbscan_from_graph_cpu(ctx, n, offsets, ind, weight, params, labels, is_core); },
               [&] { detail::dbscan_from_graph_cuda(ctx, n, offsets, ind, weight, params, labels, is_core); });
}

template <class T>
std::int64_t dbscan_fit(const Context& ctx, MatrixView<const T> X, Metric metric, const double* weight,
                        const DbscanParams& params, std::int64_t* labels, std::uint8_t* is_core) {
  check_params(params);
  std::vector<std::int64_t> offsets, ind;
  eps_neighborhoods<T>(ctx, X, metric, params.eps, offsets, ind);
  dbscan_from_graph(ctx, X.rows, offsets.data(), ind.data(), weight, params, labels, is_core);
  return offsets.empty() ? 0 : offsets.back();
}

#define TL_INST(T)                                                                                              \
  template void eps_neighborhoods<T>(const Context&, MatrixView<const T>, Metric, double,                        \
                                     std::vector<std::int64_t>&, std::vector<std::int64_t>&);                    \
  template std::int64_t dbscan_fit<T>(const Context&, MatrixView<const T>, Metric, const double*,                \
                                      const DbscanParams&, std::int64_t*, std::uint8_t*);
TL_INST(float)
TL_INST(double)
#undef TL_INST

}  // namespace tl
