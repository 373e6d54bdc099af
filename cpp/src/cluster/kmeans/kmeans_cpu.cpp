// The CPU KMeans engine: the same passes as the CUDA engine, in the same
// canonical orders (kmeans.hpp), on host memory with tl::parallel_for.
#include <algorithm>
#include <vector>

#include "cluster/kmeans/kmeans_common.hpp"
#include "core/distance/distance_cpu.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {
namespace {

template <class T>
class CpuEngine final : public KMeansEngine<T> {
  using Key = RankKey<T>;

 public:
  CpuEngine(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const double* x_mean) : ctx_(ctx) {
    TL_REQUIRE(X.on_host(), ValueError, "X: the CPU backend needs host arrays");
    this->n = X.rows;
    this->d = X.cols;
    const std::int64_t n = X.rows, d = X.cols;
    if (x_mean || !X.is_c_contiguous()) {
      own_.resize(static_cast<std::size_t>(n * d));
      std::vector<T> mu(static_cast<std::size_t>(d), T(0));
      if (x_mean)
        for (std::int64_t f = 0; f < d; ++f) mu[f] = static_cast<T>(x_mean[f]);
      parallel_for(ctx, (n + 1023) / 1024, [&](std::int64_t b) {
        const std::int64_t r1 = std::min(n, (b + 1) * 1024);
        for (std::int64_t i = b * 1024; i < r1; ++i)
          for (std::int64_t f = 0; f < d; ++f) own_[i * d + f] = x_mean ? num::sub(X(i, f), mu[f]) : X(i, f);
      });
      x_ = own_.data();
    } else {
      x_ = X.data;
    }
    if (w.data) {
      this->weighted = true;
      w_.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) w_[i] = w[i];
    }
    norms_.resize(static_cast<std::size_t>(n));
    row_sqnorms_cpu(ctx, MatrixView<const T>(x_, n, d), norms_.data());
    labels_.assign(static_cast<std::size_t>(n), -1);
    mind_.resize(static_cast<std::size_t>(n));
  }

  T w(std::int64_t i) const { return this->weighted ? w_[i] : T(1); }
  const T* row_ptr(std::int64_t i) const { return x_ + i * this->d; }

  std::int64_t assign(const T* centers, std::int64_t k) override {
    const std::int64_t n = this->n, d = this->d;
    const PackedPanels<T> P = pack_panels(ctx_, MatrixView<const T>(centers, k, d), true);
    const BlockKernel<T> kernel = block_kernel<T>(dist::Family::Dot);
    const std::int64_t nblocks = (n + kRowBlock - 1) / kRowBlock;
    std::vector<std::int64_t> changed(static_cast<std::size_t>(nblocks), 0);
    parallel_for(ctx_, nblocks, [&](std::int64_t b) {
      const std::int64_t r0 = b * kRowBlock, nr = std::min(kRowBlock, n - r0);
      std::vector<T> acc(static_cast<std::size_t>(kRowBlock * kPanel));
      T best[kRowBlock];
      std::int64_t bi[kRowBlock];
      for (std::int64_t r = 0; r < nr; ++r) {
        best[r] = dist::empty_value<T>();
        bi[r] = dist::kNoIndex;
      }
      T v[kPanel];
      Key key[kPanel];
      for (std::int64_t q = 0; q < P.npanels; ++q) {
        kernel(x_ + r0 * d, d, nr, P.panel(q), P.width, d, T(0), acc.data());
        const std::int64_t nc = P.rows_in(q), c0 = q * P.width;
        const T* __restrict cn = P.norms.data() + c0;
        for (std::int64_t r = 0; r < nr; ++r) {
          // The row's distances and their keys first, with the smallest key
          // (a loop that vectorizes); then, if it beats the row's best, the
          // first center holding it: for such values (rank_key), that is
          // the center where the scan in center order with dist::nearer
          // ends: a smaller key is a smaller value, and an equal key keeps
          // the earlier center, except against the empty slot (NaN,
          // kNoIndex), which a NaN replaces.
          const Key kmin = sq_distances_and_keys(norms_[r0 + r], cn, acc.data() + r * P.width, nc, v, key);
          const Key kb = rank_key(best[r]);
          if (kmin < kb || (kmin == kb && bi[r] == dist::kNoIndex)) {
            const std::int64_t j = first_key<T>(key, nc, kmin);
            best[r] = v[j];
            bi[r] = c0 + j;
          }
        }
      }
      std::int64_t ch = 0;
      for (std::int64_t r = 0; r < nr; ++r) {
        const std::int32_t lab = static_cast<std::int32_t>(bi[r]);
        ch += labels_[r0 + r] != lab;
        labels_[r0 + r] = lab;
        mind_[r0 + r] = best[r];
      }
      changed[b] = ch;
    });
    std::int64_t total = 0;
    for (std::int64_t c : changed) total += c;
    return total;
  }

  void cluster_sums(std::int64_t k, double* sums, double* wsum) override {
    const std::int64_t n = this->n, d = this->d, w1 = d + 1, nb = sum_batches(n);
    std::vector<double> parts(static_cast<std::size_t>(nb * k * w1));
    for (std::int64_t b = 0; b < nb; ++b)
      batch_sums(b * kBatchRows, std::min(n, (b + 1) * kBatchRows), k, parts.data() + b * k * w1);
    combine_batches(parts, nb, k, d, sums, wsum);
  }

  // Sums of rows [r0, r1) per cluster (kmeans.hpp): out (k x (d + 1)), the
  // weight in column d. Each cluster's chunk sums (its rows in index order,
  // cut every kClusterChunk rows) are the rows of that cluster added in the
  // order a walk over the batch meets them; so each task walks the batch in
  // order for a range of clusters, adding each row of one of them to its
  // cluster's running chunk sum (cache-resident), which goes to the chunk's
  // slot when the chunk is full or the batch ends. Reading the rows in order
  // instead of gathering each cluster's rows (a sort by label) keeps the
  // loads sequential.
  void batch_sums(std::int64_t r0, std::int64_t r1, std::int64_t k, double* out_kw) {
    const std::int64_t d = this->d, w1 = d + 1;
    // The chunks of each cluster: cfirst[c] .. cfirst[c + 1].
    std::vector<std::int64_t> count(static_cast<std::size_t>(k), 0);
    for (std::int64_t i = r0; i < r1; ++i) ++count[labels_[i]];
    std::vector<std::int64_t> cfirst(static_cast<std::size_t>(k + 1), 0);
    for (std::int64_t c = 0; c < k; ++c) cfirst[c + 1] = cfirst[c] + (count[c] + kClusterChunk - 1) / kClusterChunk;
    std::vector<double> part(static_cast<std::size_t>(cfirst[k] * w1));
    // One task per thread (each reads the whole batch), over clusters
    // holding about equal shares of the rows.
    const std::int64_t ngroups = std::min<std::int64_t>(k, ctx_.n_threads());
    std::vector<std::int64_t> gfirst(static_cast<std::size_t>(ngroups + 1), k);
    gfirst[0] = 0;
    for (std::int64_t c = 0, g = 1, seen_rows = 0; c < k && g < ngroups; ++c) {
      seen_rows += count[c];
      while (g < ngroups && seen_rows * ngroups >= g * (r1 - r0)) gfirst[g++] = c + 1;
    }
    parallel_for(ctx_, ngroups, [&](std::int64_t g) {
      const std::int64_t c0 = gfirst[g], c1 = gfirst[g + 1];
      std::vector<double> run(static_cast<std::size_t>((c1 - c0) * w1), 0.0);
      std::vector<std::int64_t> seen(static_cast<std::size_t>(c1 - c0), 0);
      for (std::int64_t i = r0; i < r1; ++i) {
        const std::int64_t c = labels_[i];
        if (c < c0 || c >= c1) continue;
        const T wi = w(i);
        const T* __restrict x = row_ptr(i);
        double* __restrict acc = run.data() + (c - c0) * w1;
        for (std::int64_t f = 0; f < d; ++f) acc[f] = num::add(acc[f], weighted_term(wi, x[f]));
        acc[d] = num::add(acc[d], static_cast<double>(wi));
        const std::int64_t m = ++seen[c - c0];
        if (m % kClusterChunk == 0 || m == count[c]) {
          std::copy(acc, acc + w1, part.data() + (cfirst[c] + (m - 1) / kClusterChunk) * w1);
          std::fill(acc, acc + w1, 0.0);
        }
      }
    });
    parallel_for(ctx_, k, [&](std::int64_t c) {
      const std::int64_t mc = cfirst[c + 1] - cfirst[c];
      for (std::int64_t f = 0; f < w1; ++f) {
        double v = 0.0;
        if (mc > 0) {
          double* p = part.data() + cfirst[c] * w1 + f;
          tree_reduce_inplace(p, mc, w1, [](double a, double b) { return num::add(a, b); });
          v = p[0];
        }
        out_kw[c * w1 + f] = v;
      }
    });
  }

  std::int64_t assign_sums(const T* centers, std::int64_t k, double* sums, double* wsum) override {
    const std::int64_t changed = assign(centers, k);
    cluster_sums(k, sums, wsum);
    return changed;
  }

  double inertia(const T* centers, std::int64_t k) override {
    const std::int64_t n = this->n, d = this->d, nch = row_chunks(n);
    std::vector<double> part(static_cast<std::size_t>(nch));
    parallel_for(ctx_, nch, [&](std::int64_t c) {
      const std::int64_t r0 = c * kRowChunk, r1 = std::min(n, (c + 1) * kRowChunk);
      std::vector<T> sq(static_cast<std::size_t>(r1 - r0));
      sqdiff_rows(row_ptr(r0), d, r1 - r0, d, labels_.data() + r0, centers, sq.data());
      double acc = 0.0;
      for (std::int64_t i = r0; i < r1; ++i) acc = num::add(acc, weighted_term(w(i), sq[i - r0]));
      part[c] = acc;
    });
    return tree_sum(part);
  }

  void copy_labels(std::int32_t* out) override { std::copy(labels_.begin(), labels_.end(), out); }
  void copy_weights(T* out) override {
    for (std::int64_t i = 0; i < this->n; ++i) out[i] = w(i);
  }
  void copy_row(std::int64_t i, T* out) override { std::copy(row_ptr(i), row_ptr(i) + this->d, out); }
  void farthest(std::int64_t take, std::int64_t* idx, T* dist, std::int32_t* label, T* weight, T* rows) override {
    const std::vector<std::int64_t> order = farthest_order(mind_.data(), this->n, take);
    for (std::int64_t t = 0; t < take; ++t) {
      const std::int64_t i = order[t];
      idx[t] = i;
      dist[t] = mind_[i];
      label[t] = labels_[i];
      weight[t] = w(i);
      copy_row(i, rows + t * this->d);
    }
  }

  void pp_closest_ones() override { closest_.assign(static_cast<std::size_t>(this->n), T(1)); }
  void pp_closest_to(std::int64_t row) override {
    closest_.resize(static_cast<std::size_t>(this->n));
    const T* c = row_ptr(row);
    const T cn = norms_[row];
    parallel_for(ctx_, row_chunks(this->n), [&](std::int64_t b) {
      const std::int64_t r0 = b * kRowChunk, r1 = std::min(this->n, (b + 1) * kRowChunk);
      dot_rows(row_ptr(r0), this->d, r1 - r0, this->d, c, closest_.data() + r0);
      for (std::int64_t i = r0; i < r1; ++i) closest_[i] = dist::sq_from_dot(norms_[i], cn, closest_[i]);
    });
  }
  void pp_candidates(const std::int64_t* cand, int nc, double* partials) override {
    const std::int64_t n = this->n, nch = row_chunks(n);
    cand_min_.resize(static_cast<std::size_t>(nc * n));
    parallel_for(ctx_, nch * nc, [&](std::int64_t task) {
      const std::int64_t t = task / nch, b = task % nch;
      const T* c = row_ptr(cand[t]);
      const T cn = norms_[cand[t]];
      const std::int64_t r0 = b * kRowChunk, r1 = std::min(n, (b + 1) * kRowChunk);
      std::vector<T> dots(static_cast<std::size_t>(r1 - r0));
      dot_rows(row_ptr(r0), this->d, r1 - r0, this->d, c, dots.data());
      double acc = 0.0;
      for (std::int64_t i = r0; i < r1; ++i) {
        const T dv = dist::sq_from_dot(norms_[i], cn, dots[i - r0]);
        const T m = dist::value_less(dv, closest_[i]) ? dv : closest_[i];
        cand_min_[t * n + i] = m;
        acc = num::add(acc, weighted_term(w(i), m));
      }
      partials[t * nch + b] = acc;
    });
  }
  void pp_commit(int t) override {
    std::copy(cand_min_.begin() + t * this->n, cand_min_.begin() + (t + 1) * this->n, closest_.begin());
  }
  void pp_partials(double* out) override {
    parallel_for(ctx_, row_chunks(this->n), [&](std::int64_t b) {
      const std::int64_t r1 = std::min(this->n, (b + 1) * kRowChunk);
      double acc = 0.0;
      for (std::int64_t i = b * kRowChunk; i < r1; ++i) acc = num::add(acc, weighted_term(w(i), closest_[i]));
      out[b] = acc;
    });
  }
  void pp_chunk_values(std::int64_t c, double* out) override {
    const std::int64_t r1 = std::min(this->n, (c + 1) * kRowChunk);
    for (std::int64_t i = c * kRowChunk; i < r1; ++i) out[i - c * kRowChunk] = weighted_term(w(i), closest_[i]);
  }

 private:
  Context ctx_;
  std::vector<T> own_;
  const T* x_ = nullptr;
  std::vector<T> w_, norms_, mind_, closest_, cand_min_;
  std::vector<std::int32_t> labels_;
};

}  // namespace

template <class T>
std::unique_ptr<KMeansEngine<T>> make_kmeans_engine_cpu(const Context& ctx, MatrixView<const T> X,
                                                        VectorView<const T> w, const double* x_mean) {
  return std::make_unique<CpuEngine<T>>(ctx, X, w, x_mean);
}

template std::unique_ptr<KMeansEngine<float>> make_kmeans_engine_cpu<float>(const Context&, MatrixView<const float>,
                                                                           VectorView<const float>, const double*);
template std::unique_ptr<KMeansEngine<double>> make_kmeans_engine_cpu<double>(const Context&,
                                                                             MatrixView<const double>,
                                                                             VectorView<const double>, const double*);

}  // namespace tl::detail
