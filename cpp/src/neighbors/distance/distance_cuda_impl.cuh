// CUDA backend of pairwise distances and brute-force nearest neighbours: the
// templates. Translation units that compile in parallel instantiate them:
// distance_cuda_<dtype>.cu (pairwise distances, distance blocks) and
// distance_cuda_<dtype>_knn.cu (the k-nearest search) the entry points, and
// distance_cuda_<dtype>_<family>.cu the kernels of one metric family
// (TL_DISTANCE_CUDA_FAMILY). One file held every kernel variant and was the
// longest step of the build.
// The templates are split by stage: distance_cuda_pairwise.cuh,
// distance_cuda_knn.cuh (the exact search) and distance_cuda_knn_fast.cuh
// (the tensor-core and certified searches); this file holds the entry points
// and the instantiation macros.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "neighbors/distance/distance_cuda_knn.cuh"
#include "neighbors/distance/distance_cuda_knn_fast.cuh"
#include "neighbors/distance/distance_cuda_pairwise.cuh"

namespace tl::detail {

template <class T>
void pairwise_distances_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, Metric metric,
                             MatrixView<T> out) {
  const PreparedPair<T> p(ctx, X, Y, metric);
  const std::int64_t m = X.rows, n = Y.rows, d = X.cols;
  if (!out.on_host()) {
    TL_REQUIRE(out.col_stride == 1, ValueError, "out: a CUDA output needs unit column stride");
    launch_pairwise(p.a.rows.view.data, p.a.norm_ptr(), m, p.b.rows.view.data, p.b.norm_ptr(), n, d, metric, out.data,
                    out.row_stride, p.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    return;
  }
  pairwise_batches(p, m, n, d, metric, [&](std::int64_t r0, std::int64_t rows, const T* buf) {
    TL_CUDA_CHECK(cudaMemcpy2DAsync(out.data + r0 * out.row_stride, sizeof(T) * out.row_stride, buf, sizeof(T) * n,
                                    sizeof(T) * n, rows, cudaMemcpyDeviceToHost, p.stream));
  });
  TL_CUDA_CHECK(cudaStreamSynchronize(p.stream));
}

template <class T>
void distance_blocks_cuda(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                          DistanceBlockSink<T> sink, void* state) {
  const PreparedPair<T> p(ctx, queries, index, metric);
  const std::int64_t m = queries.rows, n = index.rows, d = queries.cols;
  std::vector<T> host(static_cast<std::size_t>(batch_rows<T>(m, n) * n));
  pairwise_batches(p, m, n, d, metric, [&](std::int64_t r0, std::int64_t rows, const T* buf) {
    TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), buf, sizeof(T) * rows * n, cudaMemcpyDeviceToHost, p.stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    sink(state, r0, rows, host.data());
  });
}

namespace {

// The search of knn_search_cuda by knn_split_kernel (or, with wm, the fused
// tensor-core kernel): the m queries Q (norms qn, device rows) against the
// index side ys; k nearest per query into the host outputs.
template <class T>
void knn_search_split(const T* Qall, const T* qnall, std::int64_t m, const Side<T>& ys, std::int64_t n,
                      std::int64_t d, const Metric& metric, std::int64_t k, bool wm, int dev, T* dist_out,
                      std::int64_t* ind_out, cudaStream_t stream) {
  const bool sq = metric.kind == MetricKind::Euclidean || metric.kind == MetricKind::SqEuclidean;
  const std::int64_t BM = wm ? kWmRows : Cfg<T>::BM, BN = wm ? kWmCols : Cfg<T>::BN;
  const std::int64_t ntiles = (n + BN - 1) / BN;
  // Splits of the index so that the grid fills the GPU about four times over
  // with a short last wave (blocks in flight from the occupancy calculator);
  // the result does not depend on the split (see knn_split_kernel).
  const std::int64_t qtiles_all = (m + BM - 1) / BM;
  const std::int64_t slots = static_cast<std::int64_t>(sm_count(dev)) *
                            (wm ? knn_wmma_blocks_per_sm(sq) : knn_blocks_per_sm<T>(metric));
  std::int64_t nsplit = std::max<std::int64_t>(1, slots * 4 / qtiles_all);
  nsplit = std::min<std::int64_t>({nsplit, ntiles, k > 256 ? 16 : 64});
  const std::int64_t tiles_per_split = (ntiles + nsplit - 1) / nsplit;
  nsplit = (ntiles + tiles_per_split - 1) / tiles_per_split;
  // Queries per batch: the lists take at most about 512 MiB.
  const std::int64_t per_query = nsplit * k * static_cast<std::int64_t>(sizeof(T) + sizeof(std::int64_t));
  std::int64_t mb = std::max<std::int64_t>(BM, (std::int64_t(512) << 20) / per_query / BM * BM);
  mb = std::min(mb, m);
  DeviceBuffer<T> lv(static_cast<std::size_t>(mb * nsplit * k), dev);
  DeviceBuffer<std::int64_t> li(static_cast<std::size_t>(mb * nsplit * k), dev);
  DeviceBuffer<T> dv(static_cast<std::size_t>(mb * k), dev);
  DeviceBuffer<std::int64_t> iv(static_cast<std::size_t>(mb * k), dev);
  for (std::int64_t q0 = 0; q0 < m; q0 += mb) {
    const std::int64_t rows = std::min(mb, m - q0);
    const std::int64_t total = rows * nsplit * k;
    start_lists(lv.data(), li.data(), total, stream);
    const dim3 grid(static_cast<unsigned>((rows + BM - 1) / BM), static_cast<unsigned>(nsplit));
    const T* Q = Qall + q0 * d;
    const T* qn = qnall ? qnall + q0 : nullptr;
    const T* Y = ys.rows.view.data;
    bool launched = false;
    if constexpr (std::is_same_v<T, float>) {
      if (wm) {
        const auto kernel = sq ? knn_wmma_kernel<true> : knn_wmma_kernel<false>;
        kernel<<<grid, kWmThreads, 0, stream>>>(Q, qn, rows, Y, ys.norm_ptr(), n, static_cast<int>(d), metric.kind, k,
                                                tiles_per_split, static_cast<int>(nsplit), lv.data(), li.data());
        TL_CUDA_CHECK_LAUNCH("knn_wmma_kernel");
        launched = true;
      }
    }
    if (!launched)
      with_family(metric, [&](auto fam) {
        constexpr Family F = decltype(fam)::value;
        const bool dot = F == Family::Dot;
        launch_knn_split_kernel<T, F>(grid, stream, Q, dot ? qn : nullptr, rows, Y, dot ? ys.norm_ptr() : nullptr, n,
                                      d, metric, k, tiles_per_split, static_cast<int>(nsplit), lv.data(), li.data());
      });
    finish_lists(lv.data(), li.data(), rows, nsplit, k, metric, dv.data(), iv.data(), dist_out + q0 * k,
                 ind_out + q0 * k, stream);
  }
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

template <class T>
void knn_search_cuda(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                     std::int64_t k, T* dist_out, std::int64_t* ind_out) {
  const PreparedPair<T> p(ctx, queries, index, metric);
  const int dev = p.dev;
  cudaStream_t stream = p.stream;
  const Side<T>&qs = p.a, &ys = p.b;
  const std::int64_t m = queries.rows, n = index.rows, d = queries.cols;
  const bool wmma = knn_fast_kernel_is_wmma();
  if (!wmma && knn_search_fast(ctx, qs, ys, m, n, d, metric, k, dist_out, ind_out, stream)) return;
  // The certified search (identical and deterministic modes): the queries it
  // leaves undecided go through knn_split_kernel, gathered, and their rows of
  // the outputs are filled from there.
  std::vector<std::int64_t> undecided;
  if (knn_search_fast(ctx, qs, ys, m, n, d, metric, k, dist_out, ind_out, stream, &undecided)) {
    const std::int64_t u = static_cast<std::int64_t>(undecided.size());
    if (u == 0) return;
    DeviceBuffer<std::int64_t> idx(static_cast<std::size_t>(u), dev);
    DeviceBuffer<T> qu(static_cast<std::size_t>(u * d), dev), qnu(static_cast<std::size_t>(u), dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(idx.data(), undecided.data(), sizeof(std::int64_t) * u, cudaMemcpyHostToDevice,
                                  stream));
    gather_rows_kernel<T><<<blocks_for(u * d, 256), 256, 0, stream>>>(
        qs.rows.view.data, qs.norm_ptr(), d, idx.data(), u, qu.data(), qnu.data());
    TL_CUDA_CHECK_LAUNCH("gather_rows_kernel");
    std::vector<T> du(static_cast<std::size_t>(u * k));
    std::vector<std::int64_t> iu(static_cast<std::size_t>(u * k));
    knn_search_split(qu.data(), qs.norm_ptr() ? qnu.data() : nullptr, u, ys, n, d, metric, k, false, dev, du.data(),
                     iu.data(), stream);
    for (std::int64_t j = 0; j < u; ++j) {
      std::copy_n(du.data() + j * k, k, dist_out + undecided[j] * k);
      std::copy_n(iu.data() + j * k, k, ind_out + undecided[j] * k);
    }
    return;
  }
  // TWINLEARN_KNN_FAST_KERNEL=wmma with fast mode, float, a dot-product
  // metric and an index of at least kKnnFastMinIndex rows: the fused
  // tensor-core kernel in place of the SIMT one, with the same splits and
  // lists.
  const bool wm = wmma && std::is_same_v<T, float> && ctx.mode() == NumericMode::Fast &&
                  dist::family_of(metric) == Family::Dot && n >= kKnnFastMinIndex && d > 0;
  knn_search_split(qs.rows.view.data, qs.norm_ptr(), m, ys, n, d, metric, k, wm, dev, dist_out, ind_out, stream);
}

}  // namespace tl::detail

// The entry points of distance_impl.hpp for one dtype, in two parts that
// separate translation units compile in parallel: the k-nearest search (its
// top-k kernels are most of the build time) and the rest.
#define TL_DISTANCE_CUDA_INST_KNN(T)                                                                              \
  namespace tl::detail {                                                                                          \
  template void knn_search_cuda<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric, std::int64_t,  \
                                   T*, std::int64_t*);                                                            \
  }
#define TL_DISTANCE_CUDA_INST_PAIRWISE(T)                                                                         \
  namespace tl::detail {                                                                                          \
  template void pairwise_distances_cuda<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric,        \
                                           MatrixView<T>);                                                        \
  template void distance_blocks_cuda<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric,           \
                                        DistanceBlockSink<T>, void*);                                             \
  }

// One family's kernels for one dtype, defined in the including file: the
// launchers of pairwise_kernel<T, F> and knn_split_kernel<T, F>, and the
// latter's occupancy.
#define TL_DISTANCE_CUDA_FAMILY(T, F)                                                                            \
  namespace tl::detail {                                                                                         \
  template <>                                                                                                    \
  void launch_pairwise_kernel<T, F>(unsigned grid, cudaStream_t stream, const T* X, const T* xn, std::int64_t m,  \
                                    const T* Y, const T* yn, std::int64_t n, std::int64_t d, MetricKind kind, T p, \
                                    std::int64_t ncol_tiles, T* out, std::int64_t ldo) {                         \
    pairwise_kernel<T, F><<<grid, tile::kThreads, 0, stream>>>(X, xn, m, Y, yn, n, d, kind, p, ncol_tiles, out,   \
                                                               ldo);                                             \
  }                                                                                                              \
  template <>                                                                                                    \
  void launch_knn_split_kernel<T, F>(dim3 grid, cudaStream_t stream, const T* Q, const T* qn, std::int64_t m,     \
                                     const T* Y, const T* yn, std::int64_t n, std::int64_t d, Metric metric,      \
                                     std::int64_t k, std::int64_t tiles_per_split, int nsplit, T* lv,             \
                                     std::int64_t* li) {                                                         \
    const std::size_t bytes = knn_smem_bytes<T>();                                                               \
    TL_CUDA_CHECK(cudaFuncSetAttribute(knn_split_kernel<T, F>, cudaFuncAttributeMaxDynamicSharedMemorySize,      \
                                       static_cast<int>(bytes)));                                                \
    knn_split_kernel<T, F><<<grid, tile::kThreads, bytes, stream>>>(Q, qn, m, Y, yn, n, d, metric.kind,           \
                                                                    static_cast<T>(metric.p), k, tiles_per_split, \
                                                                    nsplit, lv, li);                             \
    TL_CUDA_CHECK_LAUNCH("knn_split_kernel");                                                                    \
  }                                                                                                              \
  template <>                                                                                                    \
  int knn_split_occupancy<T, F>() {                                                                              \
    const std::size_t bytes = knn_smem_bytes<T>();                                                               \
    TL_CUDA_CHECK(cudaFuncSetAttribute(knn_split_kernel<T, F>, cudaFuncAttributeMaxDynamicSharedMemorySize,      \
                                       static_cast<int>(bytes)));                                                \
    int blocks = 0;                                                                                              \
    TL_CUDA_CHECK(                                                                                               \
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, knn_split_kernel<T, F>, tile::kThreads, bytes));  \
    return blocks > 0 ? blocks : 1;                                                                              \
  }                                                                                                              \
  }

