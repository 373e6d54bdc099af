// Validation and dispatch of kernel density sums; the chunk trees and the
// final log run here, on the host, for both backends.
#include <cmath>
#include <vector>

#include "neighbors/kde/kde_impl.hpp"
#include "twinlearn/core/error.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl {

KdeKernel parse_kde_kernel(const std::string& name) {
  if (name == "gaussian") return KdeKernel::Gaussian;
  if (name == "tophat") return KdeKernel::Tophat;
  if (name == "epanechnikov") return KdeKernel::Epanechnikov;
  if (name == "exponential") return KdeKernel::Exponential;
  if (name == "linear") return KdeKernel::Linear;
  if (name == "cosine") return KdeKernel::Cosine;
  throw ValueError("kernel '" + name +
                   "' is not supported; use 'gaussian', 'tophat', 'epanechnikov', 'exponential', 'linear' or 'cosine'");
}

const char* to_string(KdeKernel k) {
  switch (k) {
    case KdeKernel::Gaussian: return "gaussian";
    case KdeKernel::Tophat: return "tophat";
    case KdeKernel::Epanechnikov: return "epanechnikov";
    case KdeKernel::Exponential: return "exponential";
    case KdeKernel::Linear: return "linear";
    case KdeKernel::Cosine: return "cosine";
  }
  return "?";
}

template <class T>
void kde_log_sum(const Context& ctx, MatrixView<const T> train, const T* weights, MatrixView<const T> queries,
                 Metric metric, KdeKernel kernel, double bandwidth, T* out) {
  check_placement(ctx, train, "the fitted data");
  check_placement(ctx, queries, "X");
  TL_REQUIRE(queries.cols == train.cols, ValueError, "X has ", queries.cols, " features, but KernelDensity is fitted with ",
             train.cols, " features");
  TL_REQUIRE(train.rows >= 1, ValueError, "kde_log_sum: the fitted data has no rows");
  TL_REQUIRE(bandwidth > 0.0 && std::isfinite(bandwidth) && std::isfinite(static_cast<double>(static_cast<T>(bandwidth))) &&
                 static_cast<T>(bandwidth) > T(0),
             ValueError, "bandwidth must be a finite number > 0 in the data's dtype; got ", bandwidth);
  TL_REQUIRE(metric.kind == MetricKind::Euclidean || metric.kind == MetricKind::Manhattan ||
                 metric.kind == MetricKind::Chebyshev || metric.kind == MetricKind::Minkowski,
             ValueError, "metric '", to_string(metric.kind),
             "' is not supported by KernelDensity; use 'euclidean', 'manhattan', 'chebyshev' or 'minkowski'");
  const std::int64_t m = queries.rows, nchunks = reduce_num_chunks(train.rows);
  if (m == 0) return;
  kde::Params<T> c;
  c.kernel = kernel;
  c.metric = metric.kind;
  c.p = static_cast<T>(metric.p);
  c.h = static_cast<T>(bandwidth);
  c.h2 = num::mul(c.h, c.h);
  std::vector<T> partials(static_cast<std::size_t>(m * nchunks));
  auto run = [&](kde::Pass pass, const T* shift) {
    ctx.dispatch(
        [&] { detail::kde_chunk_partials_cpu<T>(ctx, train, weights, queries, c, pass, shift, partials.data()); },
        [&] { detail::kde_chunk_partials_cuda<T>(ctx, train, weights, queries, c, pass, shift, partials.data()); });
  };
  // The chunk tree of query i's partials (core/tree.hpp), in place.
  auto chunk_tree = [&](kde::Pass pass, std::int64_t i) {
    T* p = partials.data() + i * nchunks;
    tree_reduce_inplace(p, nchunks, 1, [pass](T a, T b) { return kde::merge(pass, a, b); });
    return p[0];
  };
  if (kde_kernel_is_log(kernel)) {
    std::vector<T> shift(static_cast<std::size_t>(m));
    run(kde::Pass::Max, nullptr);
    for (std::int64_t i = 0; i < m; ++i) shift[i] = chunk_tree(kde::Pass::Max, i);
    run(kde::Pass::Sum, shift.data());
    for (std::int64_t i = 0; i < m; ++i) {
      const T s = chunk_tree(kde::Pass::Sum, i);
      out[i] = shift[i] == kde::neg_inf<T>() ? shift[i] : num::add(shift[i], num::log(s));
    }
  } else {
    run(kde::Pass::Sum, nullptr);
    for (std::int64_t i = 0; i < m; ++i) {
      const T s = chunk_tree(kde::Pass::Sum, i);
      out[i] = s > T(0) ? num::log(s) : kde::neg_inf<T>();
    }
  }
}

#define TL_INST(T)                                                                                          \
  template void kde_log_sum<T>(const Context&, MatrixView<const T>, const T*, MatrixView<const T>, Metric, \
                               KdeKernel, double, T*);
TL_INST(float)
TL_INST(double)
#undef TL_INST

}  // namespace tl
