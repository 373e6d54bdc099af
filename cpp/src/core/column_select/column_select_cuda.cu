#include <algorithm>
#include <climits>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <vector>

#include "core/column_select/column_select_impl.hpp"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"

namespace tl::detail {
namespace {

// Keys of one batch of columns are sorted at once; a batch holds at most
// this many elements, which bounds the device memory taken (two key buffers
// and the sort's scratch space).
constexpr std::int64_t kSelectBatchElems = std::int64_t(1) << 26;
// Columns of at least this many rows are sorted one by one with the
// device-wide radix sort; shorter ones together with the segmented sort
// (one block per column).
constexpr std::int64_t kLargeColumn = std::int64_t(1) << 15;
constexpr int kTile = 32;

// Tiled transpose of the column batch [c0, c0 + cb) into keys: one 32 x 32
// tile of X per block (blockDim = 32 x 8; tiles numbered row-tile-major in a
// 1-D grid, blockIdx.x = row_tile * col_tiles + col_tile), read row-wise and
// written column-wise through shared memory, so both global accesses are
// coalesced. keys[jj * rows + i] = to_key(X[i, c0 + jj]).
template <class T>
__global__ void transpose_keys_kernel(const T* __restrict__ X, std::int64_t rows, std::int64_t cols, std::int64_t c0,
                                      std::int64_t cb, std::int64_t col_tiles,
                                      select_detail::key_t<T>* __restrict__ keys) {
  using K = select_detail::key_t<T>;
  __shared__ K tile[kTile][kTile + 1];
  const std::int64_t i0 = (static_cast<std::int64_t>(blockIdx.x) / col_tiles) * kTile;
  const std::int64_t j0 = (static_cast<std::int64_t>(blockIdx.x) % col_tiles) * kTile;
  for (int di = threadIdx.y; di < kTile; di += blockDim.y) {
    const std::int64_t i = i0 + di, jj = j0 + threadIdx.x;
    if (i < rows && jj < cb) tile[di][threadIdx.x] = select_detail::to_key(X[i * cols + c0 + jj]);
  }
  __syncthreads();
  for (int dj = threadIdx.y; dj < kTile; dj += blockDim.y) {
    const std::int64_t jj = j0 + dj, i = i0 + threadIdx.x;
    if (i < rows && jj < cb) keys[jj * rows + i] = tile[threadIdx.x][dj];
  }
}

// One thread per requested (rank, column) of the batch: reads the sorted
// key at that rank. ranks and out are laid out k x cols.
template <class T>
__global__ void gather_ranks_kernel(const select_detail::key_t<T>* __restrict__ sorted, std::int64_t rows,
                                    std::int64_t cols, std::int64_t c0, std::int64_t cb, std::int64_t k,
                                    const std::int64_t* __restrict__ ranks, T* __restrict__ out) {
  using K = select_detail::key_t<T>;
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= k * cb) return;
  const std::int64_t r = t / cb, jj = t % cb;
  const std::int64_t q = ranks[r * cols + c0 + jj];
  out[r * cols + c0 + jj] = select_detail::from_key<T>(q >= 0 ? sorted[jj * rows + q] : ~K(0));
}

// offsets[s] = s * rows: segment boundaries of the column batch.
__global__ void segment_offsets_kernel(int* __restrict__ offsets, std::int64_t n, std::int64_t rows) {
  const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s <= n) offsets[s] = static_cast<int>(s * rows);
}

}  // namespace

template <class T>
void column_select_cuda(const Context& ctx, MatrixView<const T> X, const std::int64_t* ranks, std::int64_t k, T* out) {
  using K = select_detail::key_t<T>;
  const std::int64_t rows = X.rows, cols = X.cols;
  TL_REQUIRE(rows <= INT_MAX, ValueError, "column_select: the CUDA backend supports at most ", INT_MAX, " rows, got ",
             rows);
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  DeviceBuffer<std::int64_t> d_ranks(static_cast<std::size_t>(k * cols), dev);
  DeviceBuffer<T> d_out(static_cast<std::size_t>(k * cols), dev);
  TL_CUDA_CHECK(
      cudaMemcpyAsync(d_ranks.data(), ranks, sizeof(std::int64_t) * k * cols, cudaMemcpyHostToDevice, stream));
  if (rows == 0) {
    // Every rank is -1 (validated): NaN everywhere.
    const int block = 256;
    gather_ranks_kernel<T><<<blocks_for(k * cols, block), block, 0, stream>>>(
        nullptr, rows, cols, 0, cols, k, d_ranks.data(), d_out.data());
    TL_CUDA_CHECK_LAUNCH("gather_ranks_kernel");
  } else {
    const std::int64_t cb_max = std::max<std::int64_t>(1, std::min(cols, kSelectBatchElems / rows));
    DeviceBuffer<K> keys_in(static_cast<std::size_t>(cb_max * rows), dev);
    DeviceBuffer<K> keys_out(static_cast<std::size_t>(cb_max * rows), dev);
    DeviceBuffer<int> offsets(static_cast<std::size_t>(cb_max + 1), dev);
    DeviceBuffer<char> scratch;
    auto ensure_scratch = [&](std::size_t bytes) {
      if (bytes > scratch.size()) scratch = DeviceBuffer<char>(bytes, dev);
    };
    for (std::int64_t c0 = 0; c0 < cols; c0 += cb_max) {
      const std::int64_t cb = std::min(cb_max, cols - c0);
      const std::int64_t col_tiles = (cb + kTile - 1) / kTile, row_tiles = (rows + kTile - 1) / kTile;
      transpose_keys_kernel<T><<<static_cast<unsigned>(row_tiles * col_tiles), dim3(kTile, 8), 0, stream>>>(
          xs.view.data, rows, cols, c0, cb, col_tiles, keys_in.data());
      TL_CUDA_CHECK_LAUNCH("transpose_keys_kernel");
      if (rows >= kLargeColumn || cb == 1) {
        std::size_t bytes = 0;
        TL_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys_in.data(), keys_out.data(),
                                                     static_cast<int>(rows), 0, int(sizeof(K) * 8), stream));
        ensure_scratch(bytes);
        for (std::int64_t jj = 0; jj < cb; ++jj) {
          std::size_t b = scratch.size();
          TL_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(scratch.data(), b, keys_in.data() + jj * rows,
                                                       keys_out.data() + jj * rows, static_cast<int>(rows), 0,
                                                       int(sizeof(K) * 8), stream));
        }
      } else {
        segment_offsets_kernel<<<blocks_for(cb + 1, 256), 256, 0, stream>>>(offsets.data(), cb,
                                                                                                rows);
        TL_CUDA_CHECK_LAUNCH("segment_offsets_kernel");
        std::size_t bytes = 0;
        TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(
            nullptr, bytes, keys_in.data(), keys_out.data(), static_cast<int>(cb * rows), static_cast<int>(cb),
            offsets.data(), offsets.data() + 1, 0, int(sizeof(K) * 8), stream));
        ensure_scratch(bytes);
        TL_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(
            scratch.data(), bytes, keys_in.data(), keys_out.data(), static_cast<int>(cb * rows), static_cast<int>(cb),
            offsets.data(), offsets.data() + 1, 0, int(sizeof(K) * 8), stream));
      }
      const int block = 256;
      gather_ranks_kernel<T><<<blocks_for(k * cb, block), block, 0, stream>>>(
          keys_out.data(), rows, cols, c0, cb, k, d_ranks.data(), d_out.data());
      TL_CUDA_CHECK_LAUNCH("gather_ranks_kernel");
    }
  }
  TL_CUDA_CHECK(cudaMemcpyAsync(out, d_out.data(), sizeof(T) * k * cols, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void column_select_cuda<float>(const Context&, MatrixView<const float>, const std::int64_t*, std::int64_t,
                                        float*);
template void column_select_cuda<double>(const Context&, MatrixView<const double>, const std::int64_t*, std::int64_t,
                                         double*);

}  // namespace tl::detail
