// The fused KMeans assignment kernels, checked and timed on their own: fast
// mode's WMMA kernel (kmeans_wmma.cuh) and shapes of the mma.sync kernel
// (kmeans_mma.cuh) against nearest centers in float64, and the canonical
// kernels (kmeans_canon.cuh: assign_canon_kernel against assign_kernel, whose
// labels and distances it must equal bit for bit), on blob data; 21
// assignments timed with CUDA events. The CUDA build makes it, with the
// engine's floating-point flags (make test-gpu: build/gpu/kmeans_assign); run
// it on a GPU machine.
// CANON_ONLY=1 runs the canonical kernels only, CERTIFIED_ONLY=1 the
// certified assignment (the engine's identical mode) on five data sets.
// "mismatches": labels other than float64's nearest center; "hard": those of
// rows whose two nearest centers are apart by more than 1e-4 (D + 1) in
// float64 (D the nearest squared distance), so not near ties.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cluster/kmeans/kmeans_canon.cuh"
#include "cluster/kmeans/kmeans_mma.cuh"
using namespace tl::detail;
#define CK(x)                                                     \
  do {                                                            \
    cudaError_t e = (x);                                          \
    if (e != cudaSuccess) {                                       \
      printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); \
      exit(1);                                                    \
    }                                                             \
  } while (0)

__global__ void ref_kernel(const float* X, std::int64_t n, const float* C, int k, int d, int* lab, double* dist,
                           double* second) {
  std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  double b = INFINITY, b2 = INFINITY;
  int bi = -1;
  for (int c = 0; c < k; ++c) {
    double s = 0;
    for (int f = 0; f < d; ++f) {
      double v = (double)X[i * d + f] - (double)C[c * d + f];
      s += v * v;
    }
    if (s < b) {
      b2 = b;
      b = s;
      bi = c;
    } else if (s < b2)
      b2 = s;
  }
  lab[i] = bi;
  dist[i] = b;
  second[i] = b2;
}

struct Data {
  std::int64_t n;
  int d, k;
  float *X, *xn, *C, *cn;
  int* rlab;
  double *rdist, *rsec;
  std::vector<float> hX, hC;
};

// Blobs: k true centers (6 N(0, 1) per feature), rows a true center plus
// noise N(0, noise^2) plus offset; the centers given are rows near the
// true centers (0.5 N(0, 1) off).
Data make(std::int64_t n, int d, int k, unsigned seed, float offset = 3.0f, float noise = 2.0f) {
  Data D;
  D.n = n;
  D.d = d;
  D.k = k;
  std::mt19937 rng(seed);
  std::normal_distribution<float> N(0.f, 1.f);
  std::vector<float> tc((size_t)k * d);
  for (auto& v : tc) v = 6.f * N(rng);
  D.hX.resize((size_t)n * d);
  std::vector<float> xn(n);
  for (std::int64_t i = 0; i < n; ++i) {
    int c = rng() % k;
    double s = 0;
    for (int f = 0; f < d; ++f) {
      float v = tc[c * d + f] + noise * N(rng) + offset;
      D.hX[i * d + f] = v;
      s += (double)v * v;
    }
    xn[i] = (float)s;
  }
  D.hC.resize((size_t)k * d);
  std::vector<float> cn(k);
  for (int c = 0; c < k; ++c) {
    double s = 0;
    for (int f = 0; f < d; ++f) {
      float v = D.hX[(size_t)(c * 997 % n) * d + f] + 0.5f * N(rng);
      D.hC[c * d + f] = v;
      s += (double)v * v;
    }
    cn[c] = (float)s;
  }
  CK(cudaMalloc(&D.X, 4 * n * d));
  CK(cudaMalloc(&D.xn, 4 * n));
  CK(cudaMalloc(&D.C, 4 * k * d));
  CK(cudaMalloc(&D.cn, 4 * k));
  CK(cudaMemcpy(D.X, D.hX.data(), 4 * n * d, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(D.xn, xn.data(), 4 * n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(D.C, D.hC.data(), 4 * k * d, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(D.cn, cn.data(), 4 * k, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&D.rlab, 4 * n));
  CK(cudaMalloc(&D.rdist, 8 * n));
  CK(cudaMalloc(&D.rsec, 8 * n));
  ref_kernel<<<(n + 127) / 128, 128>>>(D.X, n, D.C, k, d, D.rlab, D.rdist, D.rsec);
  CK(cudaDeviceSynchronize());
  return D;
}

void check(const Data& D, const int* dlab, const float* dmind, const char* name, double ms) {
  std::vector<int> lab(D.n), rl(D.n);
  std::vector<float> md(D.n);
  std::vector<double> rd(D.n), rs(D.n);
  CK(cudaMemcpy(lab.data(), dlab, 4 * D.n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(md.data(), dmind, 4 * D.n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rl.data(), D.rlab, 4 * D.n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rd.data(), D.rdist, 8 * D.n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rs.data(), D.rsec, 8 * D.n, cudaMemcpyDeviceToHost));
  long mism = 0, hard = 0, bad = 0;
  double maxrel = 0;
  for (std::int64_t i = 0; i < D.n; ++i) {
    if (lab[i] < 0 || lab[i] >= D.k) {
      ++bad;
      continue;
    }
    if (lab[i] != rl[i]) {
      ++mism;
      if (rs[i] - rd[i] > 1e-4 * (rd[i] + 1.0)) ++hard;
    }
    maxrel = std::max(maxrel, std::fabs(md[i] - rd[i]) / (rd[i] + 1.0));
  }
  printf("%-34s n=%lld d=%d k=%d  %8.4f ms/assign  mismatches %ld (hard %ld, invalid %ld)  mind max rel err %.2e\n",
         name, (long long)D.n, D.d, D.k, ms, mism, hard, bad, maxrel);
}

// One untimed launch (labels reset first, so every label counts as changed),
// then 21 timed ones: milliseconds per launch.
template <class Launch>
float time_launches(const Data& D, int* lab, Launch&& launch) {
  CK(cudaMemset(lab, 0xff, 4 * D.n));
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  for (int it = 0; it < 21; ++it) launch();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms / 21;
}

int attr(cudaDeviceAttr a) {
  int v = 0;
  CK(cudaDeviceGetAttribute(&v, a, 0));
  return v;
}

// A persistent grid for kern with smem bytes of dynamic shared memory over
// `tiles` tiles: at most as many blocks as stay resident (per: blocks an SM).
template <class Kernel>
unsigned persistent_grid(Kernel kern, int threads, size_t smem, std::int64_t tiles, int& per) {
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kern, threads, smem));
  return (unsigned)std::min<std::int64_t>(tiles, (std::int64_t)std::max(per, 1) * attr(cudaDevAttrMultiProcessorCount));
}

// The engine's launch (CudaEngine::launch_mma): the staged chunk from
// MmaAssign::chunk_for, at most chunk_cap centers; a persistent grid.
template <int MT, int KS, int NB, int WARPS>
void run_mma(const Data& D, int* lab, float* mind, unsigned long long* ch, int chunk_cap, const char* name) {
  using S = MmaAssign<MT, KS, NB, WARPS>;
  auto kern = assign_mma_kernel<MT, KS, NB, WARPS>;
  int per = 0;
  const int chunk = S::chunk_for(D.k, attr(cudaDevAttrMaxSharedMemoryPerBlockOptin), chunk_cap);
  const size_t smem = S::smem_bytes(chunk);
  const unsigned grid = persistent_grid(kern, S::kThreads, smem, (D.n + S::kRows - 1) / S::kRows, per);
  const float ms = time_launches(D, lab, [&] {
    kern<<<grid, S::kThreads, smem>>>(D.X, D.xn, D.n, D.C, D.cn, D.k, D.d, chunk, lab, mind, ch, Certify{});
  });
  char full[128];
  snprintf(full, sizeof full, "%s chunk=%d occ=%d", name, chunk, per);
  check(D, lab, mind, full, ms);
}

void run_wmma(const Data& D, int* lab, float* mind, unsigned long long* ch) {
  const unsigned grid = (unsigned)((D.n + kWmRows - 1) / kWmRows);
  const float ms = time_launches(D, lab, [&] {
    assign_wmma_kernel<<<grid, kWmThreads>>>(D.X, D.xn, D.n, D.C, D.cn, D.k, D.d, lab, mind, ch);
  });
  check(D, lab, mind, "wmma (existing)", ms);
}

// The labels and distance bits an assignment left on the device.
struct Snapshot {
  std::vector<int> lab;
  std::vector<unsigned> md;
};
Snapshot snapshot(const Data& D, const int* lab, const float* mind) {
  Snapshot s{std::vector<int>(D.n), std::vector<unsigned>(D.n)};
  CK(cudaMemcpy(s.lab.data(), lab, 4 * D.n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(s.md.data(), mind, 4 * D.n, cudaMemcpyDeviceToHost));
  return s;
}
// Rows whose label or distance bits differ.
long bit_diffs(const Snapshot& a, const Snapshot& b) {
  long diff = 0;
  for (std::size_t i = 0; i < a.lab.size(); ++i) diff += a.lab[i] != b.lab[i] || a.md[i] != b.md[i];
  return diff;
}
// assign_kernel (the reference bits of the canonical paths): its time per
// assignment into ms, its labels and distances.
Snapshot run_tile(const Data& D, int* lab, float* mind, unsigned long long* ch, float& ms) {
  ms = time_launches(D, lab, [&] {
    assign_kernel<float><<<(unsigned)((D.n + 127) / 128), tile::kThreads>>>(D.X, D.xn, D.n, D.C, D.cn, D.k, D.d,
                                                                           lab, mind, ch);
  });
  return snapshot(D, lab, mind);
}

// The canonical kernels: assign_kernel, then assign_canon_kernel staged as
// the engine does (CanonAssign::staged_for; chunk_cap > 0: at most that many
// centers at a time) or, where the engine leaves the shape to assign_kernel,
// with as many centers as one block an SM holds; "bit mismatches": rows
// whose label or distance bits differ.
void run_canon(const Data& D, int* lab, float* mind, unsigned long long* ch, int chunk_cap) {
  float ms_tile = 0;
  const Snapshot ref = run_tile(D, lab, mind, ch, ms_tile);
  check(D, lab, mind, "canonical assign_kernel", ms_tile);
  using S = CanonAssign;
  const size_t budget = S::two_block_budget(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor),
                                            attr(cudaDevAttrReservedSharedMemoryPerBlock));
  int chunk = S::staged_for(D.k, D.d, budget, chunk_cap);
  if (chunk == 0) chunk = S::chunk_for(D.k, D.d, (size_t)attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  const size_t smem = S::smem_bytes(D.d, chunk);
  int per = 0;
  const unsigned grid = persistent_grid(assign_canon_kernel, S::kThreads, smem, (D.n + S::kRows - 1) / S::kRows, per);
  const float ms = time_launches(D, lab, [&] {
    assign_canon_kernel<<<grid, S::kThreads, smem>>>(D.X, D.xn, D.n, D.C, D.cn, D.k, D.d, chunk, lab, mind, ch);
  });
  char full[128];
  snprintf(full, sizeof full, "canonical assign_canon chunk=%d occ=%d", chunk, per);
  check(D, lab, mind, full, ms);
  printf("  bit mismatches against assign_kernel: %ld of %lld rows\n", bit_diffs(ref, snapshot(D, lab, mind)),
         (long long)D.n);
}

// The certified canonical assignment as the engine runs it
// (CudaEngine::certified_assign): the mma kernel certifying, then
// certified_rows_kernel, then assign_canon_kernel over the undecided rows;
// its time, the undecided rows, and rows whose label or distance bits differ
// from assign_kernel's (must be 0).
template <int MT, int KS, int NB, int WARPS>
void run_certified(const Data& D, int* lab, float* mind, unsigned long long* ch, const char* name) {
  float ms_tile = 0;
  const Snapshot ref = run_tile(D, lab, mind, ch, ms_tile);
  using M = MmaAssign<MT, KS, NB, WARPS>;
  auto filt = assign_mma_kernel<MT, KS, NB, WARPS, true>;
  int per = 0;
  const int mchunk = M::chunk_for(D.k, attr(cudaDevAttrMaxSharedMemoryPerBlockOptin), 1 << 20);
  const size_t msmem = M::smem_bytes(mchunk);
  const unsigned mgrid = persistent_grid(filt, M::kThreads, msmem, (D.n + M::kRows - 1) / M::kRows, per);
  using S = CanonAssign;
  const size_t budget = S::two_block_budget(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor),
                                            attr(cudaDevAttrReservedSharedMemoryPerBlock));
  const int chunk = S::staged_for(D.k, D.d, budget, 0);
  if (chunk == 0) {
    printf("%-34s n=%lld d=%d k=%d  (the centers do not fit: no certified path)\n", name, (long long)D.n, D.d, D.k);
    return;
  }
  const size_t smem = S::smem_bytes(D.d, chunk);
  int cper = 0;
  const unsigned cgrid = persistent_grid(assign_canon_kernel, S::kThreads, smem, 1 << 30, cper);
  Certify cert;
  CK(cudaMalloc(&cert.cand, 4 * D.n));
  CK(cudaMalloc(&cert.list, 4 * D.n));
  CK(cudaMalloc(&cert.count, 4));
  const size_t rsmem = sizeof(float) * kCertRows * (D.d + 1);
  const float ms = time_launches(D, lab, [&] {
    CK(cudaMemsetAsync(cert.count, 0, 4));
    filt<<<mgrid, M::kThreads, msmem>>>(D.X, D.xn, D.n, D.C, D.cn, D.k, D.d, mchunk, lab, mind, ch, cert);
    certified_rows_kernel<<<(unsigned)((D.n + kCertRows - 1) / kCertRows), kCertRows, rsmem>>>(
        D.X, D.xn, D.n, D.C, D.cn, D.d, cert.cand, lab, mind, ch);
    assign_canon_kernel<<<cgrid, S::kThreads, smem>>>(D.X, D.xn, D.n, D.C, D.cn, D.k, D.d, chunk, lab, mind, ch,
                                                      cert.list, cert.count);
  });
  unsigned undecided = 0;
  CK(cudaMemcpy(&undecided, cert.count, 4, cudaMemcpyDeviceToHost));
  printf("%-34s n=%lld d=%d k=%d  %8.4f ms/assign (assign_kernel %.4f)  undecided %u  bit mismatches %ld\n", name,
         (long long)D.n, D.d, D.k, ms, ms_tile, undecided, bit_diffs(ref, snapshot(D, lab, mind)));
  CK(cudaFree(cert.cand));
  CK(cudaFree(cert.list));
  CK(cudaFree(cert.count));
}

int main() {
  int* lab;
  float* mind;
  unsigned long long* ch;
  std::int64_t nmax = 1000000;
  CK(cudaMalloc(&lab, 4 * nmax));
  CK(cudaMalloc(&mind, 4 * nmax));
  CK(cudaMalloc(&ch, 8));
  const bool canon_only = std::getenv("CANON_ONLY") != nullptr;
  if (std::getenv("CERTIFIED_ONLY") != nullptr) {
    Data D = make(1000000, 64, 256, 1);
    run_certified<1, 8, 4, 16>(D, lab, mind, ch, "certified (blobs)");
    Data E = make(77777, 61, 250, 2);
    run_certified<1, 8, 4, 16>(E, lab, mind, ch, "certified (odd shape)");
    Data F = make(200000, 13, 7, 4);
    run_certified<1, 2, 4, 16>(F, lab, mind, ch, "certified (d 13, k 7)");
    Data G = make(300000, 100, 128, 5, 1000.0f);
    run_certified<1, 16, 2, 8>(G, lab, mind, ch, "certified (far from 0)");
    Data H = make(300000, 64, 256, 6, 3.0f, 1e-3f);
    run_certified<1, 8, 4, 16>(H, lab, mind, ch, "certified (tight blobs)");
    return 0;
  }
  {
    Data D = make(1000000, 64, 256, 1);
    run_canon(D, lab, mind, ch, 0);
    run_canon(D, lab, mind, ch, 128);
    if (canon_only) {
      Data E = make(77777, 61, 250, 2);
      run_canon(E, lab, mind, ch, 0);
      run_canon(E, lab, mind, ch, 128);
      Data F = make(300000, 128, 1000, 3);
      run_canon(F, lab, mind, ch, 0);
      Data G = make(200000, 13, 7, 4);
      run_canon(G, lab, mind, ch, 0);
      return 0;
    }
    run_wmma(D, lab, mind, ch);
    run_mma<2, 8, 2, 8>(D, lab, mind, ch, 1 << 20, "mma MT2 KS8 NB2 W8");
    run_mma<2, 8, 1, 8>(D, lab, mind, ch, 1 << 20, "mma MT2 KS8 NB1 W8");
    run_mma<1, 8, 4, 16>(D, lab, mind, ch, 1 << 20, "mma MT1 KS8 NB4 W16");
    run_mma<1, 8, 2, 16>(D, lab, mind, ch, 1 << 20, "mma MT1 KS8 NB2 W16");
    run_mma<2, 8, 2, 4>(D, lab, mind, ch, 1 << 20, "mma MT2 KS8 NB2 W4");
    run_mma<2, 8, 2, 8>(D, lab, mind, ch, 64, "mma MT2 KS8 NB2 W8 (chunks)");
  }
  {
    Data D = make(77777, 61, 250, 2);
    run_mma<2, 8, 2, 8>(D, lab, mind, ch, 1 << 20, "odd mma MT2 KS8 NB2 W8");
    run_mma<2, 8, 2, 8>(D, lab, mind, ch, 96, "odd mma MT2 (chunks)");
    run_mma<1, 16, 2, 16>(D, lab, mind, ch, 1 << 20, "odd mma MT1 KS16");
  }
  {
    Data D = make(300000, 128, 1000, 3);
    run_mma<1, 16, 2, 16>(D, lab, mind, ch, 1 << 20, "mma MT1 KS16 NB2 W16");
    run_mma<1, 16, 4, 8>(D, lab, mind, ch, 1 << 20, "mma MT1 KS16 NB4 W8");
  }
  return 0;
}
