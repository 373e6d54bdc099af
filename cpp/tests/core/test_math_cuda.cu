// The transcendentals on the GPU: an exhaustive sweep of all 2^32 float32 bit
// patterns per function against a double-precision reference computed on the
// GPU, GPU-versus-CPU bit identity on a large sample, and the separating arm of
// rule 4 against CUDA's own expf / __expf / logf / tanhf. CUDA test binary only;
// skips (or fails under TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "core/cuda/memory.cuh"
#include "twinlearn/core/math.hpp"
#include "twinlearn/core/math_array.hpp"
#include "twinlearn/core/parallel.hpp"
#include "ulp_util.hpp"

namespace {

// Same order as tl::MathFn.
enum Fn : int { kExp, kExpm1, kLog, kLog1p, kTanh, kSigmoid, kSin, kCos, kErf, kNumFns };
static_assert(static_cast<int>(tl::MathFn::Erf) == kErf, "Fn follows tl::MathFn");
const char* const kNames[] = {"exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos", "erf"};

__host__ __device__ float ours(int f, float x) {
  switch (f) {
    case kExp: return tl::num::exp(x);
    case kExpm1: return tl::num::expm1(x);
    case kLog: return tl::num::log(x);
    case kLog1p: return tl::num::log1p(x);
    case kTanh: return tl::num::tanh(x);
    case kSigmoid: return tl::num::sigmoid(x);
    case kSin: return tl::num::sin(x);
    case kCos: return tl::num::cos(x);
    default: return tl::num::erf(x);
  }
}

// Reference: CUDA's double-precision math library (errors of a couple of
// double ulps, i.e. about 2^-28 float ulps).
__device__ double reference(int f, float xf) {
  const double x = xf;
  switch (f) {
    case kExp: return ::exp(x);
    case kExpm1: return ::expm1(x);
    case kLog: return ::log(x);
    case kLog1p: return ::log1p(x);
    case kTanh: return ::tanh(x);
    case kSigmoid: return x >= 0 ? 1.0 / (1.0 + ::exp(-x)) : ::exp(x) / (1.0 + ::exp(x));
    case kSin: return ::sin(x);
    case kCos: return ::cos(x);
    default: return ::erf(x);
  }
}

struct SweepResult {
  unsigned long long worst;      // (float bits of the largest error) << 32 | its input's bits
  unsigned long long over_2ulp;  // inputs with error > 2 ulp
};

// Threads map to bit patterns: pattern u = global thread id + k * grid size
// (grid-stride over all 2^32 patterns). The maximum is combined with atomics,
// which is order-independent.
__global__ void sweep_kernel(int f, SweepResult* res) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  float local_max = 0.0f;
  unsigned int local_at = 0;
  unsigned long long local_over = 0;
  for (unsigned long long u = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       u < (1ull << 32); u += stride) {
    const float x = __uint_as_float(static_cast<unsigned int>(u));
    const float e = static_cast<float>(tltest::float_ulp_error(ours(f, x), reference(f, x)));
    if (e > local_max) {
      local_max = e;
      local_at = static_cast<unsigned int>(u);
    }
    if (e > 2.0) ++local_over;
  }
  // Non-negative floats order like their bit patterns: one atomicMax keeps the
  // largest error together with an input that has it.
  atomicMax(&res->worst, (static_cast<unsigned long long>(__float_as_uint(local_max)) << 32) | local_at);
  if (local_over) atomicAdd(&res->over_2ulp, local_over);
}

// One thread per sample index i, pattern i * step (grid-stride).
__global__ void sample_kernel(int f, std::uint32_t step, std::int64_t n, float* out) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = ours(f, __uint_as_float(static_cast<std::uint32_t>(i) * step));
}

// One thread per input of the scan [1, 1 + n 2^-23): counts the inputs where
// CUDA's functions give other bits than ours.
__global__ void cuda_libm_kernel(std::int64_t n, unsigned long long* differ) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float x = __uint_as_float(0x3f800000u + static_cast<std::uint32_t>(i));
    if (__float_as_uint(tl::num::exp(x)) != __float_as_uint(expf(x))) atomicAdd(&differ[0], 1ull);
    if (__float_as_uint(tl::num::exp(x)) != __float_as_uint(__expf(x))) atomicAdd(&differ[1], 1ull);
    if (__float_as_uint(tl::num::log(x)) != __float_as_uint(logf(x))) atomicAdd(&differ[2], 1ull);
    if (__float_as_uint(tl::num::tanh(x)) != __float_as_uint(tanhf(x))) atomicAdd(&differ[3], 1ull);
  }
}

}  // namespace

// Every float32 input, every function: at most 2 ulp from the GPU reference.
TEST(MathCuda, ExhaustiveFloatSweepWithinTwoUlp) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::detail::DeviceBuffer<SweepResult> res(1, 0);
  for (int f = 0; f < kNumFns; ++f) {
    SweepResult h{0, 0};
    ASSERT_EQ(cudaMemcpy(res.data(), &h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    sweep_kernel<<<4096, 256>>>(f, res.data());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(&h, res.data(), sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    const float max_err = tl::num::float_from_bits(static_cast<std::uint32_t>(h.worst >> 32));
    const float worst = tl::num::float_from_bits(static_cast<std::uint32_t>(h.worst));
    std::cout << "[ sweep    ] " << kNames[f] << ": max " << max_err << " ulp over all 2^32 inputs (at "
              << std::hexfloat << worst << std::defaultfloat << "), " << h.over_2ulp << " inputs above 2 ulp\n";
    RecordProperty(std::string("max_ulp_") + kNames[f], std::to_string(max_err));
    EXPECT_LE(max_err, 2.0f) << kNames[f];
    EXPECT_EQ(h.over_2ulp, 0u) << kNames[f];
  }
}

// GPU bits equal CPU bits on every 257th bit pattern (about 16.7 million per function).
TEST(MathCuda, GpuBitsEqualCpuBits) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::uint32_t step = 257;
  const std::int64_t n = ((std::int64_t(1) << 32) + step - 1) / step;
  tl::detail::DeviceBuffer<float> d(static_cast<std::size_t>(n), 0);
  std::vector<float> gpu(static_cast<std::size_t>(n)), cpu(static_cast<std::size_t>(n));
  tl::Context ctx(tl::Device{}, 0, tl::NumericMode::Identical, 0);
  for (int f = 0; f < kNumFns; ++f) {
    sample_kernel<<<4096, 256>>>(f, step, n, d.data());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(gpu.data(), d.data(), sizeof(float) * n, cudaMemcpyDeviceToHost), cudaSuccess);
    // The CPU side runs through the library's CPU backend (its compile flags).
    std::vector<float> xs(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) xs[i] = tl::num::float_from_bits(static_cast<std::uint32_t>(i) * step);
    tl::math_apply<float>(ctx, static_cast<tl::MathFn>(f), tl::VectorView<const float>(xs.data(), n),
                          tl::VectorView<float>(cpu.data(), n));
    std::int64_t mismatches = 0, first = -1;
    for (std::int64_t i = 0; i < n; ++i)
      if (!tltest::same_bits(gpu[i], cpu[i]) && mismatches++ == 0) first = i;
    EXPECT_EQ(mismatches, 0) << kNames[f] << ": first mismatch at bit pattern 0x" << std::hex
                             << static_cast<std::uint32_t>(first) * step;
  }
}

// Rule 4, separating arm on the device: CUDA's expf, __expf, logf and tanhf
// give other bits than ours on some inputs of a fixed scan.
TEST(MathCuda, CudaLibmDiffersFromOurs) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::detail::DeviceBuffer<unsigned long long> d(5, 0);
  unsigned long long h[5] = {0, 0, 0, 0, 0};
  ASSERT_EQ(cudaMemcpy(d.data(), h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  cuda_libm_kernel<<<1024, 256>>>(std::int64_t(1) << 22, d.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(h, d.data(), sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_GT(h[0], 0u) << "expf";
  EXPECT_GT(h[1], 0u) << "__expf";
  EXPECT_GT(h[2], 0u) << "logf";
  EXPECT_GT(h[3], 0u) << "tanhf";
}

namespace {
// One thread: the rule-3 fixture evaluated on the device.
__global__ void fma_fixture_kernel(float* out) {
  const float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  out[0] = tl::num::fma(a, a, c);
  out[1] = tl::num::add(tl::num::mul(a, a), c);
}
}  // namespace

// Rule 3 on the device: the fused and the spelled-out forms give the same
// bits as on the CPU and differ from each other on the fixture.
TEST(MathCuda, FmaFixtureSeparatesOnDevice) {
  TL_REQUIRE_GPU_OR_SKIP();
  tl::detail::DeviceBuffer<float> d(2, 0);
  fma_fixture_kernel<<<1, 1>>>(d.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  float h[2];
  ASSERT_EQ(cudaMemcpy(h, d.data(), sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(h[0], 0x1p-24f);
  EXPECT_EQ(h[1], 0.0f);
}
