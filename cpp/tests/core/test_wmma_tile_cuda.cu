// The 3xTF32 WMMA tile of dot products (core/cuda/wmma_tile.cuh) that the
// fused KMeans assignment and nearest-neighbour search of fast mode share:
// every entry of tiles with partial rows, columns and depth within float
// accuracy of a double-precision reference, entries past the operands exactly
// 0; plain TF32 products (hi only) miss the same bound (separating arm).
// CUDA test binary only; skips (or fails under TWINLEARN_REQUIRE_GPU=1)
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "core/cuda/check.cuh"
#include "core/cuda/wmma_tile.cuh"

namespace tl::detail {
namespace {

template <bool Split>
__global__ void tile_probe_kernel(const float* A, std::int64_t na, std::int64_t row0, const float* B, std::int64_t nb,
                                  std::int64_t col0, int d, float* out) {
  __shared__ WmmaTileSmem s;
  wmma_dot_tile<Split>(A, na, row0, B, nb, col0, d, wmma_vec_ok(A, B, d), s);
  for (int e = threadIdx.x; e < kWmRows * kWmCols; e += kWmThreads) out[e] = s.u.dot[e / kWmCols][e % kWmCols];
}

struct Case {
  std::int64_t na, nb;
  int d;
  std::int64_t row0, col0;
};

// Largest |tile - reference| / (sum of |a_p b_p|) over the tile's entries in
// range; *outside_nonzero counts entries past the operands that are not 0.
template <bool Split>
double worst_relative_error(const Case& c, int* outside_nonzero) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> A(static_cast<std::size_t>(c.na * c.d)), B(static_cast<std::size_t>(c.nb * c.d));
  for (float& v : A) v = u(gen);
  for (float& v : B) v = u(gen);
  float *dA = nullptr, *dB = nullptr, *dOut = nullptr;
  TL_CUDA_CHECK(cudaMalloc(&dA, sizeof(float) * A.size()));
  TL_CUDA_CHECK(cudaMalloc(&dB, sizeof(float) * B.size()));
  TL_CUDA_CHECK(cudaMalloc(&dOut, sizeof(float) * kWmRows * kWmCols));
  TL_CUDA_CHECK(cudaMemcpy(dA, A.data(), sizeof(float) * A.size(), cudaMemcpyHostToDevice));
  TL_CUDA_CHECK(cudaMemcpy(dB, B.data(), sizeof(float) * B.size(), cudaMemcpyHostToDevice));
  tile_probe_kernel<Split><<<1, kWmThreads>>>(dA, c.na, c.row0, dB, c.nb, c.col0, c.d, dOut);
  TL_CUDA_CHECK(cudaGetLastError());
  std::vector<float> out(static_cast<std::size_t>(kWmRows * kWmCols));
  TL_CUDA_CHECK(cudaMemcpy(out.data(), dOut, sizeof(float) * out.size(), cudaMemcpyDeviceToHost));
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dOut);
  double worst = 0.0;
  *outside_nonzero = 0;
  for (std::int64_t i = 0; i < kWmRows; ++i)
    for (std::int64_t j = 0; j < kWmCols; ++j) {
      const std::int64_t r = c.row0 + i, q = c.col0 + j;
      const float got = out[static_cast<std::size_t>(i * kWmCols + j)];
      if (r >= c.na || q >= c.nb) {
        *outside_nonzero += got != 0.0f;
        continue;
      }
      double ref = 0.0, mag = 0.0;
      for (int p = 0; p < c.d; ++p) {
        const double a = A[static_cast<std::size_t>(r * c.d + p)], b = B[static_cast<std::size_t>(q * c.d + p)];
        ref += a * b;
        mag += std::fabs(a * b);
      }
      worst = std::max(worst, std::fabs(static_cast<double>(got) - ref) / mag);
    }
  return worst;
}

// Partial tiles (rows 256..299 of 300, columns 128..149 of 150), a depth of 37
// (scalar staging, a partial depth step), then whole tiles with 128-bit
// staging (d = 64).
const Case kCases[] = {{300, 150, 37, 256, 128}, {256, 128, 64, 128, 64}, {130, 70, 16, 0, 0}};

TEST(WmmaTileCuda, SplitProductsHaveFloatAccuracy) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (const Case& c : kCases) {
    int outside = 0;
    const double err = worst_relative_error<true>(c, &outside);
    EXPECT_LT(err, 1e-5) << "na=" << c.na << " nb=" << c.nb << " d=" << c.d;
    EXPECT_EQ(outside, 0);
  }
}

TEST(WmmaTileCuda, PlainTf32MissesTheBound) {
  TL_REQUIRE_GPU_OR_SKIP();
  int outside = 0;
  EXPECT_GT(worst_relative_error<false>(kCases[1], &outside), 1e-5);
}

}  // namespace
}  // namespace tl::detail
