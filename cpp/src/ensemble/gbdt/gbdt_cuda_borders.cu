// CUDA backend of the gradient-boosted trees: borders and bins. Each
// feature's borders from a sorted sample of its values (the CPU's sample,
// sort order and selection), then every value's bin.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "ensemble/gbdt/gbdt_cuda_common.cuh"
#include "ensemble/gbdt/gbdt_weighted_borders.hpp"

namespace tl::gbdt_cuda {
namespace {

// Grid-stride over the n*F elements of row-major X (one thread per element
// per step; consecutive threads read consecutive addresses). NaN counts per
// feature and one infinity count, with global atomics (integers: order-free).
template <class T>
__global__ void count_nan_kernel(const T* __restrict__ X, std::int64_t n, std::int64_t F, ull* __restrict__ nan,
                                 ull* __restrict__ ninf) {
  const std::int64_t total = n * F;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const T v = X[e];
    if (num::is_nan(v)) atomicAdd(nan + e % F, 1ULL);
    if (num::is_inf(v)) atomicAdd(ninf, 1ULL);
  }
}

// One thread per (feature fl of the batch, sample k), k fastest: writes the
// canonical key of X[row_k, f0 + fl] to sample[fl * S + k] (coalesced
// writes) and counts NaN keys per feature.
template <class T>
__global__ void gather_sample_kernel(const T* __restrict__ X, std::int64_t n, std::int64_t F, std::int64_t S,
                                     std::int64_t f0, std::int64_t Fb, double* __restrict__ sample,
                                     ull* __restrict__ snan) {
  const std::int64_t total = Fb * S;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t fl = e / S, k = e % S;
    const std::int64_t row = n <= gbdt::kBorderSample ? k : k * n / S;
    const double v = gbdt::canonical_key(static_cast<double>(X[row * F + f0 + fl]));
    sample[e] = v;
    if (num::is_nan(v)) atomicAdd(snan + fl, 1ULL);
  }
}

// One block (1024 threads) per feature of the batch. The sorted sample's
// non-NaN prefix v[0..m) is scanned in tiles of 1024 positions: thread t
// flags position base + t when it starts a new distinct value, a block-wide
// exclusive scan gives each flagged position its rank, so bpos lists the
// boundaries in increasing order exactly as the CPU's loop does. Thread 0
// then selects the borders with the shared rule (gbdt::select_borders) and
// adds the NaN border.
constexpr int kBorderThreads = 1024;
__global__ void __launch_bounds__(kBorderThreads)
    borders_kernel(const double* __restrict__ sorted, std::int64_t S, const ull* __restrict__ snan,
                   const ull* __restrict__ nan_all, std::int64_t f0, int border_count, int nan_mode,
                   std::int32_t* __restrict__ bpos_all, double* __restrict__ borders_out, int* __restrict__ count_out) {
  using BlockScan = cub::BlockScan<int, kBorderThreads>;
  __shared__ typename BlockScan::TempStorage scan_tmp;
  __shared__ int running;
  const std::int64_t fl = blockIdx.x;
  const std::int64_t f = f0 + fl;
  const double* v = sorted + fl * S;
  std::int32_t* bpos = bpos_all + fl * S;
  const std::int64_t m = S - static_cast<std::int64_t>(snan[fl]);
  if (threadIdx.x == 0) running = 0;
  __syncthreads();
  for (std::int64_t base = 0; base < m; base += kBorderThreads) {
    const std::int64_t i = base + threadIdx.x;
    const int flag = (i >= 1 && i < m && v[i - 1] < v[i]) ? 1 : 0;
    int excl = 0, total = 0;
    BlockScan(scan_tmp).ExclusiveSum(flag, excl, total);
    if (flag) bpos[running + excl] = static_cast<std::int32_t>(i);
    __syncthreads();
    if (threadIdx.x == 0) running += total;
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const bool has_nan = nan_all[f] > 0;
  const int maxb = has_nan ? min(border_count, kMaxBordersPadded - 2) : border_count;
  double* out = borders_out + f * kMaxBordersPadded;
  const bool nan_min = nan_mode != static_cast<int>(GbdtNanMode::Max);  // NaN's bin lowest (Min, Learned)
  int c = gbdt::select_borders(v, m, bpos, running, maxb, has_nan && nan_min ? out + 1 : out);
  count_out[f] = has_nan ? gbdt::add_nan_border(out, c, nan_min) : c;
}

// Tile transpose: block (32, 8) handles rows [32*blockIdx.x, +32) and
// features [32*blockIdx.y, +32). Phase 1: threadIdx.x runs along the features
// of a row (coalesced reads of row-major X), computing bins into a shared
// tile; phase 2: threadIdx.x runs along the rows of a feature (coalesced
// writes of the feature-major bins).
template <class T>
__global__ void bin_kernel(const T* __restrict__ X, std::int64_t n, std::int64_t F, const double* __restrict__ borders,
                           const int* __restrict__ counts, bool nan_max, std::uint8_t* __restrict__ bins) {
  __shared__ std::uint8_t tile[32][33];
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * 32;
  const std::int64_t f0 = static_cast<std::int64_t>(blockIdx.y) * 32;
  for (int rr = threadIdx.y; rr < 32; rr += blockDim.y) {
    const std::int64_t r = r0 + rr, f = f0 + threadIdx.x;
    if (r < n && f < F)
      tile[threadIdx.x][rr] = static_cast<std::uint8_t>(gbdt::bin_of(
          static_cast<double>(X[r * F + f]), borders + f * kMaxBordersPadded, counts[f], nan_max));
  }
  __syncthreads();
  for (int ff = threadIdx.y; ff < 32; ff += blockDim.y) {
    const std::int64_t f = f0 + ff, r = r0 + threadIdx.x;
    if (f < F && r < n) bins[f * n + r] = tile[ff][threadIdx.x];
  }
}

}  // namespace

template <class T>
std::vector<ull> count_nan_cuda(const Launch& L, MatrixView<const T> X, GbdtNanMode nan_mode) {
  const std::int64_t n = X.rows, F = X.cols;
  DeviceBuffer<ull> cnt(static_cast<std::size_t>(F + 1), L.dev);
  TL_CUDA_CHECK(cudaMemsetAsync(cnt.data(), 0, sizeof(ull) * (F + 1), L.stream));
  count_nan_kernel<T><<<L.grid(n * F), kBlock, 0, L.stream>>>(X.data, n, F, cnt.data(), cnt.data() + F);
  TL_CUDA_CHECK_LAUNCH("count_nan_kernel");
  std::vector<ull> h(static_cast<std::size_t>(F + 1));
  download(h.data(), cnt, h.size(), L.stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(L.stream));
  TL_REQUIRE(h[F] == 0, ValueError, "Input X contains infinity or a value too large for dtype('float64').");
  if (nan_mode == GbdtNanMode::Forbidden)
    for (std::int64_t f = 0; f < F; ++f)
      TL_REQUIRE(h[f] == 0, ValueError, "Input X contains NaN (feature ", f, ") and nan_mode is 'Forbidden'.");
  h.resize(static_cast<std::size_t>(F));
  return h;
}

namespace {

// The weighted borders (w: host row weights) on the host, by the CPU
// backend's code (gbdt::weighted_feature_borders) over a host copy of X.
template <class T>
void weighted_borders_host(const Launch& L, MatrixView<const T> X, const double* w, int border_count,
                           GbdtNanMode nan_mode, DeviceBorders& B) {
  const std::int64_t n = X.rows, F = X.cols;
  std::vector<T> hx(static_cast<std::size_t>(n * F));
  if (n * F)
    TL_CUDA_CHECK(cudaMemcpyAsync(hx.data(), X.data, sizeof(T) * n * F, cudaMemcpyDeviceToHost, L.stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(L.stream));
  const MatrixView<const T> hX(hx.data(), n, F);
  B.padded.assign(static_cast<std::size_t>(F) * kMaxBordersPadded, num::double_from_bits(0x7ff0000000000000ULL));
  B.count.assign(static_cast<std::size_t>(F), 0);
  for (std::int64_t f = 0; f < F; ++f)
    B.count[f] = gbdt::weighted_feature_borders(hX, w, f, border_count, nan_mode,
                                                B.padded.data() + f * kMaxBordersPadded);
  B.d_padded = to_device(B.padded, L.dev, L.stream);
  B.d_count = to_device(B.count, L.dev, L.stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(L.stream));
}

}  // namespace

// X: a contiguous device matrix; w: host row weights or null.
template <class T>
DeviceBorders compute_borders_cuda(const Launch& L, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode,
                                   const double* w) {
  const std::int64_t n = X.rows, F = X.cols;
  DeviceBorders B;
  B.F = static_cast<int>(F);
  B.nan_max = nan_mode == GbdtNanMode::Max;
  const std::vector<ull> nan = count_nan_cuda(L, X, nan_mode);
  if (w) {
    weighted_borders_host(L, X, w, border_count, nan_mode, B);
    return B;
  }
  DeviceBuffer<ull> d_nan = to_device(nan, L.dev, L.stream);
  B.d_padded = DeviceBuffer<double>(static_cast<std::size_t>(F) * kMaxBordersPadded, L.dev);
  B.d_count = DeviceBuffer<int>(static_cast<std::size_t>(F), L.dev);
  TL_CUDA_CHECK(cudaMemsetAsync(B.d_padded.data(), 0, sizeof(double) * F * kMaxBordersPadded, L.stream));
  const std::int64_t S = std::min<std::int64_t>(n, gbdt::kBorderSample);
  // Features in batches so that the sample buffers stay below ~256 MiB.
  const std::int64_t Fb_max = std::max<std::int64_t>(1, (std::int64_t(256) << 20) / (S * 20));
  const std::int64_t Fb_cap = std::min<std::int64_t>(F, Fb_max);
  DeviceBuffer<double> sample(static_cast<std::size_t>(Fb_cap * S), L.dev);
  DeviceBuffer<double> sorted(static_cast<std::size_t>(Fb_cap * S), L.dev);
  DeviceBuffer<std::int32_t> bpos(static_cast<std::size_t>(Fb_cap * S), L.dev);
  DeviceBuffer<ull> snan(static_cast<std::size_t>(Fb_cap), L.dev);
  std::vector<int> offs(static_cast<std::size_t>(Fb_cap + 1));
  for (std::int64_t j = 0; j <= Fb_cap; ++j) offs[j] = static_cast<int>(j * S);
  DeviceBuffer<int> d_offs = to_device(offs, L.dev, L.stream);
  std::size_t temp_bytes = 0;
  TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, temp_bytes, sample.data(), sorted.data(),
                                                        static_cast<int>(Fb_cap * S), static_cast<int>(Fb_cap),
                                                        d_offs.data(), d_offs.data() + 1, 0, 64, L.stream));
  DeviceBuffer<unsigned char> temp(temp_bytes, L.dev);
  for (std::int64_t f0 = 0; f0 < F; f0 += Fb_cap) {
    const std::int64_t Fb = std::min(Fb_cap, F - f0);
    TL_CUDA_CHECK(cudaMemsetAsync(snan.data(), 0, sizeof(ull) * Fb, L.stream));
    gather_sample_kernel<T><<<L.grid(Fb * S), kBlock, 0, L.stream>>>(X.data, n, F, S, f0, Fb, sample.data(),
                                                                     snan.data());
    TL_CUDA_CHECK_LAUNCH("gather_sample_kernel");
    std::size_t tb = temp_bytes;
    TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(temp.data(), tb, sample.data(), sorted.data(),
                                                          static_cast<int>(Fb * S), static_cast<int>(Fb),
                                                          d_offs.data(), d_offs.data() + 1, 0, 64, L.stream));
    borders_kernel<<<static_cast<unsigned>(Fb), kBorderThreads, 0, L.stream>>>(
        sorted.data(), S, snan.data(), d_nan.data(), f0, border_count, static_cast<int>(nan_mode), bpos.data(),
        B.d_padded.data(), B.d_count.data());
    TL_CUDA_CHECK_LAUNCH("borders_kernel");
  }
  B.padded.resize(static_cast<std::size_t>(F) * kMaxBordersPadded);
  B.count.resize(static_cast<std::size_t>(F));
  download(B.padded.data(), B.d_padded, B.padded.size(), L.stream);
  download(B.count.data(), B.d_count, B.count.size(), L.stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(L.stream));
  return B;
}

template <class T>
DeviceBuffer<std::uint8_t> bin_matrix_cuda(const Launch& L, MatrixView<const T> X, const DeviceBorders& B) {
  const std::int64_t n = X.rows, F = X.cols;
  DeviceBuffer<std::uint8_t> bins(static_cast<std::size_t>(n * F), L.dev);
  const dim3 block(32, 8);
  const std::int64_t gy = ceil_div(F, 32);
  TL_REQUIRE(gy <= 65535, ValueError, "too many features for the CUDA binning kernel");
  const dim3 grid(static_cast<unsigned>(ceil_div(n, 32)), static_cast<unsigned>(gy));
  bin_kernel<T><<<grid, block, 0, L.stream>>>(X.data, n, F, B.d_padded.data(), B.d_count.data(), B.nan_max,
                                              bins.data());
  TL_CUDA_CHECK_LAUNCH("bin_kernel");
  return bins;
}

#define TL_GBDT_INSTANTIATE(T)                                                                                      \
  template std::vector<ull> count_nan_cuda<T>(const Launch&, MatrixView<const T>, GbdtNanMode);                     \
  template DeviceBorders compute_borders_cuda<T>(const Launch&, MatrixView<const T>, int, GbdtNanMode,              \
                                                 const double*);                                                   \
  template DeviceBuffer<std::uint8_t> bin_matrix_cuda<T>(const Launch&, MatrixView<const T>, const DeviceBorders&);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::gbdt_cuda

namespace tl::detail {

using gbdt_cuda::compute_borders_cuda;
using gbdt_cuda::DeviceBorders;
using gbdt_cuda::Launch;
using gbdt_cuda::make_launch;

template <class T>
GbdtModel gbdt_borders_cuda(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode) {
  DeviceGuard guard(ctx.device().id);
  const Launch L = make_launch(ctx);
  auto xs = stage_to_device(ctx, X);
  DeviceBorders B = compute_borders_cuda(L, xs.view, border_count, nan_mode, nullptr);
  GbdtModel m;
  gbdt::set_borders(m, B.F, B.padded, B.count);
  return m;
}

#define TL_GBDT_INSTANTIATE(T)                                                                    \
  template GbdtModel gbdt_borders_cuda<T>(const Context&, MatrixView<const T>, int, GbdtNanMode);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace tl::detail
