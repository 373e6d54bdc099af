// KMeans (Lloyd's algorithm) on the CPU and CUDA backends.
//
// Arithmetic (docs/NUMERICS.md), the same on both backends in every numeric
// mode, so every mode delivers `identical`:
//  - assignment: the squared euclidean distance of twinlearn/neighbors/
//    distance.hpp ((||x||^2 + ||c||^2) - 2 x.c, each dot one fma chain over
//    features in increasing order), nearest center by (distance, index): the
//    lowest index wins a tie. The distance matrix is never written.
//  - centroid update: rows taken in batches of kBatchRows rows; within a
//    batch, rows grouped by label in index order (a stable sort), each
//    cluster's rows cut into chunks of kClusterChunk rows; per chunk a
//    sequential float64 sum of w * x per feature (and of w), then the
//    pairwise tree of core/tree.hpp over the cluster's chunks, and the tree
//    again over the batches. No atomics. (Data too large for the GPU is
//    streamed through it batch by batch with the same geometry.)
//  - inertia: per row sum_f (x_f - c_f)^2 (an fma chain), times w in float64,
//    rows summed in chunks of kRowChunk rows and the pairwise tree.
//  - k-means++ and random init draw from the Philox generator (a pure
//    function of seed, run and position), so both backends pick the same rows.
#pragma once
#include <cstdint>
#include <string>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numeric_mode.hpp"

namespace tl {

inline constexpr std::int64_t kClusterChunk = 256;
inline constexpr std::int64_t kRowChunk = 4096;
inline constexpr std::int64_t kBatchRows = std::int64_t(1) << 20;  // a multiple of kRowChunk

enum class KMeansInit : int { KMeansPlusPlus = 0, Random = 1, Given = 2 };

struct KMeansParams {
  std::int64_t n_clusters = 8;
  KMeansInit init = KMeansInit::KMeansPlusPlus;
  int n_init = 1;
  int max_iter = 300;
  double tol = 0.0;  // absolute: compared with the sum of squared center shifts
  std::uint64_t seed = 0;
  int n_local_trials = 0;  // k-means++ candidates per center; 0 = 2 + int(log(k))
};

struct KMeansResult {
  double inertia = 0.0;
  int n_iter = 0;
  int best_init = 0;  // which of the n_init runs was kept
  std::int64_t n_distinct = 0;  // clusters holding at least one row of the kept labels
  // The contract the fit delivered: identical, except in fast mode on a GPU
  // where the assignment ran on the 3xTF32 tensor-core path (see kmeans_cuda.cu).
  NumericMode delivered = NumericMode::Identical;
};

// Fits KMeans to X (n x d, host or device), weighted by w (n entries or
// w.data == nullptr for unit weights). x_mean: d entries (host) subtracted
// from X (in T) before fitting and added back to the centers, or nullptr.
// init_centers: n_init x k x d (host, C order) when params.init == Given, in
// the coordinates of X. Outputs on the host: centers (k x d), labels (n).
template <class T>
KMeansResult kmeans_fit(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const double* x_mean,
                        const T* init_centers, const KMeansParams& params, T* centers, std::int32_t* labels);

// Labels of the rows of X for the given centers (host, k x d), and when
// inertia != nullptr the weighted inertia of that labelling. labels: host, n.
template <class T>
void kmeans_predict(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* centers,
                    std::int64_t k, std::int32_t* labels, double* inertia);

// One mini-batch step's data pass: labels of the rows of X for the centers
// (host, k x d), the weighted inertia of that labelling, and the canonical
// per-cluster sums of w * x (host, k x d) and of w (host, k).
template <class T>
double kmeans_assign_sums(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* centers,
                          std::int64_t k, std::int32_t* labels, double* sums, double* wsum);

// The k-means++ initialisation alone (scikit-learn's kmeans_plusplus): the
// chosen centers (host, k x d) and row indices (host, k).
template <class T>
void kmeans_plusplus(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, std::int64_t k,
                     std::uint64_t seed, int n_local_trials, T* centers, std::int64_t* indices);

}  // namespace tl
