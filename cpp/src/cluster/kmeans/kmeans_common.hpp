// KMeans internals shared by the backends: the engine interface (where the
// data lives and the heavy passes run) and the host-side steps both backends
// share (draws, searches, trees, relocation), so the orchestration in
// kmeans.cpp is written once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/distance/distance_common.hpp"
#include "twinlearn/cluster/kmeans.hpp"
#include "twinlearn/core/error.hpp"
#include "twinlearn/core/rng.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {

// Draws of the initialisations: the project's Philox generator
// (core/rng.hpp), a pure function of (seed, stream, position).
inline double draw_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t pos) {
  return rng::uniform<double>(seed, stream, pos);
}

// The canonical sum of double partials: the pairwise tree (in place).
inline double tree_sum(std::vector<double>& v) {
  if (v.empty()) return 0.0;
  tree_reduce_inplace(v.data(), static_cast<std::int64_t>(v.size()), 1,
                      [](double a, double b) { return num::add(a, b); });
  return v[0];
}

inline std::int64_t row_chunks(std::int64_t n) { return (n + kRowChunk - 1) / kRowChunk; }
inline std::int64_t sum_batches(std::int64_t n) { return (n + kBatchRows - 1) / kBatchRows; }

// The batch level of the canonical cluster sums: parts holds nb batches of
// k x (d + 1) partials (weight in column d); each entry is reduced over the
// batches by the pairwise tree (in place) into sums (k x d) and wsum (k).
inline void combine_batches(std::vector<double>& parts, std::int64_t nb, std::int64_t k, std::int64_t d,
                            double* sums, double* wsum) {
  const std::int64_t w1 = d + 1, stride = k * w1;
  for (std::int64_t e = 0; e < stride; ++e) {
    tree_reduce_inplace(parts.data() + e, nb, stride, [](double a, double b) { return num::add(a, b); });
    const std::int64_t c = e / w1, f = e % w1;
    if (f < d)
      sums[c * d + f] = parts[e];
    else
      wsum[c] = parts[e];
  }
}

// Where the data of one fit lives and the passes over it run.
template <class T>
class KMeansEngine {
 public:
  virtual ~KMeansEngine() = default;
  std::int64_t n = 0, d = 0;
  bool weighted = false;

  // labels <- nearest center of each row (centers: host, k x d), and the
  // squared distance to it. Returns how many labels differ from the previous
  // ones (all of them on the first call).
  virtual std::int64_t assign(const T* centers, std::int64_t k) = 0;
  // Canonical per-cluster sums (see kmeans.hpp) for the current labels:
  // sums (host, k x d) of w * x and wsum (host, k) of w.
  virtual void cluster_sums(std::int64_t k, double* sums, double* wsum) = 0;
  // assign() then cluster_sums() (one pass over the data where it streams).
  virtual std::int64_t assign_sums(const T* centers, std::int64_t k, double* sums, double* wsum) = 0;
  // Canonical inertia of the current labels for the given centers (host).
  virtual double inertia(const T* centers, std::int64_t k) = 0;
  virtual void copy_labels(std::int32_t* out) = 0;
  virtual void copy_weights(T* out) = 0;  // only when weighted
  virtual void copy_row(std::int64_t i, T* out) = 0;
  // The `take` rows farthest from their centers (take <= n): the largest
  // squared distances of the last assignment in the value order
  // (core/ties.hpp), farthest first, ties by lowest row index. Writes each
  // one's row index, distance, label, weight and (centered) values (take x d).
  virtual void farthest(std::int64_t take, std::int64_t* idx, T* dist, std::int32_t* label, T* weight,
                        T* rows) = 0;

  // k-means++: `closest` holds each row's squared distance to the centers
  // chosen so far.
  virtual void pp_closest_ones() = 0;  // closest <- 1 (the first draw is by weight)
  virtual void pp_closest_to(std::int64_t row) = 0;
  // For candidate rows cand[0..nc): per row min(closest, dist to the
  // candidate), kept for pp_commit, and the chunk partials (host, nc x
  // row_chunks(n)) of w * that minimum.
  virtual void pp_candidates(const std::int64_t* cand, int nc, double* partials) = 0;
  virtual void pp_commit(int t) = 0;
  // Chunk partials (host, row_chunks(n)) of w * closest.
  virtual void pp_partials(double* out) = 0;
  // w * closest (double) of the rows of chunk c (host, up to kRowChunk).
  virtual void pp_chunk_values(std::int64_t c, double* out) = 0;
  // The contract of the assignments so far: identical, or fast once one ran
  // on a path without bit promises.
  virtual NumericMode delivered() const { return NumericMode::Identical; }

  // Lloyd steps held on the device (the CUDA engine: its fast path, and the
  // canonical sums and update with the host's bits): the centers stay on the
  // device from one step to the next, and a step returns to the host only
  // its statistics. Engines without them say false.
  struct StepStats {
    std::int64_t changed = 0;  // labels that differ from the previous step's
    std::int64_t empty = 0;    // clusters left without weight
    double shift = 0.0;        // sum over clusters of the squared center shift
  };
  virtual bool device_steps(std::int64_t k) {
    (void)k;
    return false;
  }
  virtual void set_centers(const T* centers, std::int64_t k) {
    (void)centers, (void)k;
    TL_REQUIRE(false, NotAvailable, "this KMeans engine holds no centers");
  }
  virtual void get_centers(T* centers, std::int64_t k) {
    (void)centers, (void)k;
    TL_REQUIRE(false, NotAvailable, "this KMeans engine holds no centers");
  }
  // One step from the held centers: labels, the cluster sums, and, when no
  // cluster is empty, the next centers (held in place of the old) and the
  // squared shift. When a cluster is empty the held centers stay as they
  // were and the sums come to the host (sums: k x d, wsum: k) for
  // relocate_empty; shift is then not computed.
  virtual StepStats device_step(std::int64_t k, double* sums, double* wsum) {
    (void)k, (void)sums, (void)wsum;
    TL_REQUIRE(false, NotAvailable, "this KMeans engine runs no device steps");
    return {};
  }
};

// Indices of the `take` largest of md[0..n) in the value order, largest
// first, ties by lowest index (the order of KMeansEngine::farthest).
template <class T>
std::vector<std::int64_t> farthest_order(const T* md, std::int64_t n, std::int64_t take) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) idx[i] = i;
  std::partial_sort(idx.begin(), idx.begin() + take, idx.end(), [md](std::int64_t a, std::int64_t b) {
    return dist::value_less(md[b], md[a]) || (!dist::value_less(md[a], md[b]) && a < b);
  });
  idx.resize(static_cast<std::size_t>(take));
  return idx;
}

// Per-chunk sequential sum of w_i * v_i in double (the canonical chunk step).
template <class T>
TL_HD double weighted_term(T w, T v) {
  return num::mul(static_cast<double>(w), static_cast<double>(v));
}

// One cluster's Lloyd update, the same on the host (host_update) and the
// device (canon_update_kernel): next_f = sum_f / ws rounded once to T (the
// sums themselves, rounded, when ws is not positive), and the squared shift
// from c as one fma chain in T over the features in order.
template <class T>
TL_HD T center_step(const double* sum, double ws, const T* c, std::int64_t d, T* next) {
  T shift = T(0);
  for (std::int64_t f = 0; f < d; ++f) {
    const T v = ws > 0.0 ? static_cast<T>(num::div(sum[f], ws)) : static_cast<T>(sum[f]);
    next[f] = v;
    const T df = num::sub(v, c[f]);
    shift = num::fma(df, df, shift);
  }
  return shift;
}

// The row's inertia term: sum_f (x_f - c_f)^2 as one fma chain.
template <class T>
TL_HD T sq_diff(const T* x, const T* c, std::int64_t d) {
  T acc = T(0);
  for (std::int64_t f = 0; f < d; ++f) {
    const T df = num::sub(x[f], c[f]);
    acc = num::fma(df, df, acc);
  }
  return acc;
}

// The certified canonical assignment's rule (CUDA engine, identical and
// deterministic modes; the filter is kmeans_mma.cuh's). The filter ranks a
// row's centers by v(c), with |xn + v(c) - q(c)| <= E =
// dist::filter_bound(xn + max cn) for the canonical value q(c) (sq_from_dot
// before its clamp at 0; distance_common.hpp gives the bound). With m the
// smallest v, the canonical nearest center c* (smallest clamped q, ties by
// lowest center) and every center tied with it have
// xn + v(c) <= max(q(c*), 0) + E <= max(q(a), 0) + E <= max(m + xn, -E) + 2E
// (a the filter's nearest), so v(c) <= certify_threshold(m, xn, max cn) =
// max(m, -E - xn) + 2E; a row whose other centers all have v above it is
// certified: its filter nearest is its canonical nearest. (+inf, nothing
// certified, where the bound is +inf.)
TL_HD float certify_threshold(float best, float xn, float cn_max) {
  const float e = dist::filter_bound(num::add(xn, cn_max));
  const float floor = num::sub(-e, xn);
  return num::add(best > floor ? best : floor, num::mul(2.0f, e));
}

template <class T>
std::unique_ptr<KMeansEngine<T>> make_kmeans_engine_cpu(const Context& ctx, MatrixView<const T> X,
                                                        VectorView<const T> w, const double* x_mean);
template <class T>
std::unique_ptr<KMeansEngine<T>> make_kmeans_engine_cuda(const Context& ctx, MatrixView<const T> X,
                                                         VectorView<const T> w, const double* x_mean);

}  // namespace tl::detail
