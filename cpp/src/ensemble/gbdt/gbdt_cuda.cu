// CUDA backend of the gradient-boosted trees: the CPU backend's algorithm,
// step for step, with the whole tree built on the device. The host loop only
// launches kernels; nothing is copied back until the model is exported,
// except the per-round eval loss when an eval set is given, the eval set's
// predictions when a host-side eval metric or a callback asks for them
// (eval_raw), and each level's chosen score when a split constraint
// (min_child_weight, min_split_gain) may stop the tree.
//
// Identity with the CPU backend rests on: the same sorted border sample (a
// total order on canonical keys, so any sort gives one array); exact integer
// histograms (per-block shared-memory histograms of 64-bit sums kept as
// 32-bit words, flushed into int64 with atomics: order-free); the shared
// TL_HD math of gbdt_common.hpp for every floating-point value; sequential
// sums over leaves and outputs in the CPU's order; and a total order on split candidates (score, then index) so
// that any reduction tree picks the same winner.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "core/cuda/memory.cuh"
#include "ensemble/gbdt/gbdt_driver.hpp"

namespace tl {
namespace {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::stage_to_device;
using gbdt::kMaxBordersPadded;
using ull = unsigned long long;
constexpr int kBlock = 256;

__host__ __device__ inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Launch {
  int dev = 0;
  int sms = 1;
  int smem_optin = 48 * 1024;
  cudaStream_t stream = nullptr;
  // Blocks for a grid-stride loop over n items: enough to fill the GPU.
  unsigned grid(std::int64_t n, int block = kBlock) const {
    const std::int64_t want = std::max<std::int64_t>(1, ceil_div(n, block));
    return static_cast<unsigned>(std::min<std::int64_t>(want, static_cast<std::int64_t>(sms) * 16));
  }
};

Launch make_launch(const Context& ctx) {
  Launch l;
  l.dev = ctx.device().id;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, l.dev));
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&l.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, l.dev));
  l.stream = tl_stream(ctx);
  return l;
}

template <class T>
void upload(DeviceBuffer<T>& dst, const T* src, std::size_t n, cudaStream_t s) {
  if (n) TL_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}
template <class T>
void download(T* dst, const DeviceBuffer<T>& src, std::size_t n, cudaStream_t s) {
  if (n) TL_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
}
template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& v, int dev, cudaStream_t s) {
  DeviceBuffer<T> b(v.size(), dev);
  upload(b, v.data(), v.size(), s);
  return b;
}

// ===========================================================================
// Borders and bins
// ===========================================================================

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
  if (has_nan) {
    if (nan_min)
      out[0] = -gbdt::double_of(0x7ff0000000000000ULL);
    else
      out[c] = gbdt::double_of(0x7ff0000000000000ULL);
    ++c;
  }
  count_out[f] = c;
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

struct DeviceBorders {
  int F = 0;
  std::vector<double> padded;  // host copy, F * kMaxBordersPadded
  std::vector<int> count;      // host copy
  DeviceBuffer<double> d_padded;
  DeviceBuffer<int> d_count;
  bool nan_max = false;
};

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

// X: a contiguous device matrix.
template <class T>
DeviceBorders compute_borders_cuda(const Launch& L, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode) {
  const std::int64_t n = X.rows, F = X.cols;
  DeviceBorders B;
  B.F = static_cast<int>(F);
  B.nan_max = nan_mode == GbdtNanMode::Max;
  const std::vector<ull> nan = count_nan_cuda(L, X, nan_mode);
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

// ===========================================================================
// Training kernels
// ===========================================================================

// Grid-stride over rows: g, h of each row (gbdt::row_gradients, the row's
// weight from gbdt::row_weight: sample weight times the tree's bootstrap
// weight, as on the CPU) and the largest |g|, |h|, reduced per block in shared
// memory then with atomicMax on the bit patterns (non-negative doubles order
// like their bits; max is exact).
__global__ void gradient_kernel(GbdtLoss loss, int D, double param, std::int64_t n, const double* __restrict__ approx,
                                const double* __restrict__ y, const double* __restrict__ w, gbdt::RowSampler rs,
                                double* __restrict__ g, double* __restrict__ h, ull* __restrict__ maxbits) {
  __shared__ ull sg[kBlock], sh[kBlock];
  ull mg = 0, mh = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    gbdt::row_gradients(loss, D, approx + i * D, y[i], gbdt::row_weight(rs, w, i), param, g + i * D, h + i * D);
    for (int k = 0; k < D; ++k) {
      const ull a = gbdt::bits_of(gbdt::abs_bits(g[i * D + k])), b = gbdt::bits_of(gbdt::abs_bits(h[i * D + k]));
      mg = a > mg ? a : mg;
      mh = b > mh ? b : mh;
    }
  }
  sg[threadIdx.x] = mg;
  sh[threadIdx.x] = mh;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      sg[threadIdx.x] = sg[threadIdx.x + s] > sg[threadIdx.x] ? sg[threadIdx.x + s] : sg[threadIdx.x];
      sh[threadIdx.x] = sh[threadIdx.x + s] > sh[threadIdx.x] ? sh[threadIdx.x + s] : sh[threadIdx.x];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicMax(maxbits, sg[0]);
    atomicMax(maxbits + 1, sh[0]);
  }
}

__host__ __device__ __forceinline__ double inv_scale_of(ull maxbits) {
  return gbdt::pow2(-gbdt::quant_exponent(gbdt::double_of(maxbits)));
}

// Grid-stride over the n*D gradient entries (or, with a count channel, the
// n rows): fixed-point (g, h) of output k < D as one int2 (|q| <= 2^kQuantBits < 2^31,
// so int32 holds every value exactly; an 8-byte load gives the histogram
// kernels both); channel D, when Dh > D, counts the row: (1, 0) when its
// tree weight is > 0, else (0, 0).
static_assert(gbdt::kQuantBits < 31, "fixed-point gradients fit int32");
__global__ void quantize_kernel(std::int64_t n, int D, int Dh, const double* __restrict__ g,
                                const double* __restrict__ h, const ull* __restrict__ maxbits, gbdt::RowSampler rs,
                                const double* __restrict__ w, int2* __restrict__ q) {
  const double sg = gbdt::pow2(gbdt::quant_exponent(gbdt::double_of(maxbits[0])));
  const double sh = gbdt::pow2(gbdt::quant_exponent(gbdt::double_of(maxbits[1])));
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t start = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (Dh == D) {  // no count channel: the entries in order, without a division
    for (std::int64_t j = start; j < n * D; j += stride)
      q[j] = make_int2(static_cast<int>(gbdt::quantize(g[j], sg)), static_cast<int>(gbdt::quantize(h[j], sh)));
    return;
  }
  for (std::int64_t i = start; i < n; i += stride) {
    for (int k = 0; k < D; ++k)
      q[i * Dh + k] = make_int2(static_cast<int>(gbdt::quantize(g[i * D + k], sg)),
                                static_cast<int>(gbdt::quantize(h[i * D + k], sh)));
    q[i * Dh + D] = make_int2(gbdt::row_weight(rs, w, i) > 0.0 ? 1 : 0, 0);
  }
}

// One block; thread p handles sibling pair (p, p + half) of level d: the
// child with fewer rows gets slot p (its histogram is built), the other is
// derived by subtraction. Level 0: the root takes slot 0.
__global__ void slots_kernel(int d, const ull* __restrict__ counts, std::int32_t* __restrict__ slot_of_leaf,
                             std::int32_t* __restrict__ leaf_of_slot) {
  if (d == 0) {
    if (threadIdx.x == 0) {
      slot_of_leaf[0] = 0;
      leaf_of_slot[0] = 0;
    }
    return;
  }
  const std::int32_t half = std::int32_t(1) << (d - 1);
  for (std::int32_t p = threadIdx.x; p < half; p += blockDim.x) {
    const std::int32_t c = counts[p] <= counts[p + half] ? p : p + half;
    const std::int32_t o = c == p ? p + half : p;
    slot_of_leaf[c] = p;
    slot_of_leaf[o] = -1;
    leaf_of_slot[p] = c;
  }
}

// Rows whose leaf is built at this level (slot_of_leaf >= 0), appended to
// rows[] with one atomic per warp; *count ends as their number. The order
// of the list varies from run to run, which changes no histogram: they are
// integer sums.
__global__ void built_rows_kernel(std::int64_t n, const std::int32_t* __restrict__ leaf,
                                  const std::int32_t* __restrict__ slot_of_leaf, std::int32_t* __restrict__ rows,
                                  unsigned int* __restrict__ count) {
  const int lane = threadIdx.x & 31;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < n;
       base += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = base + threadIdx.x;
    const bool take = r < n && slot_of_leaf[leaf[r]] >= 0;
    const unsigned mask = __ballot_sync(0xFFFFFFFFu, take);
    unsigned at = 0;
    if (lane == 0 && mask) at = atomicAdd(count, static_cast<unsigned>(__popc(mask)));
    at = __shfl_sync(0xFFFFFFFFu, at, 0);
    if (take) rows[at + __popc(mask & ((1u << lane) - 1u))] = static_cast<std::int32_t>(r);
  }
}

// Adds q to the 64-bit integer kept in the shared words *lo, *hi with 32-bit
// atomics (gbdt::high_word_increment: exact in any interleaving).
__device__ __forceinline__ void shared_add_i64(unsigned int* lo, unsigned int* hi, int q) {
  const unsigned int up = gbdt::high_word_increment(atomicAdd(lo, static_cast<unsigned int>(q)), q);
  if (up) atomicAdd(hi, up);
}

// Histograms of the built leaves, shared-memory variant.
// Grid: x = feature group (Fg features from f0 = x * Fg; x fastest, so the
// blocks sharing a row range run together and reuse its gradients from L2),
// y = a share of the rows: all rows [0, n) at level 0, else the m = *count
// rows listed in rows[] (built_rows_kernel). For each row and each feature
// of the group, a thread adds the row's fixed-point (g, h) to the block's
// shared histogram, 64-bit integers kept as four planes of 32-bit words (g
// low, g high, h low, h high; entry [slot][feature][bin][output]; planar so
// that lanes at different bins hit different banks). The block then adds its
// non-zero entries into the int64 histogram with global atomics. Integers
// throughout: the result is exact and independent of the order.
__global__ void hist_smem_kernel(const std::uint8_t* __restrict__ bins, std::int64_t n, int F, int Bp, int D, int Fg,
                                 int n_slots, const int2* __restrict__ q, const std::int32_t* __restrict__ rows,
                                 const unsigned int* __restrict__ count, const std::int32_t* __restrict__ leaf,
                                 const std::int32_t* __restrict__ slot_of_leaf,
                                 const std::int32_t* __restrict__ leaf_of_slot, ull* __restrict__ hist) {
  extern __shared__ unsigned int sm[];
  const int f0 = blockIdx.x * Fg;
  const int fc = min(Fg, F - f0);
  const std::int64_t entries = static_cast<std::int64_t>(n_slots) * fc * Bp * D;
  unsigned int* glo = sm;
  unsigned int* ghi = sm + entries;
  unsigned int* hlo = sm + 2 * entries;
  unsigned int* hhi = sm + 3 * entries;
  for (std::int64_t e = threadIdx.x; e < entries * 4; e += blockDim.x) sm[e] = 0u;
  __syncthreads();
  const std::int64_t m = rows ? static_cast<std::int64_t>(*count) : n;
  const std::int64_t share = ceil_div(m, gridDim.y);
  const std::int64_t j0 = blockIdx.y * share;
  const std::int64_t j1 = min(m, j0 + share);
  for (std::int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
    const std::int64_t r = rows ? rows[j] : j;
    const int s = slot_of_leaf[leaf[r]];
    if (s < 0) continue;
    for (int fi = 0; fi < fc; ++fi) {
      const int b = bins[static_cast<std::int64_t>(f0 + fi) * n + r];
      const std::int64_t e0 = ((static_cast<std::int64_t>(s) * fc + fi) * Bp + b) * D;
      for (int k = 0; k < D; ++k) {
        const int2 v = q[r * D + k];
        if (v.x) shared_add_i64(glo + e0 + k, ghi + e0 + k, v.x);
        if (v.y) shared_add_i64(hlo + e0 + k, hhi + e0 + k, v.y);
      }
    }
  }
  __syncthreads();
  for (std::int64_t e = threadIdx.x; e < entries; e += blockDim.x) {
    const ull G = (static_cast<ull>(ghi[e]) << 32) | glo[e];
    const ull H = (static_cast<ull>(hhi[e]) << 32) | hlo[e];
    if ((G | H) == 0) continue;
    const std::int64_t k = e % D;
    const std::int64_t b = (e / D) % Bp;
    const std::int64_t fi = (e / D / Bp) % fc;
    const std::int64_t s = e / D / Bp / fc;
    const std::int64_t lf = leaf_of_slot[s];
    const std::int64_t gi = 2 * (((lf * F + f0 + fi) * Bp + b) * D + k);
    if (G) atomicAdd(hist + gi, G);
    if (H) atomicAdd(hist + gi + 1, H);
  }
}

// Histograms of the built leaves, global-memory variant for levels whose
// shared tile would not fit: grid-stride over rows, one int64 atomic per
// (row, feature, output, g|h) straight into the histogram (exact).
__global__ void hist_global_kernel(const std::uint8_t* __restrict__ bins, std::int64_t n, int F, int Bp, int D,
                                   const int2* __restrict__ q, const std::int32_t* __restrict__ leaf,
                                   const std::int32_t* __restrict__ slot_of_leaf, ull* __restrict__ hist) {
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t lf = leaf[r];
    if (slot_of_leaf[lf] < 0) continue;
    for (int f = 0; f < F; ++f) {
      const std::int64_t b = bins[static_cast<std::int64_t>(f) * n + r];
      for (int k = 0; k < D; ++k) {
        const std::int64_t gi = 2 * (((lf * F + f) * Bp + b) * D + k);
        const int2 v = q[r * D + k];
        atomicAdd(hist + gi, static_cast<ull>(static_cast<std::int64_t>(v.x)));
        atomicAdd(hist + gi + 1, static_cast<ull>(static_cast<std::int64_t>(v.y)));
      }
    }
  }
}

// Grid-stride over the entries of the half-level: pair p of level d's
// leaves (p and p + half); the leaf not built = parent p (previous level)
// minus the built one. Integer subtraction: exact.
__global__ void subtract_kernel(std::int64_t half, std::int64_t per_leaf, const std::int32_t* __restrict__ leaf_of_slot,
                                const std::int64_t* __restrict__ prev, std::int64_t* __restrict__ cur) {
  const std::int64_t total = half * per_leaf;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = e / per_leaf, j = e % per_leaf;
    const std::int64_t c = leaf_of_slot[p];
    const std::int64_t o = c == p ? p + half : p;
    cur[o * per_leaf + j] = prev[p * per_leaf + j] - cur[c * per_leaf + j];
  }
}

// Block (f = blockIdx.x, leaf = blockIdx.y), thread b = candidate border b of
// feature f (blockDim >= Bp). For each output k in order: the leaf's bins are
// loaded into shared memory and prefix-summed (integers: exact), then thread
// b adds the leaf's gain for "bins <= b go left" (gbdt::prefix_gain) to
// its running sum, as the CPU does. Writes tleaf[(leaf * F + f) * Bp + b] for b < nb[f].
// nan_bin (nan_mode Learned, else nullptr): where nan_bin[f], thread b >= 1
// also sums the gain with bin 0's NaN rows sent right; tleaf gets the better
// of the two (gbdt::nan_right_wins) and tright 1 where the right one won.
// Dh > D (min_data_in_leaf > 1): channel D counts rows, and a candidate
// leaving a child fewer than min_data rows scores -infinity (gbdt::counts_allow).
__global__ void leaf_score_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh,
                                  const int* __restrict__ nbor, const ull* __restrict__ maxbits, double lambda,
                                  double min_child_weight, int min_data, const std::uint8_t* __restrict__ nan_bin,
                                  double* __restrict__ tleaf, std::uint8_t* __restrict__ tright) {
  __shared__ std::int64_t sg[kBlock], sh[kBlock];
  const std::int64_t f = blockIdx.x, leaf = blockIdx.y;
  const int b = threadIdx.x;
  const int nb = nbor[f];
  if (nb == 0) return;  // uniform across the block
  const double isg = inv_scale_of(maxbits[0]), ish = inv_scale_of(maxbits[1]);
  const bool learn = nan_bin != nullptr && nan_bin[f] && b > 0;
  double t = 0.0, tr = 0.0;
  bool allow = true, allow_r = true;  // min_data_in_leaf
  for (int k = Dh - 1; k >= D; --k) {  // the count channel, when there is one
    const std::int64_t gi = 2 * (((leaf * F + f) * Bp + b) * Dh + k);
    sg[b] = b <= nb ? hist[gi] : 0;
    __syncthreads();
    for (int off = 1; off < kBlock; off <<= 1) {
      const std::int64_t a = b >= off ? sg[b - off] : 0;
      __syncthreads();
      sg[b] += a;
      __syncthreads();
    }
    if (b < nb) {
      allow = gbdt::counts_allow(sg[b], sg[nb], min_data);
      allow_r = gbdt::counts_allow(sg[b] - sg[0], sg[nb], min_data);
    }
    __syncthreads();
  }
  for (int k = 0; k < D; ++k) {
    const std::int64_t gi = 2 * (((leaf * F + f) * Bp + b) * Dh + k);
    sg[b] = b <= nb ? hist[gi] : 0;
    sh[b] = b <= nb ? hist[gi + 1] : 0;
    __syncthreads();
    for (int off = 1; off < kBlock; off <<= 1) {
      const std::int64_t ag = b >= off ? sg[b - off] : 0, ah = b >= off ? sh[b - off] : 0;
      __syncthreads();
      sg[b] += ag;
      sh[b] += ah;
      __syncthreads();
    }
    if (b < nb) {
      const std::int64_t Gt = sg[nb], Ht = sh[nb], GL = sg[b], HL = sh[b];
      const double G = gbdt::dequantize(Gt, isg), H = gbdt::dequantize(Ht, ish);
      t = num::add(t, gbdt::prefix_gain(GL, HL, Gt, Ht, G, H, isg, ish, lambda, min_child_weight));
      if (learn)  // sg[0], sh[0]: bin 0, the NaN rows
        tr = num::add(tr, gbdt::prefix_gain(GL - sg[0], HL - sh[0], Gt, Ht, G, H, isg, ish, lambda, min_child_weight));
    }
    __syncthreads();
  }
  if (b < nb) {
    const double ninf = -gbdt::double_of(0x7ff0000000000000ULL);
    if (!allow) t = ninf;
    if (!allow_r) tr = ninf;
    const bool right = learn && gbdt::nan_right_wins(t, tr);
    tleaf[(leaf * F + f) * Bp + b] = right ? tr : t;
    if (tright) tright[(leaf * F + f) * Bp + b] = right;
  }
}

struct Cand {
  double score;
  std::int64_t idx;  // -1: none
};

__device__ __forceinline__ bool cand_better(const Cand& a, const Cand& b) {
  if (a.idx < 0) return false;
  if (b.idx < 0) return true;
  return gbdt::better_candidate(a.score, a.idx, b.score, b.idx);
}

__device__ void block_best(Cand c, Cand* shared) {
  shared[threadIdx.x] = c;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && cand_better(shared[threadIdx.x + s], shared[threadIdx.x]))
      shared[threadIdx.x] = shared[threadIdx.x + s];
    __syncthreads();
  }
}

// Grid-stride over candidates idx = f * Bp + b (b < nb[f]): the candidate's
// score is the sum over leaves, in leaf order, of tleaf; each block writes
// its best candidate (a total order: any reduction gives the same winner).
__global__ void candidate_kernel(const double* __restrict__ tleaf, std::int64_t L, int F, int Bp,
                                 const int* __restrict__ nbor, Cand* __restrict__ block_out) {
  __shared__ Cand sc[kBlock];
  Cand best{0.0, -1};
  const std::int64_t total = static_cast<std::int64_t>(F) * Bp;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t f = idx / Bp, b = idx % Bp;
    if (b >= nbor[f]) continue;
    double s = 0.0;
    for (std::int64_t leaf = 0; leaf < L; ++leaf) s = num::add(s, tleaf[(leaf * F + f) * Bp + b]);
    const Cand c{s, idx};
    if (cand_better(c, best)) best = c;
  }
  block_best(best, sc);
  if (threadIdx.x == 0) block_out[blockIdx.x] = sc[0];
}

// One block: the best of the per-block candidates, written as the split.
__global__ void choose_split_kernel(const Cand* __restrict__ block_best_in, int nblocks, int Bp,
                                    std::int32_t* __restrict__ sfeat, std::int32_t* __restrict__ sbin,
                                    double* __restrict__ sgain) {
  __shared__ Cand sc[kBlock];
  Cand best{0.0, -1};
  for (int i = threadIdx.x; i < nblocks; i += blockDim.x)
    if (cand_better(block_best_in[i], best)) best = block_best_in[i];
  block_best(best, sc);
  if (threadIdx.x == 0) {
    const std::int64_t idx = sc[0].idx < 0 ? 0 : sc[0].idx;
    *sfeat = static_cast<std::int32_t>(idx / Bp);
    *sbin = static_cast<std::int32_t>(idx % Bp);
    *sgain = sc[0].score;
  }
}

// Depthwise: block per leaf of the level; the leaf's own best candidate
// over idx = f * Bp + b (b < nb[f]) by its own gain tleaf, kept when
// gbdt::node_splits, else (-1, -1, 0), written to node slot `leaf`; sbin
// gets the split code (gbdt::kNanRight where tright says so; tright may be nullptr).
__global__ void node_best_kernel(const double* __restrict__ tleaf, const std::uint8_t* __restrict__ tright, int F,
                                 int Bp, const int* __restrict__ nbor, double min_split_gain,
                                 std::int32_t* __restrict__ sfeat, std::int32_t* __restrict__ sbin,
                                 double* __restrict__ sgain) {
  __shared__ Cand sc[kBlock];
  const std::int64_t leaf = blockIdx.x;
  Cand best{0.0, -1};
  const std::int64_t total = static_cast<std::int64_t>(F) * Bp;
  for (std::int64_t idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const std::int64_t f = idx / Bp, b = idx % Bp;
    if (b >= nbor[f]) continue;
    const Cand c{tleaf[leaf * total + idx], idx};
    if (cand_better(c, best)) best = c;
  }
  block_best(best, sc);
  if (threadIdx.x == 0) {
    const bool split = sc[0].idx >= 0 && gbdt::node_splits(sc[0].score, min_split_gain);
    const bool right = split && tright && tright[leaf * total + sc[0].idx];
    sfeat[leaf] = split ? static_cast<std::int32_t>(sc[0].idx / Bp) : -1;
    sbin[leaf] = split ? static_cast<std::int32_t>(sc[0].idx % Bp) | (right ? gbdt::kNanRight : 0) : -1;
    sgain[leaf] = split ? sc[0].score : 0.0;
  }
}

// Grid-stride over rows: the row's leaf gains bit d (gbdt::bin_right of its bin and the split code).
// With want_counts, rows per new leaf are counted in shared memory
// (L2 <= kSharedCounts leaves) or straight into global memory.
constexpr int kSharedCounts = 4096;
// The split is sfeat[0], sbin[0] for every row (SymmetricTree) or
// sfeat[p], sbin[p] for the rows of leaf p (Depthwise; feature -1: left).
__global__ void update_leaf_kernel(const std::uint8_t* __restrict__ bins, std::int64_t n,
                                   const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                   bool depthwise, int d, std::int32_t* __restrict__ leaf, bool want_counts, int L2,
                                   ull* __restrict__ counts) {
  __shared__ unsigned int sc[kSharedCounts];
  const bool shared_counts = want_counts && L2 <= kSharedCounts;
  if (shared_counts) {
    for (int i = threadIdx.x; i < L2; i += blockDim.x) sc[i] = 0u;
    __syncthreads();
  }
  const std::int64_t f0 = *sfeat;
  const int b0 = *sbin;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int32_t lf = leaf[i];
    const std::int64_t f = depthwise ? sfeat[lf] : f0;
    const int b = depthwise ? sbin[lf] : b0;
    if (f >= 0) lf += static_cast<std::int32_t>(gbdt::bin_right(bins[f * n + i], b)) << d;
    leaf[i] = lf;
    if (shared_counts)
      atomicAdd(sc + lf, 1u);
    else if (want_counts)
      atomicAdd(counts + lf, 1ULL);
  }
  if (shared_counts) {
    __syncthreads();
    for (int i = threadIdx.x; i < L2; i += blockDim.x)
      if (sc[i]) atomicAdd(counts + i, static_cast<ull>(sc[i]));
  }
}

// The fixed-point (G, H) of final leaf j, output k, from the last level's
// histogram of its parent split at (f, b). The split of parent p is
// sfeat[0], sbin[0] (SymmetricTree) or sfeat[p], sbin[p] (per node; feature
// -1: every row left, totals from feature 0).
__device__ __forceinline__ void final_leaf_totals(const std::int64_t* __restrict__ hist, int F, int Bp, int Dh,
                                                  int depth, const std::int32_t* __restrict__ sfeat,
                                                  const std::int32_t* __restrict__ sbin, bool depthwise,
                                                  const int* __restrict__ nbor, std::int64_t j, std::int64_t k,
                                                  std::int64_t& G, std::int64_t& H) {
  const std::int64_t L = std::int64_t(1) << (depth - 1);
  const std::int64_t p = j % L;
  const bool right = j >= L;
  const std::int64_t f0 = sfeat[depthwise ? p : 0];
  const std::int64_t f = f0 < 0 ? 0 : f0;
  const int b = f0 < 0 ? Bp : sbin[depthwise ? p : 0];
  const int nb = f0 < 0 ? Bp - 1 : nbor[f];
  std::int64_t GL = 0, HL = 0, Gt = 0, Ht = 0;
  for (int bin = 0; bin <= nb; ++bin) {
    const std::int64_t gi = 2 * (((p * F + f) * Bp + bin) * Dh + k);
    const std::int64_t g = hist[gi], h = hist[gi + 1];
    Gt += g;
    Ht += h;
    if (!gbdt::bin_right(bin, b)) {
      GL += g;
      HL += h;
    }
  }
  G = right ? Gt - GL : GL;
  H = right ? Ht - HL : HL;
}

// Thread per (final leaf j, output k): the leaf's (G, H), then its value.
__global__ void leaf_values_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh, int depth,
                                   const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                   bool depthwise, const int* __restrict__ nbor, const ull* __restrict__ maxbits,
                                   double lambda, double lr, double* __restrict__ values) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= (std::int64_t(1) << depth) * D) return;
  const std::int64_t j = t / D, k = t % D;
  std::int64_t G, H;
  final_leaf_totals(hist, F, Bp, Dh, depth, sfeat, sbin, depthwise, nbor, j, k, G, H);
  values[j * D + k] = gbdt::leaf_value(gbdt::dequantize(G, inv_scale_of(maxbits[0])),
                                       gbdt::dequantize(H, inv_scale_of(maxbits[1])), lambda, lr);
}

// The same (G, H) as integers (tot[2 * (j * D + k)], + 1), for Lossguide's
// sums on the host.
__global__ void leaf_totals_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh, int depth,
                                   const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                   const int* __restrict__ nbor, std::int64_t* __restrict__ tot) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= (std::int64_t(1) << depth) * D) return;
  const std::int64_t j = t / D, k = t % D;
  final_leaf_totals(hist, F, Bp, Dh, depth, sfeat, sbin, true, nbor, j, k, tot[2 * t], tot[2 * t + 1]);
}

// Grid-stride over rows: each row's leaf through Lossguide's leaf map.
__global__ void remap_leaf_kernel(std::int64_t n, const std::int32_t* __restrict__ map, std::int32_t* __restrict__ leaf) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    leaf[i] = map[leaf[i]];
}

// A tree the split constraints stopped at a level of L leaves: thread per
// (leaf j, output k) sums feature 0's bins of leaf j (every row of the leaf is
// in one of them; integers: exact), then the leaf value, as the CPU's
// total_values.
__global__ void total_values_kernel(const std::int64_t* __restrict__ hist, int F, int Bp, int D, int Dh, std::int64_t L,
                                    const ull* __restrict__ maxbits, double lambda, double lr,
                                    double* __restrict__ values) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L * D) return;
  const std::int64_t j = t / D, k = t % D;
  std::int64_t G = 0, H = 0;
  for (int bin = 0; bin < Bp; ++bin) {
    const std::int64_t gi = 2 * (((j * F + 0) * Bp + bin) * Dh + k);
    G += hist[gi];
    H += hist[gi + 1];
  }
  values[j * D + k] = gbdt::leaf_value(gbdt::dequantize(G, inv_scale_of(maxbits[0])),
                                       gbdt::dequantize(H, inv_scale_of(maxbits[1])), lambda, lr);
}

// Depth-0 trees (no feature can split): grid-stride sums of the fixed-point
// gradients per output into tot[2k], tot[2k+1] (int64 atomics: exact).
__global__ void totals_kernel(std::int64_t n, int D, int Dh, const int2* __restrict__ q, ull* __restrict__ tot) {
  for (int k = 0; k < D; ++k) {
    std::int64_t sg = 0, sh = 0;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
      sg += q[i * Dh + k].x;
      sh += q[i * Dh + k].y;
    }
    if (sg) atomicAdd(tot + 2 * k, static_cast<ull>(sg));
    if (sh) atomicAdd(tot + 2 * k + 1, static_cast<ull>(sh));
  }
}

// Thread per output k: the single leaf's value from the totals.
__global__ void root_values_kernel(int D, const ull* __restrict__ tot, const ull* __restrict__ maxbits, double lambda,
                                   double lr, double* __restrict__ values) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= D) return;
  const std::int64_t G = static_cast<std::int64_t>(tot[2 * k]), H = static_cast<std::int64_t>(tot[2 * k + 1]);
  values[k] = gbdt::leaf_value(gbdt::dequantize(G, inv_scale_of(maxbits[0])),
                               gbdt::dequantize(H, inv_scale_of(maxbits[1])), lambda, lr);
}

// Grid-stride over rows: approximations += the value of the row's leaf.
__global__ void apply_kernel(std::int64_t n, int D, const std::int32_t* __restrict__ leaf,
                             const double* __restrict__ values, double* __restrict__ approx) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    for (int k = 0; k < D; ++k) approx[i * D + k] = num::add(approx[i * D + k], values[leaf[i] * D + k]);
}

// Grid-stride over eval rows: the row's leaf from its bins and the tree's
// splits, then approximations += the leaf's value.
__global__ void apply_eval_kernel(std::int64_t m, int D, int depth, bool depthwise, const std::uint8_t* __restrict__ ebins,
                                  const std::int32_t* __restrict__ sfeat, const std::int32_t* __restrict__ sbin,
                                  const double* __restrict__ values, double* __restrict__ eapprox) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t lf = 0;
    for (int d = 0; d < depth; ++d) {
      const std::int64_t s = gbdt::split_slot(depthwise, d, lf);
      if (sfeat[s] < 0) continue;
      lf |= static_cast<std::int64_t>(gbdt::bin_right(ebins[static_cast<std::int64_t>(sfeat[s]) * m + i], sbin[s])) << d;
    }
    for (int k = 0; k < D; ++k) eapprox[i * D + k] = num::add(eapprox[i * D + k], values[lf * D + k]);
  }
}

// One thread per canonical chunk of kLossChunk rows, walking its rows in
// order as the CPU does: partials[2c] = sum of w * loss, partials[2c+1] = sum of w.
__global__ void loss_partials_kernel(GbdtLoss loss, int D, double param, std::int64_t n, const double* __restrict__ approx,
                                     const double* __restrict__ y, const double* __restrict__ w,
                                     double* __restrict__ partials) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t nc = ceil_div(n, gbdt::kLossChunk);
  if (c >= nc) return;
  double s = 0.0, ws = 0.0;
  const std::int64_t r1 = min(n, (c + 1) * gbdt::kLossChunk);
  for (std::int64_t i = c * gbdt::kLossChunk; i < r1; ++i) {
    const double wi = w ? w[i] : 1.0;
    s = num::add(s, num::mul(wi, gbdt::row_loss(loss, D, approx + i * D, y[i], param)));
    ws = num::add(ws, wi);
  }
  partials[2 * c] = s;
  partials[2 * c + 1] = ws;
}

// ===========================================================================
// Trainer
// ===========================================================================
template <class T>
class CudaTrainer {
 public:
  CudaTrainer(const Context& ctx, MatrixView<const T> X, const double* y, const double* w, const GbdtParams& p,
              const GbdtEvalSet<T>& eval)
      : L_(make_launch(ctx)), p_(p), n_(X.rows), F_(static_cast<int>(X.cols)), D_(gbdt::outputs_of(p)),
        Dh_(gbdt::hist_channels(p, D_)) {
    const int dev = L_.dev;
    {
      auto xs = stage_to_device(ctx, X);
      B_ = compute_borders_cuda(L_, xs.view, p.border_count, p.nan_mode);
      bins_ = bin_matrix_cuda(L_, xs.view, B_);
    }
    int maxb = 0;
    bool any = false;
    for (int f = 0; f < F_; ++f) {
      maxb = std::max(maxb, B_.count[f]);
      any = any || B_.count[f] > 0;
    }
    Bp_ = maxb + 1;
    depth_ = any ? p.max_depth : 0;
    if (p.nan_mode == GbdtNanMode::Learned) {
      const std::vector<std::uint8_t> nb = gbdt::nan_bins(B_.padded, B_.count);
      nan_bin_ = to_device(nb, dev, L_.stream);
      TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));  // nb dies here
    }
    if (eval.X.rows > 0) {
      has_eval_ = true;
      m_ = eval.X.rows;
      auto es = stage_to_device(ctx, eval.X);
      count_nan_cuda(L_, es.view, p.nan_mode);
      ebins_ = bin_matrix_cuda(L_, es.view, B_);
      ey_ = DeviceBuffer<double>(static_cast<std::size_t>(m_), dev);
      upload(ey_, eval.y, static_cast<std::size_t>(m_), L_.stream);
      if (eval.weight) {
        ew_ = DeviceBuffer<double>(static_cast<std::size_t>(m_), dev);
        upload(ew_, eval.weight, static_cast<std::size_t>(m_), L_.stream);
      }
      eapprox_ = DeviceBuffer<double>(static_cast<std::size_t>(m_ * D_), dev);
    }
    y_ = DeviceBuffer<double>(static_cast<std::size_t>(n_), dev);
    upload(y_, y, static_cast<std::size_t>(n_), L_.stream);
    if (w) {
      w_ = DeviceBuffer<double>(static_cast<std::size_t>(n_), dev);
      upload(w_, w, static_cast<std::size_t>(n_), L_.stream);
    }
    const std::size_t nD = static_cast<std::size_t>(n_ * D_);
    approx_ = DeviceBuffer<double>(nD, dev);
    g_ = DeviceBuffer<double>(nD, dev);
    h_ = DeviceBuffer<double>(nD, dev);
    q_ = DeviceBuffer<int2>(static_cast<std::size_t>(n_ * Dh_), dev);
    leaf_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(n_), dev);
    maxbits_ = DeviceBuffer<ull>(2, dev);
    const std::int64_t Lmax = depth_ > 0 ? (std::int64_t(1) << (depth_ - 1)) : 1;
    per_leaf_ = static_cast<std::int64_t>(F_) * Bp_ * Dh_ * 2;
    if (depth_ > 0) {
      prev_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(Lmax * per_leaf_), dev);
      cur_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(Lmax * per_leaf_), dev);
      tleaf_ = DeviceBuffer<double>(static_cast<std::size_t>(Lmax * F_ * Bp_), dev);
      if (nan_bin_.size()) tright_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(Lmax * F_ * Bp_), dev);
      counts_ = DeviceBuffer<ull>(static_cast<std::size_t>(std::int64_t(1) << depth_), dev);
      slot_of_leaf_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(Lmax), dev);
      leaf_of_slot_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(Lmax), dev);
      if (depth_ > 1) {
        rows_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(n_), dev);
        row_count_ = DeviceBuffer<unsigned int>(1, dev);
      }
      cand_blocks_ = static_cast<int>(std::min<std::int64_t>(1024, ceil_div(static_cast<std::int64_t>(F_) * Bp_, kBlock)));
      cand_ = DeviceBuffer<Cand>(static_cast<std::size_t>(cand_blocks_), dev);
    }
    tot_ = DeviceBuffer<ull>(static_cast<std::size_t>(2 * D_), dev);
    if (p.rsm < 1.0) nb_ = DeviceBuffer<int>(static_cast<std::size_t>(F_), dev);
    const std::size_t n_trees = static_cast<std::size_t>(p.n_estimators);
    depthwise_ = gbdt_per_node(p.grow_policy);
    lossguide_ = p.grow_policy == GbdtGrowPolicy::Lossguide;
    splits_per_tree_ = gbdt_tree_splits(p.grow_policy, depth_);
    const std::size_t nsplit = std::max<std::size_t>(1, n_trees * static_cast<std::size_t>(splits_per_tree_));
    sfeat_ = DeviceBuffer<std::int32_t>(nsplit, dev);
    sbin_ = DeviceBuffer<std::int32_t>(nsplit, dev);
    sgain_ = DeviceBuffer<double>(nsplit, dev);
    leaves_per_tree_ = (std::int64_t(1) << depth_) * D_;
    values_ = DeviceBuffer<double>(n_trees * static_cast<std::size_t>(leaves_per_tree_), dev);
    loss_part_ = DeviceBuffer<double>(static_cast<std::size_t>(2 * ceil_div(std::max(n_, m_), gbdt::kLossChunk)), dev);
    smem_set_ = false;
  }

  void init(const std::vector<double>& base) {
    std::vector<double> a(static_cast<std::size_t>(n_ * D_));
    for (std::int64_t i = 0; i < n_; ++i)
      for (int k = 0; k < D_; ++k) a[i * D_ + k] = base[k];
    upload(approx_, a.data(), a.size(), L_.stream);
    if (has_eval_) {
      std::vector<double> e(static_cast<std::size_t>(m_ * D_));
      for (std::int64_t i = 0; i < m_; ++i)
        for (int k = 0; k < D_; ++k) e[i * D_ + k] = base[k];
      upload(eapprox_, e.data(), e.size(), L_.stream);
      TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));  // the host vectors die here
    } else {
      TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));
    }
  }

  const std::vector<int>& border_counts() const { return B_.count; }

  // nb[f]: the borders of feature f the split search may use (0 under rsm
  // for a feature outside the tree's subset); the split kernels read it in
  // place of the border counts.
  void grow_tree(int t, const std::vector<int>& nb) {
    cudaStream_t s = L_.stream;
    const int depth = depth_;
    const int* d_nb = B_.d_count.data();
    if (nb != B_.count) {
      nb_host_ = nb;
      upload(nb_, nb_host_.data(), nb_host_.size(), s);
      d_nb = nb_.data();
    }
    TL_CUDA_CHECK(cudaMemsetAsync(maxbits_.data(), 0, 2 * sizeof(ull), s));
    gradient_kernel<<<L_.grid(n_), kBlock, 0, s>>>(p_.loss, D_, p_.loss_param, n_, approx_.data(), y_.data(),
                                                   w_.data() ? w_.data() : nullptr, gbdt::row_sampler(p_, t),
                                                   g_.data(), h_.data(), maxbits_.data());
    TL_CUDA_CHECK_LAUNCH("gradient_kernel");
    quantize_kernel<<<L_.grid(Dh_ == D_ ? n_ * D_ : n_), kBlock, 0, s>>>(n_, D_, Dh_, g_.data(), h_.data(), maxbits_.data(),
                                                        gbdt::row_sampler(p_, t), w_.data() ? w_.data() : nullptr,
                                                        q_.data());
    TL_CUDA_CHECK_LAUNCH("quantize_kernel");
    double* values = values_.data() + static_cast<std::int64_t>(t) * leaves_per_tree_;
    TL_CUDA_CHECK(cudaMemsetAsync(leaf_.data(), 0, sizeof(std::int32_t) * n_, s));
    if (depth == 0) {
      TL_CUDA_CHECK(cudaMemsetAsync(tot_.data(), 0, sizeof(ull) * 2 * D_, s));
      totals_kernel<<<L_.grid(n_), kBlock, 0, s>>>(n_, D_, Dh_, q_.data(), tot_.data());
      TL_CUDA_CHECK_LAUNCH("totals_kernel");
      root_values_kernel<<<static_cast<unsigned>(ceil_div(D_, kBlock)), kBlock, 0, s>>>(D_, tot_.data(), maxbits_.data(), p_.l2_leaf_reg,
                                                        p_.learning_rate, values);
      TL_CUDA_CHECK_LAUNCH("root_values_kernel");
    }
    int grown = depth;  // the tree's depth: less than depth_ when the split constraints stop it
    const bool constrained = gbdt::has_split_constraints(p_);
    for (int d = 0; d < depth; ++d) {
      const std::int64_t Lv = std::int64_t(1) << d;
      const std::int64_t sidx = static_cast<std::int64_t>(t) * splits_per_tree_ + gbdt::split_slot(depthwise_, d, 0);
      slots_kernel<<<1, 1024, 0, s>>>(d, counts_.data(), slot_of_leaf_.data(), leaf_of_slot_.data());
      TL_CUDA_CHECK_LAUNCH("slots_kernel");
      TL_CUDA_CHECK(cudaMemsetAsync(cur_.data(), 0, sizeof(std::int64_t) * Lv * per_leaf_, s));
      build_histograms(d, d == 0 ? 1 : static_cast<int>(Lv / 2));
      if (d > 0) {
        const std::int64_t half = Lv / 2;
        subtract_kernel<<<L_.grid(half * per_leaf_), kBlock, 0, s>>>(half, per_leaf_, leaf_of_slot_.data(),
                                                                     prev_.data(), cur_.data());
        TL_CUDA_CHECK_LAUNCH("subtract_kernel");
      }
      TL_REQUIRE(Lv <= 65535, ValueError, "max_depth too large for the CUDA backend");
      leaf_score_kernel<<<dim3(static_cast<unsigned>(F_), static_cast<unsigned>(Lv)), kBlock, 0, s>>>(
          cur_.data(), F_, Bp_, D_, Dh_, d_nb, maxbits_.data(), p_.l2_leaf_reg, p_.min_child_weight,
          p_.min_data_in_leaf, nan_bin_.size() ? nan_bin_.data() : nullptr, tleaf_.data(), tright_.size() ? tright_.data() : nullptr);
      TL_CUDA_CHECK_LAUNCH("leaf_score_kernel");
      const bool want = d + 1 < depth;
      const int L2 = static_cast<int>(Lv * 2);
      if (depthwise_) {
        // Every level is grown, with no host round trip (a node that does
        // not split sends its rows left); gbdt::trim_trees cuts the tree
        // after its last split, as on the CPU.
        node_best_kernel<<<static_cast<unsigned>(Lv), kBlock, 0, s>>>(
            tleaf_.data(), tright_.size() ? tright_.data() : nullptr, F_, Bp_, d_nb, p_.min_split_gain,
            sfeat_.data() + sidx, sbin_.data() + sidx, sgain_.data() + sidx);
        TL_CUDA_CHECK_LAUNCH("node_best_kernel");
        if (want) TL_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, sizeof(ull) * L2, s));
        update_leaf_kernel<<<L_.grid(n_), kBlock, 0, s>>>(bins_.data(), n_, sfeat_.data() + sidx,
                                                          sbin_.data() + sidx, true, d, leaf_.data(), want, L2,
                                                          counts_.data());
        TL_CUDA_CHECK_LAUNCH("update_leaf_kernel");
        if (want) std::swap(prev_, cur_);
        continue;
      }
      candidate_kernel<<<static_cast<unsigned>(cand_blocks_), kBlock, 0, s>>>(tleaf_.data(), Lv, F_, Bp_, d_nb,
                                                                             cand_.data());
      TL_CUDA_CHECK_LAUNCH("candidate_kernel");
      choose_split_kernel<<<1, kBlock, 0, s>>>(cand_.data(), cand_blocks_, Bp_, sfeat_.data() + sidx,
                                               sbin_.data() + sidx, sgain_.data() + sidx);
      TL_CUDA_CHECK_LAUNCH("choose_split_kernel");
      if (constrained) {
        // The split constraints need the level's score on the host: one 8-byte copy per level.
        double score = 0.0;
        TL_CUDA_CHECK(cudaMemcpyAsync(&score, sgain_.data() + sidx, sizeof(double), cudaMemcpyDeviceToHost, s));
        TL_CUDA_CHECK(cudaStreamSynchronize(s));
        if (!gbdt::level_splits(score, p_.min_split_gain)) {
          grown = d;
          break;
        }
      }
      if (want) TL_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, sizeof(ull) * L2, s));
      update_leaf_kernel<<<L_.grid(n_), kBlock, 0, s>>>(bins_.data(), n_, sfeat_.data() + sidx, sbin_.data() + sidx,
                                                        false, d, leaf_.data(), want, L2, counts_.data());
      TL_CUDA_CHECK_LAUNCH("update_leaf_kernel");
      if (want) std::swap(prev_, cur_);
    }
    if (grown < depth) {
      const std::int64_t nthreads = (std::int64_t(1) << grown) * D_;
      total_values_kernel<<<static_cast<unsigned>(ceil_div(nthreads, kBlock)), kBlock, 0, s>>>(
          cur_.data(), F_, Bp_, D_, Dh_, std::int64_t(1) << grown, maxbits_.data(), p_.l2_leaf_reg, p_.learning_rate,
          values);
      TL_CUDA_CHECK_LAUNCH("total_values_kernel");
    } else if (depth > 0) {
      const std::int64_t sidx =
          static_cast<std::int64_t>(t) * splits_per_tree_ + gbdt::split_slot(depthwise_, depth - 1, 0);
      const std::int64_t nthreads = (std::int64_t(1) << depth) * D_;
      if (lossguide_) {
        keep_best_first(t, depth, sidx, nthreads, values);
      } else {
        leaf_values_kernel<<<static_cast<unsigned>(ceil_div(nthreads, kBlock)), kBlock, 0, s>>>(
            cur_.data(), F_, Bp_, D_, Dh_, depth, sfeat_.data() + sidx, sbin_.data() + sidx, depthwise_,
            B_.d_count.data(), maxbits_.data(), p_.l2_leaf_reg, p_.learning_rate, values);
        TL_CUDA_CHECK_LAUNCH("leaf_values_kernel");
      }
    }
    apply_kernel<<<L_.grid(n_), kBlock, 0, s>>>(n_, D_, leaf_.data(), values, approx_.data());
    TL_CUDA_CHECK_LAUNCH("apply_kernel");
    if (has_eval_) {
      const std::int64_t s0 = static_cast<std::int64_t>(t) * splits_per_tree_;
      apply_eval_kernel<<<L_.grid(m_), kBlock, 0, s>>>(m_, D_, grown, depthwise_, ebins_.data(), sfeat_.data() + s0,
                                                       sbin_.data() + s0, values, eapprox_.data());
      TL_CUDA_CHECK_LAUNCH("apply_eval_kernel");
    }
    tree_depth_.push_back(grown);
  }

  // Lossguide (as the CPU's keep_best_first): the grown tree's splits and
  // final leaf totals to the host, gbdt::lossguide_cut there, the cut
  // splits and the leaf values (from the summed totals, by the CPU's formula
  // and scales) back, and every row moved to its leaf in the cut tree. One
  // host round trip per tree. sidx: the last level's first split slot.
  void keep_best_first(int t, int depth, std::int64_t sidx, std::int64_t nthreads, double* values) {
    cudaStream_t s = L_.stream;
    const std::int64_t nslot = (std::int64_t(1) << depth) - 1, nleaf = std::int64_t(1) << depth;
    const std::int64_t s0 = static_cast<std::int64_t>(t) * splits_per_tree_;
    if (lg_tot_.size() < static_cast<std::size_t>(2 * nleaf * D_)) {
      lg_tot_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(2 * nleaf * D_), L_.dev);
      lg_map_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(nleaf), L_.dev);
    }
    leaf_totals_kernel<<<static_cast<unsigned>(ceil_div(nthreads, kBlock)), kBlock, 0, s>>>(
        cur_.data(), F_, Bp_, D_, Dh_, depth, sfeat_.data() + sidx, sbin_.data() + sidx, B_.d_count.data(),
        lg_tot_.data());
    TL_CUDA_CHECK_LAUNCH("leaf_totals_kernel");
    std::vector<std::int32_t> sf(static_cast<std::size_t>(nslot)), sb(sf.size());
    std::vector<double> sg(sf.size());
    std::vector<std::int64_t> tot(static_cast<std::size_t>(2 * nleaf * D_));
    ull mb[2] = {0, 0};
    TL_CUDA_CHECK(cudaMemcpyAsync(sf.data(), sfeat_.data() + s0, sizeof(std::int32_t) * nslot,
                                  cudaMemcpyDeviceToHost, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(sb.data(), sbin_.data() + s0, sizeof(std::int32_t) * nslot,
                                  cudaMemcpyDeviceToHost, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(sg.data(), sgain_.data() + s0, sizeof(double) * nslot, cudaMemcpyDeviceToHost, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(tot.data(), lg_tot_.data(), sizeof(std::int64_t) * tot.size(),
                                  cudaMemcpyDeviceToHost, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(mb, maxbits_.data(), sizeof(mb), cudaMemcpyDeviceToHost, s));
    TL_CUDA_CHECK(cudaStreamSynchronize(s));
    const std::vector<std::int64_t> map =
        gbdt::lossguide_cut(depth, p_.max_leaves, D_, sf.data(), sb.data(), sg.data(), tot);
    std::vector<double> vals(static_cast<std::size_t>(nleaf * D_));
    gbdt::values_from_totals(tot, inv_scale_of(mb[0]), inv_scale_of(mb[1]), p_.l2_leaf_reg, p_.learning_rate,
                             vals.data(), vals.size());
    std::vector<std::int32_t> map32(map.begin(), map.end());
    TL_CUDA_CHECK(cudaMemcpyAsync(sfeat_.data() + s0, sf.data(), sizeof(std::int32_t) * nslot,
                                  cudaMemcpyHostToDevice, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(sbin_.data() + s0, sb.data(), sizeof(std::int32_t) * nslot,
                                  cudaMemcpyHostToDevice, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(sgain_.data() + s0, sg.data(), sizeof(double) * nslot, cudaMemcpyHostToDevice, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(values, vals.data(), sizeof(double) * vals.size(), cudaMemcpyHostToDevice, s));
    TL_CUDA_CHECK(cudaMemcpyAsync(lg_map_.data(), map32.data(), sizeof(std::int32_t) * map32.size(),
                                  cudaMemcpyHostToDevice, s));
    remap_leaf_kernel<<<L_.grid(n_), kBlock, 0, s>>>(n_, lg_map_.data(), leaf_.data());
    TL_CUDA_CHECK_LAUNCH("remap_leaf_kernel");
    TL_CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors above are the copies' sources
  }

  double loss(bool eval) {
    const std::int64_t n = eval ? m_ : n_;
    const std::int64_t nc = ceil_div(n, gbdt::kLossChunk);
    const double* w = eval ? (ew_.data() ? ew_.data() : nullptr) : (w_.data() ? w_.data() : nullptr);
    loss_partials_kernel<<<static_cast<unsigned>(ceil_div(nc, 128)), 128, 0, L_.stream>>>(
        p_.loss, D_, p_.loss_param, n, eval ? eapprox_.data() : approx_.data(), eval ? ey_.data() : y_.data(), w,
        loss_part_.data());
    TL_CUDA_CHECK_LAUNCH("loss_partials_kernel");
    std::vector<double> part(static_cast<std::size_t>(2 * nc));
    download(part.data(), loss_part_, part.size(), L_.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));
    return gbdt::finish_loss(p_.loss, part);
  }

  // One device-to-host copy of the eval set's approximations, on demand.
  const double* eval_raw() {
    eraw_host_.resize(static_cast<std::size_t>(m_ * D_));
    download(eraw_host_.data(), eapprox_, eraw_host_.size(), L_.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));
    return eraw_host_.data();
  }

  // Tree t's splits sit in slots [t * depth_, + its depth) and its leaves at
  // [t * leaves_per_tree_, + 2^depth * D): downloaded whole, then packed.
  void export_model(GbdtModel& m, int n_trees) {
    gbdt::set_borders(m, F_, B_.padded, B_.count);
    m.tree_depth.assign(tree_depth_.begin(), tree_depth_.begin() + n_trees);
    const std::size_t ns = static_cast<std::size_t>(n_trees) * static_cast<std::size_t>(splits_per_tree_);
    const std::size_t nl = static_cast<std::size_t>(n_trees) * static_cast<std::size_t>(leaves_per_tree_);
    m.split_feature.resize(ns);
    m.split_bin.resize(ns);
    m.split_gain.resize(ns);
    m.leaf_values.resize(nl);
    download(m.split_feature.data(), sfeat_, ns, L_.stream);
    download(m.split_bin.data(), sbin_, ns, L_.stream);
    download(m.split_gain.data(), sgain_, ns, L_.stream);
    download(m.leaf_values.data(), values_, nl, L_.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(L_.stream));
    std::size_t so = 0, lo = 0;
    for (int t = 0; t < n_trees; ++t) {
      const int dt = m.tree_depth[t];
      const std::size_t s0 = static_cast<std::size_t>(t) * static_cast<std::size_t>(splits_per_tree_);
      const std::size_t l0 = static_cast<std::size_t>(t) * static_cast<std::size_t>(leaves_per_tree_);
      const std::size_t nlt = (std::size_t(1) << dt) * static_cast<std::size_t>(D_);
      const std::size_t nst = static_cast<std::size_t>(gbdt_tree_splits(p_.grow_policy, dt));
      for (std::size_t j = 0; j < nst; ++j) {  // so <= s0 + j: packing forward in place is safe
        m.split_feature[so + j] = m.split_feature[s0 + j];
        m.split_bin[so + j] = m.split_bin[s0 + j];
        m.split_gain[so + j] = m.split_gain[s0 + j];
      }
      for (std::size_t j = 0; j < nlt; ++j) m.leaf_values[lo + j] = m.leaf_values[l0 + j];
      so += nst;
      lo += nlt;
    }
    m.split_feature.resize(so);
    m.split_bin.resize(so);
    m.split_gain.resize(so);
    m.leaf_values.resize(lo);
  }

 private:
  // Level d's histograms of the built leaves (n_slots of them). Below the
  // root only the rows of built leaves are visited (about half): they are
  // listed first. The shared variant takes as many features per block as a
  // 48 KB histogram holds (balanced over the groups), and one wave of
  // blocks: enough row shares to fill every SM at the kernel's occupancy.
  // Which block adds which integers changes no result.
  void build_histograms(int d, int n_slots) {
    const bool listed = d > 0;
    if (listed) {
      TL_CUDA_CHECK(cudaMemsetAsync(row_count_.data(), 0, sizeof(unsigned int), L_.stream));
      built_rows_kernel<<<L_.grid(n_), kBlock, 0, L_.stream>>>(n_, leaf_.data(), slot_of_leaf_.data(), rows_.data(),
                                                               row_count_.data());
      TL_CUDA_CHECK_LAUNCH("built_rows_kernel");
    }
    const std::int64_t per_feature = static_cast<std::int64_t>(n_slots) * Bp_ * Dh_ * 16;
    if (per_feature <= L_.smem_optin) {
      const std::int64_t budget = std::max<std::int64_t>(48 * 1024, per_feature);
      const std::int64_t fg_max = std::max<std::int64_t>(1, std::min<std::int64_t>(F_, budget / per_feature));
      const std::int64_t groups = ceil_div(F_, fg_max);
      const int Fg = static_cast<int>(ceil_div(F_, groups));
      const std::size_t bytes = static_cast<std::size_t>(per_feature) * Fg;
      if (bytes > 48 * 1024 && !smem_set_) {
        TL_CUDA_CHECK(cudaFuncSetAttribute(hist_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           L_.smem_optin));
        smem_set_ = true;
      }
      int per_sm = 0;
      TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hist_smem_kernel, kBlock, bytes));
      const std::int64_t want = ceil_div(static_cast<std::int64_t>(std::max(per_sm, 1)) * L_.sms, groups);
      const std::int64_t shares = std::max<std::int64_t>(1, std::min<std::int64_t>({want, ceil_div(n_, kBlock), 65535}));
      const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(shares));
      hist_smem_kernel<<<grid, kBlock, bytes, L_.stream>>>(
          bins_.data(), n_, F_, Bp_, Dh_, Fg, n_slots, q_.data(), listed ? rows_.data() : nullptr,
          listed ? row_count_.data() : nullptr, leaf_.data(), slot_of_leaf_.data(), leaf_of_slot_.data(),
          reinterpret_cast<ull*>(cur_.data()));
      TL_CUDA_CHECK_LAUNCH("hist_smem_kernel");
    } else {
      hist_global_kernel<<<L_.grid(n_), kBlock, 0, L_.stream>>>(bins_.data(), n_, F_, Bp_, Dh_, q_.data(), leaf_.data(),
                                                                slot_of_leaf_.data(),
                                                                reinterpret_cast<ull*>(cur_.data()));
      TL_CUDA_CHECK_LAUNCH("hist_global_kernel");
    }
  }

  Launch L_;
  GbdtParams p_;
  std::int64_t n_;
  int F_, D_;
  int Dh_;  // histogram channels per row (gbdt::hist_channels): D_, plus a count channel under min_data_in_leaf > 1
  DeviceBorders B_;
  DeviceBuffer<std::uint8_t> bins_;
  int Bp_ = 1;
  int depth_ = 0;
  bool has_eval_ = false;
  std::int64_t m_ = 0;
  DeviceBuffer<std::uint8_t> ebins_;
  DeviceBuffer<double> ey_, ew_, eapprox_;
  std::vector<double> eraw_host_;  // host copy of eapprox_ (eval_raw)
  std::vector<std::int32_t> tree_depth_;  // per grown tree
  DeviceBuffer<double> y_, w_, approx_, g_, h_;
  DeviceBuffer<int2> q_;          // fixed-point (g, h) per row and output
  DeviceBuffer<std::int32_t> rows_;  // rows of the built leaves (levels >= 1)
  DeviceBuffer<unsigned int> row_count_;
  DeviceBuffer<std::int32_t> leaf_;
  DeviceBuffer<ull> maxbits_, counts_, tot_;
  std::vector<int> nb_host_;  // the current tree's allowed border counts (rsm < 1), source of nb_
  DeviceBuffer<int> nb_;
  std::int64_t per_leaf_ = 0;
  DeviceBuffer<std::int64_t> prev_, cur_;
  DeviceBuffer<double> tleaf_;
  DeviceBuffer<std::int32_t> slot_of_leaf_, leaf_of_slot_;
  int cand_blocks_ = 1;
  DeviceBuffer<Cand> cand_;
  DeviceBuffer<std::int32_t> sfeat_, sbin_;
  DeviceBuffer<double> sgain_, values_;
  std::int64_t leaves_per_tree_ = 1;
  bool depthwise_ = false;            // one split per node (Depthwise, Lossguide)
  bool lossguide_ = false;
  DeviceBuffer<std::int64_t> lg_tot_;  // Lossguide: the grown tree's final leaf totals
  DeviceBuffer<std::int32_t> lg_map_;  // Lossguide: grown leaf -> leaf of the cut tree
  std::int64_t splits_per_tree_ = 0;  // split slots per tree (depth_, or 2^depth_ - 1 per node)
  DeviceBuffer<double> loss_part_;
  DeviceBuffer<std::uint8_t> nan_bin_;  // nan_mode Learned: per feature, 1 where bin 0 is the NaN bin; else empty
  DeviceBuffer<std::uint8_t> tright_;   // with nan_bin_: per (leaf, f, b), 1 where NaN-right scored tleaf_
  bool smem_set_ = false;
};

// ===========================================================================
// Prediction
// ===========================================================================

// Grid-stride over rows, one thread per row: the row's leaf in each tree of
// [t0, t1) (splits compared in double; NaN right under nan_mode Max, or
// where snan, a Learned model's split_nan_right, says so), accumulated in
// double in tree order, from base (acc == nullptr) or from acc. D == 1 keeps
// the accumulator in a register; otherwise acc (n x D) holds it. Then either
// acc is left (staged) or out gets float(acc) or float(link(acc)).
// The leaf of row x in the tree whose splits start at so (see GbdtModel).
template <class T>
__device__ __forceinline__ std::int64_t tree_leaf(const T* x, int dp, std::int64_t so,
                                                  const std::int32_t* __restrict__ sfeat,
                                                  const double* __restrict__ sborder,
                                                  const std::uint8_t* __restrict__ snan, bool nan_max,
                                                  bool depthwise) {
  std::int64_t lf = 0;
  for (int d = 0; d < dp; ++d) {
    const std::int64_t s = so + gbdt::split_slot(depthwise, d, lf);
    const int f = sfeat[s];
    if (f < 0) continue;  // a Depthwise node that does not split: left
    lf |= static_cast<std::int64_t>(
              gbdt::goes_right(static_cast<double>(x[f]), sborder[s], gbdt::nan_goes_right(snan, s, nan_max)))
          << d;
  }
  return lf;
}

template <class T>
__global__ void predict_kernel(const T* __restrict__ X, std::int64_t n, int F, std::int64_t t0, std::int64_t t1,
                               const std::int32_t* __restrict__ depth, const std::int64_t* __restrict__ soff,
                               const std::int64_t* __restrict__ loff, const std::int32_t* __restrict__ sfeat,
                               const double* __restrict__ sborder, const std::uint8_t* __restrict__ snan,
                               const double* __restrict__ leaves,
                               const double* __restrict__ base, int D, bool nan_max, bool depthwise, GbdtLoss loss,
                               bool start_from_acc,
                               bool staged, int kind, double* __restrict__ acc, float* __restrict__ out) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const T* x = X + i * F;
    if (D == 1) {
      double a = start_from_acc ? acc[i] : base[0];
      for (std::int64_t t = t0; t < t1; ++t)
        a = num::add(a, leaves[loff[t] + tree_leaf(x, depth[t], soff[t], sfeat, sborder, snan, nan_max, depthwise)]);
      if (staged) {
        acc[i] = a;
      } else {
        double p = a;
        if (kind != static_cast<int>(GbdtOutput::Raw)) gbdt::link(loss, 1, static_cast<GbdtOutput>(kind), &a, &p);
        out[i] = static_cast<float>(p);
      }
      continue;
    }
    double* a = acc + i * D;
    if (!start_from_acc)
      for (int k = 0; k < D; ++k) a[k] = base[k];
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t lf = tree_leaf(x, depth[t], soff[t], sfeat, sborder, snan, nan_max, depthwise);
      const double* v = leaves + loff[t] + lf * D;
      for (int k = 0; k < D; ++k) a[k] = num::add(a[k], v[k]);
    }
    if (staged) continue;
    if (kind != static_cast<int>(GbdtOutput::Raw)) gbdt::link(loss, D, static_cast<GbdtOutput>(kind), a, a);
    for (int k = 0; k < D; ++k) out[i * D + k] = static_cast<float>(a[k]);
  }
}

}  // namespace

namespace detail {

template <class T>
GbdtModel gbdt_fit_cuda(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                        const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                        GbdtFitInfo* info, const GbdtCallback& callback) {
  DeviceGuard guard(ctx.device().id);
  CudaTrainer<T> tr(ctx, X, y, weight, params, eval);
  return gbdt::run_fit(tr, params, y, weight, X.rows, eval.y, eval.weight, eval.X.rows, record_train_loss,
                       ctx.n_threads(), info, callback);
}

template <class T>
GbdtModel gbdt_borders_cuda(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode) {
  DeviceGuard guard(ctx.device().id);
  const Launch L = make_launch(ctx);
  auto xs = stage_to_device(ctx, X);
  DeviceBorders B = compute_borders_cuda(L, xs.view, border_count, nan_mode);
  GbdtModel m;
  gbdt::set_borders(m, B.F, B.padded, B.count);
  return m;
}

template <class T>
void gbdt_predict_cuda(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                       std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<float> out) {
  DeviceGuard guard(ctx.device().id);
  const Launch L = make_launch(ctx);
  const int dev = L.dev;
  const std::int64_t n = X.rows;
  const int D = model.n_outputs;
  std::vector<std::int64_t> so, lo;
  gbdt::tree_offsets(model, &so, &lo);
  auto xs = stage_to_device(ctx, X);
  auto d_depth = to_device(model.tree_depth, dev, L.stream);
  auto d_so = to_device(so, dev, L.stream);
  auto d_lo = to_device(lo, dev, L.stream);
  auto d_sf = to_device(model.split_feature, dev, L.stream);
  auto d_sb = to_device(model.split_border, dev, L.stream);
  DeviceBuffer<std::uint8_t> d_snan;
  if (!model.split_nan_right.empty()) d_snan = to_device(model.split_nan_right, dev, L.stream);
  auto d_leaves = to_device(model.leaf_values, dev, L.stream);
  auto d_base = to_device(model.base_score, dev, L.stream);
  const bool staged = acc != nullptr;
  DeviceBuffer<double> d_acc;
  if (staged || D > 1) d_acc = DeviceBuffer<double>(static_cast<std::size_t>(n * D), dev);
  if (staged) upload(d_acc, acc, static_cast<std::size_t>(n * D), L.stream);
  DeviceBuffer<float> d_out;
  float* outp = nullptr;
  if (!staged) {
    TL_REQUIRE(out.is_c_contiguous(), ValueError, "gbdt_predict: output must be C-contiguous");
    outp = out.data;
    if (out.on_host()) {
      d_out = DeviceBuffer<float>(static_cast<std::size_t>(n * D), dev);
      outp = d_out.data();
    }
  }
  predict_kernel<T><<<L.grid(n), kBlock, 0, L.stream>>>(
      xs.view.data, n, model.n_features, tree_begin, tree_end, d_depth.data(), d_so.data(), d_lo.data(), d_sf.data(),
      d_sb.data(), d_snan.size() ? d_snan.data() : nullptr, d_leaves.data(), d_base.data(), D,
      model.nan_mode == GbdtNanMode::Max,
      gbdt_per_node(model.grow_policy), model.loss, staged, staged,
      static_cast<int>(kind), d_acc.data(), outp);
  TL_CUDA_CHECK_LAUNCH("predict_kernel");
  if (staged) download(acc, d_acc, static_cast<std::size_t>(n * D), L.stream);
  if (!staged && out.on_host())
    TL_CUDA_CHECK(cudaMemcpyAsync(out.data, outp, sizeof(float) * n * D, cudaMemcpyDeviceToHost, L.stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(L.stream));
}

#define TL_GBDT_INSTANTIATE(T)                                                                                    \
  template GbdtModel gbdt_fit_cuda<T>(const Context&, MatrixView<const T>, const double*, const double*,           \
                                      const GbdtParams&, const GbdtEvalSet<T>&, bool, GbdtFitInfo*,                \
                                      const GbdtCallback&);                                                        \
  template GbdtModel gbdt_borders_cuda<T>(const Context&, MatrixView<const T>, int, GbdtNanMode);                 \
  template void gbdt_predict_cuda<T>(const Context&, const GbdtModel&, MatrixView<const T>, std::int64_t,         \
                                     std::int64_t, double*, GbdtOutput, MatrixView<float>);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace detail
}  // namespace tl
