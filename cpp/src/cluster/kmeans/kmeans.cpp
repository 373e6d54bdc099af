// KMeans: validation, initialisation, Lloyd iterations and the choice among
// n_init runs, written once over the backend engines (kmeans_common.hpp).
// Follows scikit-learn's _kmeans_single_lloyd, _kmeans_plusplus and
// _relocate_empty_clusters step by step; where scikit-learn leaves an order
// open (argpartition), the order here is stated.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "cluster/kmeans/kmeans_common.hpp"

namespace tl {
namespace {

using detail::KMeansEngine;

template <class T>
std::unique_ptr<KMeansEngine<T>> make_engine(const Context& ctx, MatrixView<const T> X, VectorView<const T> w,
                                             const double* x_mean) {
  return ctx.dispatch([&] { return detail::make_kmeans_engine_cpu<T>(ctx, X, w, x_mean); },
                      [&] { return detail::make_kmeans_engine_cuda<T>(ctx, X, w, x_mean); });
}

template <class T>
void check_inputs(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, std::int64_t k) {
  check_placement(ctx, X, "X");
  TL_REQUIRE(X.rows >= 1 && X.cols >= 1, ValueError, "KMeans needs at least one sample and one feature; got (",
             X.rows, ", ", X.cols, ")");
  TL_REQUIRE(k >= 1, ValueError, "n_clusters must be >= 1; got ", k);
  TL_REQUIRE(X.rows >= k, ValueError, "n_samples=", X.rows, " should be >= n_clusters=", k, ".");
  if (w.data) {
    check_placement(ctx, w, "sample_weight");
    TL_REQUIRE(w.size == X.rows, ValueError, "sample_weight has ", w.size, " entries but X has ", X.rows, " rows");
  }
}

// np.searchsorted(cumsum(w * closest), r, side='left') on the canonical
// cumulative sum: prefix over chunk partials, then within the chunk
// prefix + (sequential sum of the chunk's first values); clipped to n - 1.
template <class T>
std::int64_t search_cumsum(KMeansEngine<T>& e, const std::vector<double>& partials, double r,
                           std::vector<double>& scratch) {
  double prefix = 0.0;
  const std::int64_t nch = static_cast<std::int64_t>(partials.size());
  for (std::int64_t c = 0; c < nch; ++c) {
    const double next = num::add(prefix, partials[c]);
    if (next >= r) {
      const std::int64_t r0 = c * kRowChunk, len = std::min(kRowChunk, e.n - r0);
      scratch.resize(static_cast<std::size_t>(len));
      e.pp_chunk_values(c, scratch.data());
      double local = 0.0;
      for (std::int64_t i = 0; i < len; ++i) {
        local = num::add(local, scratch[i]);
        if (num::add(prefix, local) >= r) return r0 + i;
      }
      return r0 + len - 1;
    }
    prefix = next;
  }
  return e.n - 1;
}

// scikit-learn's greedy k-means++: first center drawn by weight, then for
// each next center n_local_trials candidates drawn with probability
// proportional to w * closest^2, keeping the one that lowers the potential
// most (ties: the first candidate). Draw c * (n_local_trials + 1) + t of
// stream `stream` is the t-th uniform of center c.
template <class T>
void plusplus(KMeansEngine<T>& e, std::int64_t k, std::uint64_t seed, std::uint64_t stream, int trials,
              T* centers, std::int64_t* indices) {
  if (trials <= 0) trials = 2 + static_cast<int>(std::log(static_cast<double>(k)));
  const std::uint64_t per_center = static_cast<std::uint64_t>(trials) + 1;
  const std::int64_t nch = detail::row_chunks(e.n);
  std::vector<double> part(static_cast<std::size_t>(nch)), scratch;
  e.pp_closest_ones();
  e.pp_partials(part.data());
  std::vector<double> tmp = part;
  const double total_w = detail::tree_sum(tmp);
  std::int64_t first = search_cumsum(e, part, num::mul(detail::draw_uniform(seed, stream, 0), total_w), scratch);
  indices[0] = first;
  e.copy_row(first, centers);
  e.pp_closest_to(first);
  e.pp_partials(part.data());
  tmp = part;
  double pot = detail::tree_sum(tmp);
  std::vector<std::int64_t> cand(static_cast<std::size_t>(trials));
  std::vector<double> cpart(static_cast<std::size_t>(trials * nch));
  for (std::int64_t c = 1; c < k; ++c) {
    for (int t = 0; t < trials; ++t) {
      const double r = num::mul(detail::draw_uniform(seed, stream, c * per_center + t), pot);
      cand[t] = search_cumsum(e, part, r, scratch);
    }
    e.pp_candidates(cand.data(), trials, cpart.data());
    int best = 0;
    double best_pot = 0.0;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> p(cpart.begin() + t * nch, cpart.begin() + (t + 1) * nch);
      const double pt = detail::tree_sum(p);
      if (t == 0 || pt < best_pot) {
        best = t;
        best_pot = pt;
      }
    }
    e.pp_commit(best);
    std::copy(cpart.begin() + best * nch, cpart.begin() + (best + 1) * nch, part.begin());
    pot = best_pot;
    indices[c] = cand[best];
    e.copy_row(cand[best], centers + c * e.d);
  }
}

// k distinct rows: unweighted, the k smallest (rng::permutation_key, index);
// weighted, the k smallest exponential clocks rng::weighted_key (-log(u) / w,
// Efraimidis-Spirakis), rows of weight 0 never chosen.
template <class T>
void random_init(KMeansEngine<T>& e, std::int64_t k, std::uint64_t seed, std::uint64_t stream, T* centers) {
  std::vector<std::pair<double, std::int64_t>> fkeys;
  std::vector<std::pair<std::uint64_t, std::int64_t>> ukeys;
  std::vector<std::int64_t> chosen(static_cast<std::size_t>(k));
  if (e.weighted) {
    std::vector<T> w(static_cast<std::size_t>(e.n));
    e.copy_weights(w.data());
    fkeys.resize(static_cast<std::size_t>(e.n));
    for (std::int64_t i = 0; i < e.n; ++i) {
      const double wi = static_cast<double>(w[i]);
      fkeys[i] = {wi > 0 ? rng::weighted_key(seed, stream, static_cast<std::uint64_t>(i), wi) : HUGE_VAL, i};
    }
    std::partial_sort(fkeys.begin(), fkeys.begin() + k, fkeys.end());
    for (std::int64_t c = 0; c < k; ++c) chosen[c] = fkeys[c].second;
  } else {
    ukeys.resize(static_cast<std::size_t>(e.n));
    for (std::int64_t i = 0; i < e.n; ++i) ukeys[i] = {rng::permutation_key(seed, stream, static_cast<std::uint64_t>(i)), i};
    std::partial_sort(ukeys.begin(), ukeys.begin() + k, ukeys.end());
    for (std::int64_t c = 0; c < k; ++c) chosen[c] = ukeys[c].second;
  }
  for (std::int64_t c = 0; c < k; ++c) e.copy_row(chosen[c], centers + c * e.d);
}

// scikit-learn's _relocate_empty_clusters_dense: each empty cluster (in
// increasing id) takes one of the rows farthest from their centers (farthest
// first, ties by lowest row index), moving that row's weight out of its old
// cluster's sums. A row at distance 0 from its center is not taken (there is
// nothing to gain: every row left sits on its center, as when there are more
// clusters than distinct rows); an empty cluster left without a row keeps its
// center (sums = center, weight 0).
template <class T>
void relocate_empty(KMeansEngine<T>& e, std::int64_t k, const T* centers, std::vector<double>& sums,
                    std::vector<double>& wsum) {
  std::vector<std::int64_t> empty;
  for (std::int64_t c = 0; c < k; ++c)
    if (wsum[c] == 0.0) empty.push_back(c);
  if (empty.empty()) return;
  const std::int64_t ne = static_cast<std::int64_t>(empty.size()), d = e.d;
  const std::int64_t take = std::min(ne, e.n);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(take));
  std::vector<T> md(static_cast<std::size_t>(take)), wts(static_cast<std::size_t>(take)),
      rows(static_cast<std::size_t>(take * d));
  std::vector<std::int32_t> lab(static_cast<std::size_t>(take));
  e.farthest(take, idx.data(), md.data(), lab.data(), wts.data(), rows.data());
  std::int64_t t = 0;
  for (; t < take; ++t) {
    const std::int64_t nc = empty[t];
    if (!(md[t] > T(0))) break;
    const std::int32_t oc = lab[t];
    const double wt = static_cast<double>(wts[t]);
    const T* row = rows.data() + t * d;
    for (std::int64_t f = 0; f < d; ++f) {
      const double v = detail::weighted_term(static_cast<T>(wt), row[f]);
      sums[oc * d + f] = num::sub(sums[oc * d + f], v);
      sums[nc * d + f] = v;
    }
    wsum[nc] = wt;
    wsum[oc] = num::sub(wsum[oc], wt);
  }
  for (; t < ne; ++t)
    for (std::int64_t f = 0; f < d; ++f) sums[empty[t] * d + f] = static_cast<double>(centers[empty[t] * d + f]);
}

struct LloydOut {
  double inertia;
  int n_iter;
};

// Lloyd's update on the host: empty clusters relocated (relocate_empty),
// next = sums / weight (the sums themselves for a cluster left empty),
// rounded to T, and the total squared shift from `centers` (one fma chain
// in T per cluster, clusters added in float64). Then centers <- next.
template <class T>
double host_update(KMeansEngine<T>& e, std::int64_t k, std::vector<T>& centers, std::vector<double>& sums,
                   std::vector<double>& wsum, std::vector<T>& next) {
  const std::int64_t d = e.d;
  relocate_empty(e, k, centers.data(), sums, wsum);
  double shift_tot = 0.0;
  for (std::int64_t c = 0; c < k; ++c) {
    const T shift = detail::center_step(sums.data() + c * d, wsum[c], centers.data() + c * d, d, next.data() + c * d);
    shift_tot = num::add(shift_tot, static_cast<double>(shift));
  }
  centers.swap(next);
  return shift_tot;
}

// scikit-learn's _kmeans_single_lloyd. centers (host, k x d) in, final out.
// Where the engine holds the centers on the device (device_steps), a step
// that empties no cluster updates them there; otherwise, and for the step
// that empties one, host_update runs.
template <class T>
LloydOut lloyd(KMeansEngine<T>& e, std::int64_t k, int max_iter, double tol, std::vector<T>& centers) {
  const std::int64_t d = e.d;
  std::vector<double> sums(static_cast<std::size_t>(k * d)), wsum(static_cast<std::size_t>(k));
  std::vector<T> next(static_cast<std::size_t>(k * d));
  const bool held = e.device_steps(k);
  if (held) e.set_centers(centers.data(), k);
  bool strict = false;
  int it = 0;
  for (; it < max_iter; ++it) {
    std::int64_t changed = 0;
    double shift_tot = 0.0;
    if (!held) {
      changed = e.assign_sums(centers.data(), k, sums.data(), wsum.data());
      shift_tot = host_update(e, k, centers, sums, wsum, next);
    } else {
      const typename KMeansEngine<T>::StepStats st = e.device_step(k, sums.data(), wsum.data());
      changed = st.changed;
      shift_tot = st.shift;
      if (st.empty > 0) {
        e.get_centers(centers.data(), k);
        shift_tot = host_update(e, k, centers, sums, wsum, next);
        e.set_centers(centers.data(), k);
      }
    }
    if (it > 0 && changed == 0) {
      strict = true;
      break;
    }
    if (shift_tot <= tol) break;
  }
  if (held) e.get_centers(centers.data(), k);
  const int n_iter = it < max_iter ? it + 1 : max_iter;
  if (!strict) e.assign(centers.data(), k);
  return {e.inertia(centers.data(), k), n_iter};
}

// True when two labellings of n rows are the same up to a permutation of the labels.
bool same_clustering(const std::int32_t* a, const std::int32_t* b, std::int64_t n, std::int64_t k) {
  std::vector<std::int32_t> map(static_cast<std::size_t>(k), -1);
  for (std::int64_t i = 0; i < n; ++i) {
    if (map[a[i]] == -1)
      map[a[i]] = b[i];
    else if (map[a[i]] != b[i])
      return false;
  }
  return true;
}

}  // namespace

template <class T>
KMeansResult kmeans_fit(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const double* x_mean,
                        const T* init_centers, const KMeansParams& params, T* centers_out,
                        std::int32_t* labels_out) {
  const std::int64_t k = params.n_clusters, d = X.cols;
  check_inputs(ctx, X, w, k);
  TL_REQUIRE(params.n_init >= 1, ValueError, "n_init must be >= 1; got ", params.n_init);
  TL_REQUIRE(params.max_iter >= 1, ValueError, "max_iter must be >= 1; got ", params.max_iter);
  TL_REQUIRE(params.init != KMeansInit::Given || init_centers, ValueError, "init centers are missing");
  auto engine = make_engine(ctx, X, w, x_mean);
  KMeansEngine<T>& e = *engine;
  KMeansResult best;
  const std::int64_t n = X.rows;
  // The kept run's labels go straight to labels_out; a later run's labels are
  // fetched (into run_labels, never zero-filled: 400 MB at 100M rows) only
  // when its inertia is lower.
  std::unique_ptr<std::int32_t[]> run_labels;
  std::vector<T> best_centers, centers(static_cast<std::size_t>(k * d));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(k));
  for (int run = 0; run < params.n_init; ++run) {
    const std::uint64_t stream = static_cast<std::uint64_t>(run);
    switch (params.init) {
      case KMeansInit::KMeansPlusPlus:
        plusplus(e, k, params.seed, 2 * stream, params.n_local_trials, centers.data(), idx.data());
        break;
      case KMeansInit::Random: random_init(e, k, params.seed, 2 * stream + 1, centers.data()); break;
      case KMeansInit::Given: {
        const T* src = init_centers + static_cast<std::int64_t>(run) * k * d;
        for (std::int64_t c = 0; c < k; ++c)
          for (std::int64_t f = 0; f < d; ++f)
            centers[c * d + f] = x_mean ? num::sub(src[c * d + f], static_cast<T>(x_mean[f])) : src[c * d + f];
        break;
      }
    }
    const LloydOut r = lloyd(e, k, params.max_iter, params.tol, centers);
    if (run == 0) {
      e.copy_labels(labels_out);
    } else {
      if (!(r.inertia < best.inertia)) continue;
      if (!run_labels) run_labels.reset(new std::int32_t[static_cast<std::size_t>(n)]);
      e.copy_labels(run_labels.get());
      if (same_clustering(run_labels.get(), labels_out, n, k)) continue;
      std::copy(run_labels.get(), run_labels.get() + n, labels_out);
    }
    best.inertia = r.inertia;
    best.n_iter = r.n_iter;
    best.best_init = run;
    best_centers = centers;
  }
  best.delivered = e.delivered();
  std::vector<unsigned char> seen(static_cast<std::size_t>(k), 0);
  for (std::int64_t i = 0; i < n; ++i)
    if (labels_out[i] >= 0 && labels_out[i] < k) seen[labels_out[i]] = 1;
  best.n_distinct = std::count(seen.begin(), seen.end(), static_cast<unsigned char>(1));
  for (std::int64_t c = 0; c < k; ++c)
    for (std::int64_t f = 0; f < d; ++f)
      centers_out[c * d + f] =
          x_mean ? num::add(best_centers[c * d + f], static_cast<T>(x_mean[f])) : best_centers[c * d + f];
  return best;
}

template <class T>
void kmeans_predict(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* centers,
                    std::int64_t k, std::int32_t* labels, double* inertia) {
  check_placement(ctx, X, "X");
  TL_REQUIRE(k >= 1, ValueError, "no centers");
  if (X.rows == 0) {
    if (inertia) *inertia = 0.0;
    return;
  }
  if (w.data) {
    check_placement(ctx, w, "sample_weight");
    TL_REQUIRE(w.size == X.rows, ValueError, "sample_weight has ", w.size, " entries but X has ", X.rows, " rows");
  }
  auto e = make_engine(ctx, X, w, nullptr);
  e->assign(centers, k);
  e->copy_labels(labels);
  if (inertia) *inertia = e->inertia(centers, k);
}

template <class T>
double kmeans_assign_sums(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* centers,
                          std::int64_t k, std::int32_t* labels, double* sums, double* wsum) {
  check_inputs(ctx, X, w, 1);
  TL_REQUIRE(k >= 1, ValueError, "no centers");
  auto e = make_engine(ctx, X, w, nullptr);
  e->assign_sums(centers, k, sums, wsum);
  e->copy_labels(labels);
  return e->inertia(centers, k);
}

template <class T>
void kmeans_plusplus(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, std::int64_t k,
                     std::uint64_t seed, int n_local_trials, T* centers, std::int64_t* indices) {
  check_inputs(ctx, X, w, k);
  auto e = make_engine(ctx, X, w, nullptr);
  plusplus(*e, k, seed, 0, n_local_trials, centers, indices);
}

#define TL_INST(T)                                                                                                 \
  template KMeansResult kmeans_fit<T>(const Context&, MatrixView<const T>, VectorView<const T>, const double*,       \
                                      const T*, const KMeansParams&, T*, std::int32_t*);                           \
  template void kmeans_predict<T>(const Context&, MatrixView<const T>, VectorView<const T>, const T*, std::int64_t, \
                                  std::int32_t*, double*);                                                         \
  template double kmeans_assign_sums<T>(const Context&, MatrixView<const T>, VectorView<const T>, const T*,           \
                                        std::int64_t, std::int32_t*, double*, double*);                             \
  template void kmeans_plusplus<T>(const Context&, MatrixView<const T>, VectorView<const T>, std::int64_t,          \
                                   std::uint64_t, int, T*, std::int64_t*);
TL_INST(float)
TL_INST(double)
#undef TL_INST

}  // namespace tl
