// Throughput of the canonical GEMM and the canonical sum against their
// non-canonical peers on one GPU:
//   GEMM  canonical (identical mode) vs cuBLAS SGEMM/DGEMM (default math
//         mode, no TF32), in TFLOP/s, at 4096^3 (float and double) and
//         8192^3 (float);
//   sum   canonical reduce_sum (public API, and its kernels alone) vs a plain
//         one-pass atomicAdd sum vs cub::DeviceReduce::Sum, in GB/s, over
//         2^28 floats.
// Each figure is the median of kRuns timed runs (CUDA events) after warm-up.
// Usage: bench_gemm [device ordinal]
#include <cub/device/device_reduce.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/cuda/check.cuh"
#include "core/cuda/memory.cuh"
#include "core/reduce/reduce_kernels.cuh"
#include "twinlearn/core/gemm.hpp"
#include "twinlearn/core/reduce.hpp"

namespace {

constexpr int kWarmup = 2;
constexpr int kRuns = 7;

#define BENCH_CUBLAS_CHECK(call)                                                           \
  do {                                                                                     \
    cublasStatus_t st_ = (call);                                                           \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                    \
      std::fprintf(stderr, "cuBLAS error %s at %s:%d\n", #call, __FILE__, __LINE__);       \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

// Median time in milliseconds of fn() (which queues work on the default
// stream, or completes it), measured with CUDA events.
double median_ms(const std::function<void()>& fn) {
  for (int i = 0; i < kWarmup; ++i) fn();
  TL_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  TL_CUDA_CHECK(cudaEventCreate(&a));
  TL_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int i = 0; i < kRuns; ++i) {
    TL_CUDA_CHECK(cudaEventRecord(a, 0));
    fn();
    TL_CUDA_CHECK(cudaEventRecord(b, 0));
    TL_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    TL_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  TL_CUDA_CHECK(cudaEventDestroy(a));
  TL_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Fills x[0..n) with values in [-1, 1) from a hash of the index.
// Mapping: grid-stride loop, one element per thread per step.
template <class T>
__global__ void fill_kernel(T* x, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint64_t h = (static_cast<std::uint64_t>(i) + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    x[i] = static_cast<T>(static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);
  }
}

template <class T>
void fill(T* x, std::int64_t n, std::uint64_t seed) {
  fill_kernel<T><<<1024, 256>>>(x, n, seed);
  TL_CUDA_CHECK_LAUNCH("fill_kernel");
}

void cublas_gemm(cublasHandle_t h, int m, int n, int k, const float* A, const float* B, float* C) {
  const float one = 1.0f, zero = 0.0f;
  BENCH_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n));
}
void cublas_gemm(cublasHandle_t h, int m, int n, int k, const double* A, const double* B, double* C) {
  const double one = 1.0, zero = 0.0;
  BENCH_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n));
}

template <class T>
void bench_gemm(cublasHandle_t h, const tl::Context& ctx, std::int64_t s, const char* name) {
  const int dev = ctx.device().id;
  tl::detail::DeviceBuffer<T> A(static_cast<std::size_t>(s * s), dev), B(A.size(), dev), C(A.size(), dev),
      C2(A.size(), dev);
  fill(A.data(), s * s, 1);
  fill(B.data(), s * s, 2);
  const tl::Device d = ctx.device();
  tl::MatrixView<const T> Av(A.data(), s, s, d), Bv(B.data(), s, s, d);
  tl::MatrixView<T> Cv(C.data(), s, s, d);
  const double flop = 2.0 * s * s * s;
  const double t_can = median_ms([&] { tl::gemm<T>(ctx, Av, Bv, false, Cv); });
  const double t_can_t = median_ms([&] { tl::gemm<T>(ctx, Av, Bv, true, Cv); });
  const double t_blas = median_ms([&] { cublas_gemm(h, int(s), int(s), int(s), A.data(), B.data(), C2.data()); });
  // Sanity: both products of the same operands agree to working precision.
  tl::gemm<T>(ctx, Av, Bv, false, Cv);
  TL_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> c1(static_cast<std::size_t>(s * s)), c2(c1.size());
  TL_CUDA_CHECK(cudaMemcpy(c1.data(), C.data(), sizeof(T) * c1.size(), cudaMemcpyDeviceToHost));
  TL_CUDA_CHECK(cudaMemcpy(c2.data(), C2.data(), sizeof(T) * c2.size(), cudaMemcpyDeviceToHost));
  double err = 0, mag = 0;
  for (std::size_t i = 0; i < c1.size(); i += 997) {
    err = std::max(err, std::fabs(double(c1[i]) - double(c2[i])));
    mag = std::max(mag, std::fabs(double(c2[i])));
  }
  std::printf("gemm %-6s %5lld^3  canonical A.B %7.2f TFLOP/s  canonical A.B^T %7.2f TFLOP/s  cuBLAS %7.2f TFLOP/s"
              "  (canonical/cuBLAS %.2f; max |diff| %.2e of %.2e)\n",
              name, static_cast<long long>(s), flop / t_can / 1e9, flop / t_can_t / 1e9, flop / t_blas / 1e9,
              t_blas / t_can, err, mag);
}

// One-pass sum with float atomics: fast, not canonical (the order in which
// blocks land varies from run to run).
// Mapping: grid-stride over float4s; each thread sums its share, the block
// reduces with warp shuffles, and thread 0 adds the block's sum with atomicAdd.
__global__ void atomic_sum_kernel(const float4* __restrict__ x, std::int64_t n4, float* out) {
  float s = 0.0f;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    s += (v.x + v.y) + (v.z + v.w);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  __shared__ float warp_sums[32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) atomicAdd(out, s);
  }
}

void bench_sum(const tl::Context& ctx) {
  const std::int64_t n = std::int64_t(1) << 28;
  const int dev = ctx.device().id;
  const double bytes = 4.0 * n;
  tl::detail::DeviceBuffer<float> x(static_cast<std::size_t>(n), dev);
  tl::detail::DeviceBuffer<float> out(1, dev);
  fill(x.data(), n, 3);
  tl::VectorView<const float> xv(x.data(), n, ctx.device());
  int sms = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));

  float canonical = 0;
  const double t_api = median_ms([&] { canonical = tl::reduce_sum<float>(ctx, xv); });
  using Op = tl::reduce_detail::SumOp<float, float>;
  // The canonical kernels alone: no staging, no result copy to the host.
  const double t_kern = median_ms([&] {
    auto r = tl::detail::reduce_gpu::reduce_columns_device<Op>(x.data(), nullptr, n, 1, dev, 0);
  });
  const double t_atomic = median_ms([&] {
    TL_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, sizeof(float), 0));
    atomic_sum_kernel<<<sms * 8, 256>>>(reinterpret_cast<const float4*>(x.data()), n / 4, out.data());
    TL_CUDA_CHECK_LAUNCH("atomic_sum_kernel");
  });
  float atomic = 0;
  TL_CUDA_CHECK(cudaMemcpy(&atomic, out.data(), sizeof(float), cudaMemcpyDeviceToHost));
  std::size_t temp_bytes = 0;
  TL_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, x.data(), out.data(), n));
  tl::detail::DeviceBuffer<unsigned char> temp(temp_bytes, dev);
  const double t_cub = median_ms([&] {
    TL_CUDA_CHECK(cub::DeviceReduce::Sum(temp.data(), temp_bytes, x.data(), out.data(), n));
  });
  float cubsum = 0;
  TL_CUDA_CHECK(cudaMemcpy(&cubsum, out.data(), sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("sum float 2^28    canonical (API) %7.1f GB/s  canonical (kernels) %7.1f GB/s  atomics %7.1f GB/s"
              "  cub %7.1f GB/s  (sums %.6g %.6g %.6g)\n",
              bytes / t_api / 1e6, bytes / t_kern / 1e6, bytes / t_atomic / 1e6, bytes / t_cub / 1e6, canonical,
              atomic, cubsum);
}

}  // namespace

int main(int argc, char** argv) {
  const int dev = argc > 1 ? std::atoi(argv[1]) : 0;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= dev) {
    std::fprintf(stderr, "bench_gemm: no CUDA device %d\n", dev);
    return 1;
  }
  TL_CUDA_CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop{};
  TL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::printf("device %d: %s (sm_%d%d, %d SMs)\n", dev, prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  const tl::Context ctx(tl::Device{tl::DeviceKind::CUDA, dev}, 0, tl::NumericMode::Identical, 0);
  cublasHandle_t h;
  BENCH_CUBLAS_CHECK(cublasCreate(&h));
  BENCH_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  bench_gemm<float>(h, ctx, 4096, "float");
  bench_gemm<float>(h, ctx, 8192, "float");
  bench_gemm<double>(h, ctx, 4096, "double");
  bench_sum(ctx);
  BENCH_CUBLAS_CHECK(cublasDestroy(h));
  return 0;
}
