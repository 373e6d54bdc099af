// Batched ARIMA fits on a GPU and on the CPU threads, checked bit for bit
// and timed (build/<dir>/arima_batch, or nvcc directly; not a test).
//
//   arima_batch [n_series=100000] [n_obs=1000] [cpu_series=2000] [p d q]
//
// Series: ARIMA(1,1,1) with ar in [0.2, 0.8), ma in [-0.5, 0.5), unit
// shocks from a fixed generator (100 values of burn-in). The GPU fits every
// series (one thread per series, arima_common.hpp's fit_one); the CPU fits
// the first cpu_series on all its OpenMP threads. Prints series/second of
// each, whether the CPU's params and log-likelihoods are the GPU's bits, and
// whether series 0..9 fitted as a batch of 10 are the big batch's bits.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "tsa/arima/arima_common.hpp"

using tl::arima_detail::fit_one;
using tl::arima_detail::kInfo;

#define CK(x)                                                                                \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// One thread per series: series i is row i of Y (n_obs values).
__global__ void fit_kernel(const double* Y, long rows, long cols, tl::ArimaSpec sp, long k, double* params,
                           double* info, int* status) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  status[i] = fit_one(sp, Y + i * cols, cols, 1, params + i * k, info + i * kInfo);
}

static double gpu_fit(const std::vector<double>& Y, long rows, long cols, const tl::ArimaSpec& sp, long k,
                      std::vector<double>& params, std::vector<double>& info, std::vector<int>& status) {
  double *dY, *dP, *dI;
  int* dS;
  CK(cudaMalloc(&dY, sizeof(double) * rows * cols));
  CK(cudaMalloc(&dP, sizeof(double) * rows * k));
  CK(cudaMalloc(&dI, sizeof(double) * rows * kInfo));
  CK(cudaMalloc(&dS, sizeof(int) * rows));
  CK(cudaMemcpy(dY, Y.data(), sizeof(double) * rows * cols, cudaMemcpyHostToDevice));
  const int block = 64;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  fit_kernel<<<(rows + block - 1) / block, block>>>(dY, rows, cols, sp, k, dP, dI, dS);
  CK(cudaGetLastError());
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  params.resize(rows * k);
  info.resize(rows * kInfo);
  status.resize(rows);
  CK(cudaMemcpy(params.data(), dP, sizeof(double) * rows * k, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(info.data(), dI, sizeof(double) * rows * kInfo, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(status.data(), dS, sizeof(int) * rows, cudaMemcpyDeviceToHost));
  cudaFree(dY);
  cudaFree(dP);
  cudaFree(dI);
  cudaFree(dS);
  return ms / 1000.0;
}

int main(int argc, char** argv) {
  const long rows = argc > 1 ? std::atol(argv[1]) : 100000;
  const long cols = argc > 2 ? std::atol(argv[2]) : 1000;
  const long cpu_rows = std::min(rows, argc > 3 ? std::atol(argv[3]) : 2000L);
  tl::ArimaSpec sp;
  sp.p = argc > 4 ? std::atol(argv[4]) : 1;
  sp.d = argc > 5 ? std::atol(argv[5]) : 1;
  sp.q = argc > 6 ? std::atol(argv[6]) : 1;
  const long k = sp.p + sp.q + 1;
  // a larger stack per thread for the per-series arrays
  CK(cudaDeviceSetLimit(cudaLimitStackSize, 48 * 1024));

  std::vector<double> Y(rows * cols);
  std::mt19937_64 gen(12345);
  std::normal_distribution<double> nrm;
  std::uniform_real_distribution<double> uni;
  for (long i = 0; i < rows; ++i) {
    const double ar = 0.2 + 0.6 * uni(gen), ma = -0.5 + uni(gen);
    double w = 0, e0 = 0, y = 0;
    for (long t = -100; t < cols; ++t) {
      const double e = nrm(gen);
      w = ar * w + e + ma * e0;
      e0 = e;
      y += w;
      if (t >= 0) Y[i * cols + t] = y;
    }
  }

  std::vector<double> gp, gi, cp(cpu_rows * k), ci(cpu_rows * kInfo);
  std::vector<int> gs, cs(cpu_rows);
  gpu_fit(Y, std::min(rows, 1000L), cols, sp, k, gp, gi, gs);  // warm-up
  const double tg = gpu_fit(Y, rows, cols, sp, k, gp, gi, gs);

  auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(dynamic, 4)
  for (long i = 0; i < cpu_rows; ++i)
    cs[i] = fit_one(sp, Y.data() + i * cols, cols, 1, cp.data() + i * k, ci.data() + i * kInfo);
  const double tc = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  long diff = 0, ok = 0;
  for (long i = 0; i < cpu_rows; ++i) {
    diff += std::memcmp(cp.data() + i * k, gp.data() + i * k, sizeof(double) * k) != 0 ||
            std::memcmp(ci.data() + i * kInfo, gi.data() + i * kInfo, sizeof(double) * kInfo) != 0 || cs[i] != gs[i];
  }
  for (long i = 0; i < rows; ++i) ok += gs[i] == 0;
  std::vector<double> sp10, si10;
  std::vector<int> ss10;
  std::vector<double> Y10(Y.begin(), Y.begin() + std::min(rows, 10L) * cols);
  gpu_fit(Y10, std::min(rows, 10L), cols, sp, k, sp10, si10, ss10);
  const bool same10 = std::memcmp(sp10.data(), gp.data(), sizeof(double) * sp10.size()) == 0 &&
                      std::memcmp(si10.data(), gi.data(), sizeof(double) * si10.size()) == 0;
  double iters = 0, evals = 0;
  for (long i = 0; i < rows; ++i) {
    iters += gi[i * kInfo + 4];
    evals += gi[i * kInfo + 5];
  }
  std::printf("ARIMA(%ld,%ld,%ld) %ld series x %ld values\n", (long)sp.p, (long)sp.d, (long)sp.q, rows, cols);
  std::printf("gpu: %.3f s, %.0f series/s; converged %ld of %ld; mean iterations %.1f, evaluations %.1f\n", tg,
              rows / tg, ok, rows, iters / rows, evals / rows);
  std::printf("cpu (%d threads): %ld series in %.3f s, %.0f series/s\n", omp_get_max_threads(), cpu_rows, tc,
              cpu_rows / tc);
  std::printf("cpu vs gpu: %ld of %ld series differ in any bit\n", diff, cpu_rows);
  std::printf("batch of 10 vs batch of %ld on the gpu: %s\n", rows, same10 ? "same bits" : "DIFFERENT");
  std::printf("series 0: params");
  for (long j = 0; j < k; ++j) std::printf(" %.10g", gp[j]);
  std::printf(" llf %.12g\n", gi[0]);
  return diff != 0 || !same10;
}
