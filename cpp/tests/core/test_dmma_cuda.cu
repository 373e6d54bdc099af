// The double-precision tile product of core/cuda/dmma.cuh (what the
// identical Gram kernel is built on): every entry of C + A B equals the
// host's chain of std::fma in k order, bit for bit, for the tensor-core
// instruction and for the shuffle chain of older GPUs, on random, cancelling,
// wide-range and subnormal-product tiles. Separating arm: the chain in the
// reverse order, and C plus the chained dot product, differ on the same
// tiles. CUDA test binary only; skips (or fails under
// TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "core/cuda/check.cuh"
#include "core/cuda/dmma.cuh"

namespace tl::detail {
namespace {

constexpr int kTileA = 16 * 8, kTileB = 8 * 8, kTileC = 16 * 8;

// One warp per tile: fragments from row-major A (16 x 8), B (8 x 8), C (16 x 8).
template <bool Chain>
__global__ void dmma_probe_kernel(const double* A, const double* B, const double* C, int tiles, double* D) {
  const int tile = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (tile >= tiles) return;  // whole warps leave together
  const int lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const double* a_t = A + tile * kTileA;
  const double* b_t = B + tile * kTileB;
  const double* c_t = C + tile * kTileC;
  const double a[4] = {a_t[g * 8 + q], a_t[(g + 8) * 8 + q], a_t[g * 8 + q + 4], a_t[(g + 8) * 8 + q + 4]};
  const double b[2] = {b_t[q * 8 + g], b_t[(q + 4) * 8 + g]};
  double c[4] = {c_t[g * 8 + 2 * q], c_t[g * 8 + 2 * q + 1], c_t[(g + 8) * 8 + 2 * q], c_t[(g + 8) * 8 + 2 * q + 1]};
  if constexpr (Chain)
    dmma_16x8x8_chain(c, a, b);
  else
    dmma_16x8x8(c, a, b);
  double* d_t = D + tile * kTileC;
  d_t[g * 8 + 2 * q] = c[0];
  d_t[g * 8 + 2 * q + 1] = c[1];
  d_t[(g + 8) * 8 + 2 * q] = c[2];
  d_t[(g + 8) * 8 + 2 * q + 1] = c[3];
}

// mode 0: exponents in [-4, 4); 1: [-60, 60); 2: products near the subnormal
// range; 3: small integers. Half of C's entries cancel A[r][0] B[0][c].
double draw(std::mt19937_64& gen, int mode) {
  if (mode == 3) return static_cast<double>(static_cast<int>(gen() % 17) - 8);
  const std::uint64_t r = gen(), r2 = gen();
  const int e = mode == 0 ? static_cast<int>(r2 % 8) - 4
                          : mode == 1 ? static_cast<int>(r2 % 120) - 60 : static_cast<int>(r2 % 40) - 530;
  const std::uint64_t bits =
      (r & 0x000fffffffffffffULL) | (static_cast<std::uint64_t>(1023 + e) << 52) | (((r2 >> 40) & 1ULL) << 63);
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

struct Tiles {
  int n;
  std::vector<double> A, B, C;
};

Tiles make_tiles(int n, std::uint64_t seed) {
  Tiles t{n, std::vector<double>(static_cast<std::size_t>(n) * kTileA),
          std::vector<double>(static_cast<std::size_t>(n) * kTileB),
          std::vector<double>(static_cast<std::size_t>(n) * kTileC)};
  std::mt19937_64 gen(seed);
  for (int i = 0; i < n; ++i) {
    const int mode = i % 4;
    double* a = t.A.data() + static_cast<std::size_t>(i) * kTileA;
    double* b = t.B.data() + static_cast<std::size_t>(i) * kTileB;
    double* c = t.C.data() + static_cast<std::size_t>(i) * kTileC;
    for (int e = 0; e < kTileA; ++e) a[e] = draw(gen, mode);
    for (int e = 0; e < kTileB; ++e) b[e] = draw(gen, mode);
    for (int r = 0; r < 16; ++r)
      for (int col = 0; col < 8; ++col) c[r * 8 + col] = gen() % 2 ? -(a[r * 8] * b[col]) : draw(gen, mode);
  }
  return t;
}

template <bool Chain>
std::vector<double> run_device(const Tiles& t) {
  double *dA = nullptr, *dB = nullptr, *dC = nullptr, *dD = nullptr;
  TL_CUDA_CHECK(cudaMalloc(&dA, sizeof(double) * t.A.size()));
  TL_CUDA_CHECK(cudaMalloc(&dB, sizeof(double) * t.B.size()));
  TL_CUDA_CHECK(cudaMalloc(&dC, sizeof(double) * t.C.size()));
  TL_CUDA_CHECK(cudaMalloc(&dD, sizeof(double) * t.C.size()));
  TL_CUDA_CHECK(cudaMemcpy(dA, t.A.data(), sizeof(double) * t.A.size(), cudaMemcpyHostToDevice));
  TL_CUDA_CHECK(cudaMemcpy(dB, t.B.data(), sizeof(double) * t.B.size(), cudaMemcpyHostToDevice));
  TL_CUDA_CHECK(cudaMemcpy(dC, t.C.data(), sizeof(double) * t.C.size(), cudaMemcpyHostToDevice));
  dmma_probe_kernel<Chain><<<(t.n + 7) / 8, 256>>>(dA, dB, dC, t.n, dD);
  TL_CUDA_CHECK(cudaGetLastError());
  std::vector<double> out(t.C.size());
  TL_CUDA_CHECK(cudaMemcpy(out.data(), dD, sizeof(double) * out.size(), cudaMemcpyDeviceToHost));
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cudaFree(dD);
  return out;
}

enum class Order { Forward, Reverse, DotThenAdd };

// Entries of `got` that differ in bits from the host's spelling `order`.
int count_differences(const Tiles& t, const std::vector<double>& got, Order order) {
  int diff = 0;
  for (int i = 0; i < t.n; ++i) {
    const double* a = t.A.data() + static_cast<std::size_t>(i) * kTileA;
    const double* b = t.B.data() + static_cast<std::size_t>(i) * kTileB;
    const double* c = t.C.data() + static_cast<std::size_t>(i) * kTileC;
    for (int r = 0; r < 16; ++r)
      for (int col = 0; col < 8; ++col) {
        double ref = c[r * 8 + col];
        if (order == Order::Forward) {
          for (int k = 0; k < 8; ++k) ref = std::fma(a[r * 8 + k], b[k * 8 + col], ref);
        } else if (order == Order::Reverse) {
          for (int k = 7; k >= 0; --k) ref = std::fma(a[r * 8 + k], b[k * 8 + col], ref);
        } else {
          double dot = 0.0;
          for (int k = 0; k < 8; ++k) dot = std::fma(a[r * 8 + k], b[k * 8 + col], dot);
          ref = ref + dot;
        }
        const double g = got[static_cast<std::size_t>(i) * kTileC + r * 8 + col];
        diff += std::memcmp(&g, &ref, sizeof g) != 0;
      }
  }
  return diff;
}

TEST(DmmaCuda, TileProductIsTheFmaChainInRowOrder) {
  TL_REQUIRE_GPU_OR_SKIP();
  const Tiles t = make_tiles(4096, 2024);
  const auto mma = run_device<false>(t);
  const auto chain = run_device<true>(t);
  EXPECT_EQ(count_differences(t, mma, Order::Forward), 0);
  EXPECT_EQ(count_differences(t, chain, Order::Forward), 0);
  // Separating arm: other spellings of the same sum differ on these tiles.
  EXPECT_GT(count_differences(t, mma, Order::Reverse), 1000);
  EXPECT_GT(count_differences(t, mma, Order::DotThenAdd), 1000);
}

}  // namespace
}  // namespace tl::detail
