// Split operands for 3xTF32 products on the tensor cores (fast mode only):
// a float x is hi + lo, hi = x rounded to TF32 (10 mantissa bits, round to
// nearest, ties away), lo = x - hi (exact in float). Rows of the left
// operand stored as [hi | hi | lo] and of the right one as [hi | lo | hi]
// make one TF32 product of depth 3d equal to hi.hi' + hi.lo' + lo.hi', the
// dot product to about float's accuracy (lo.lo' is below float rounding; lo
// enters the tensor cores as TF32). Used by KMeans' assignment and the
// nearest-neighbour search.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

#include "core/cuda/blas.cuh"
#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/cuda/tf32_round.cuh"
#include "twinlearn/core/numerics.hpp"

namespace tl::detail {
namespace {

// out (rows x 3d) from A (rows x d, row-major): [hi | hi | lo], or
// [hi | lo | hi] with lo_middle. One thread per entry of A.
__global__ void split_tf32_kernel(const float* __restrict__ A, std::int64_t rows, std::int64_t d,
                                         bool lo_middle, float* __restrict__ out) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= rows * d) return;
  const std::int64_t r = e / d, f = e - r * d;
  const float x = A[e], hi = tf32_round(x), lo = num::sub(x, hi);
  float* o = out + r * 3 * d;
  o[f] = hi;
  o[d + f] = lo_middle ? lo : hi;
  o[2 * d + f] = lo_middle ? hi : lo;
}

// Bytes of the dot-product block that one 3xTF32 GEMM of the fast searches
// writes and the selection kernel then reads (KMeans: rows x clusters; the
// neighbours: queries x index chunk): `preferred`, or
// TWINLEARN_FAST_CHUNK_BYTES (at least 1 MiB) to measure other sizes or to
// force many chunks in tests. Smaller blocks mean more launches; at 32 MiB
// the H200 read them back from DRAM anyway (L2 hit rate 4% under ncu), and
// 8 MiB blocks were slower for both searches.
std::int64_t fast_chunk_bytes(std::int64_t preferred) {
  if (const char* env = std::getenv("TWINLEARN_FAST_CHUNK_BYTES")) {
    const long long b = std::strtoll(env, nullptr, 10);
    return b >= (1LL << 20) ? static_cast<std::int64_t>(b) : std::int64_t(1) << 20;
  }
  return preferred;
}

// The dot products of split rows: dots[c + r * ldc] = A3 row r . B3 row c
// for r < na, c < nb (A3 split as [hi | hi | lo], B3 as [hi | lo | hi], rows of
// d3 = 3d floats), one cuBLAS TF32 GEMM (column-major: dots (nb x na) =
// B3ᵀ A3).
void split_dots(cublasHandle_t blas, const float* A3, std::int64_t na, const float* B3, std::int64_t nb,
                std::int64_t d3, float* dots, std::int64_t ldc) {
  const float one = 1.0f, zero = 0.0f;
  TL_CUBLAS_CHECK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(nb), static_cast<int>(na),
                               static_cast<int>(d3), &one, B3, CUDA_R_32F, static_cast<int>(d3), A3, CUDA_R_32F,
                               static_cast<int>(d3), &zero, dots, CUDA_R_32F, static_cast<int>(ldc),
                               CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

// Two dot-product blocks used in turn by the neighbour search's loop of
// (GEMM, then the selection that reads the block): the GEMM of block c + 1
// runs on the caller's stream while the selection of block c runs on a
// second stream. The selections run in order on their stream (they update
// the same lists); a GEMM waits for the selection that last read its block.
// join() makes the caller's stream wait for every selection (the destructor
// joins too). TWINLEARN_FAST_PIPELINE=0: one block, everything on the
// caller's stream (to measure the difference). On the H200 this paid with
// 128 MiB blocks (1M x 64 index, 10k queries: 38.5 ms against 46.9 ms serial
// with 32 MiB blocks); KMeans' assignment ran slower so (55.4 against
// 50.1 ms: the GEMM and the argmin each slower side by side) and keeps one
// block.
//   float* dots = pipe.next();          // GEMM into dots on `stream`
//   cudaStream_t rs = pipe.reader();    // then the reader on rs
//   ... launch on rs ...; pipe.read();
class DotsPipeline {
 public:
  DotsPipeline(cudaStream_t stream, int dev, std::size_t floats) : main_(stream) {
    const char* env = std::getenv("TWINLEARN_FAST_PIPELINE");
    overlap_ = !(env != nullptr && env[0] == '0');
    for (int b = 0; b < (overlap_ ? 2 : 1); ++b) buf_[b] = DeviceBuffer<float>(floats, dev);
    if (!overlap_) return;
    TL_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    for (int b = 0; b < 2; ++b) {
      TL_CUDA_CHECK(cudaEventCreateWithFlags(&made_[b], cudaEventDisableTiming));
      TL_CUDA_CHECK(cudaEventCreateWithFlags(&read_[b], cudaEventDisableTiming));
    }
  }
  DotsPipeline(const DotsPipeline&) = delete;
  DotsPipeline& operator=(const DotsPipeline&) = delete;
  ~DotsPipeline() {
    if (!overlap_) return;
    if (done_ != nullptr) cudaStreamWaitEvent(main_, done_, 0);  // no error left behind for a later check
    for (int b = 0; b < 2; ++b) {
      cudaEventDestroy(made_[b]);
      cudaEventDestroy(read_[b]);
    }
    cudaStreamDestroy(side_);
  }
  // The block for the next GEMM (enqueue it on the caller's stream).
  float* next() {
    if (!overlap_) return buf_[0].data();
    cur_ ^= 1;
    TL_CUDA_CHECK(cudaStreamWaitEvent(main_, read_[cur_], 0));  // a never-recorded event: no wait
    return buf_[cur_].data();
  }
  // The stream for the reader of the block just made.
  cudaStream_t reader() {
    if (!overlap_) return main_;
    TL_CUDA_CHECK(cudaEventRecord(made_[cur_], main_));
    TL_CUDA_CHECK(cudaStreamWaitEvent(side_, made_[cur_], 0));
    return side_;
  }
  // After the reader was enqueued.
  void read() {
    if (!overlap_) return;
    TL_CUDA_CHECK(cudaEventRecord(read_[cur_], side_));
    done_ = read_[cur_];
  }
  // The caller's stream waits for every reader enqueued so far.
  void join() {
    if (overlap_ && done_ != nullptr) TL_CUDA_CHECK(cudaStreamWaitEvent(main_, done_, 0));
  }

 private:
  cudaStream_t main_, side_ = nullptr;
  bool overlap_ = true;
  int cur_ = 1;
  DeviceBuffer<float> buf_[2];
  cudaEvent_t made_[2] = {nullptr, nullptr}, read_[2] = {nullptr, nullptr}, done_ = nullptr;
};

// Launches split_tf32_kernel on `stream`.
void split_tf32(const float* A, std::int64_t rows, std::int64_t d, bool lo_middle, float* out,
                       cudaStream_t stream) {
  if (rows * d == 0) return;
  split_tf32_kernel<<<blocks_for(rows * d, 256), 256, 0, stream>>>(A, rows, d, lo_middle, out);
  TL_CUDA_CHECK_LAUNCH("split_tf32_kernel");
}

}  // namespace
}  // namespace tl::detail
