// Host-side pieces of the gradient-boosted trees that do not depend on the
// backend: names, model validation, the link function, base scores and the
// final steps of the canonical loss reduction.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ensemble/gbdt/gbdt_driver.hpp"
#include "twinlearn/core/reduce.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl {

// The names of the enums: one table each serves to_string and parse.
namespace {

template <class E>
struct Named {
  E value;
  const char* name;
};

constexpr Named<GbdtLoss> kLosses[] = {
    {GbdtLoss::Logloss, "Logloss"}, {GbdtLoss::CrossEntropy, "CrossEntropy"},
    {GbdtLoss::MultiClass, "MultiClass"}, {GbdtLoss::MultiClassOneVsAll, "MultiClassOneVsAll"},
    {GbdtLoss::RMSE, "RMSE"}, {GbdtLoss::Poisson, "Poisson"}, {GbdtLoss::Tweedie, "Tweedie"},
    {GbdtLoss::Huber, "Huber"}, {GbdtLoss::MAE, "MAE"}, {GbdtLoss::Quantile, "Quantile"}};
constexpr Named<GbdtMetric> kMetrics[] = {{GbdtMetric::Loss, "Loss"}, {GbdtMetric::AUC, "AUC"},
                                          {GbdtMetric::Accuracy, "Accuracy"}, {GbdtMetric::RMSE, "RMSE"},
                                          {GbdtMetric::MAE, "MAE"}};
constexpr Named<GbdtNanMode> kNanModes[] = {
    {GbdtNanMode::Min, "Min"}, {GbdtNanMode::Max, "Max"}, {GbdtNanMode::Forbidden, "Forbidden"},
    {GbdtNanMode::Learned, "Learned"}};
constexpr Named<GbdtGrowPolicy> kGrowPolicies[] = {{GbdtGrowPolicy::SymmetricTree, "SymmetricTree"},
                                                   {GbdtGrowPolicy::Depthwise, "Depthwise"},
                                                   {GbdtGrowPolicy::Lossguide, "Lossguide"}};
constexpr Named<GbdtBootstrap> kBootstraps[] = {
    {GbdtBootstrap::No, "No"}, {GbdtBootstrap::Bernoulli, "Bernoulli"}, {GbdtBootstrap::Bayesian, "Bayesian"}};

template <class E, std::size_t N>
const char* name_in(const Named<E> (&table)[N], E value) {
  for (const auto& x : table)
    if (x.value == value) return x.name;
  return "?";
}

// The value named s, or a ValueError listing the names (`what` must be one of ...).
template <class E, std::size_t N>
E parse_in(const Named<E> (&table)[N], const std::string& s, const char* what) {
  std::string names;
  for (const auto& x : table) {
    if (s == x.name) return x.value;
    names += (names.empty() ? "'" : ", '") + std::string(x.name) + "'";
  }
  throw ValueError(std::string(what) + " must be one of " + names + "; got '" + s + "'");
}

}  // namespace

const char* to_string(GbdtLoss l) { return name_in(kLosses, l); }
GbdtLoss parse_gbdt_loss(const std::string& s) { return parse_in(kLosses, s, "loss"); }
const char* to_string(GbdtMetric m) { return name_in(kMetrics, m); }
GbdtMetric parse_gbdt_metric(const std::string& s) { return parse_in(kMetrics, s, "eval_metric"); }
const char* to_string(GbdtNanMode m) { return name_in(kNanModes, m); }
GbdtNanMode parse_gbdt_nan_mode(const std::string& s) { return parse_in(kNanModes, s, "nan_mode"); }
const char* to_string(GbdtBootstrap b) { return name_in(kBootstraps, b); }
GbdtBootstrap parse_gbdt_bootstrap(const std::string& s) { return parse_in(kBootstraps, s, "bootstrap_type"); }
const char* to_string(GbdtGrowPolicy g) { return name_in(kGrowPolicies, g); }
GbdtGrowPolicy parse_gbdt_grow_policy(const std::string& s) { return parse_in(kGrowPolicies, s, "grow_policy"); }

namespace {
// Allowed features (see gbdt_feature_subset) from per-feature border counts.
std::vector<std::uint8_t> subset_of(const GbdtParams& p, const std::vector<int>& counts, std::int64_t tree) {
  const std::int64_t F = static_cast<std::int64_t>(counts.size());
  std::vector<std::uint8_t> allowed(static_cast<std::size_t>(F), 0);
  std::vector<std::pair<std::uint64_t, std::int64_t>> keys;
  const std::uint64_t stream = gbdt::sampling_stream(gbdt::kStreamFeatures, tree);
  for (std::int64_t f = 0; f < F; ++f)
    if (counts[f] > 0) keys.emplace_back(rng::permutation_key(p.seed, stream, static_cast<std::uint64_t>(f)), f);
  const std::int64_t m = static_cast<std::int64_t>(keys.size());
  std::int64_t k = m;
  if (p.rsm < 1.0) {
    k = static_cast<std::int64_t>(std::floor(num::add(num::mul(p.rsm, static_cast<double>(m)), 0.5)));
    k = std::max<std::int64_t>(1, std::min(k, m));
    std::sort(keys.begin(), keys.end());
  }
  for (std::int64_t j = 0; j < k; ++j) allowed[keys[j].second] = 1;
  return allowed;
}
}  // namespace

std::vector<std::uint8_t> gbdt_feature_subset(const GbdtParams& params, const std::vector<std::int32_t>& border_offsets,
                                              std::int64_t tree) {
  TL_REQUIRE(!border_offsets.empty(), ValueError, "gbdt_feature_subset: border_offsets is empty");
  std::vector<int> counts(border_offsets.size() - 1);
  for (std::size_t j = 0; j + 1 < border_offsets.size(); ++j) counts[j] = border_offsets[j + 1] - border_offsets[j];
  return subset_of(params, counts, tree);
}

namespace gbdt {
std::vector<int> allowed_counts(const GbdtParams& p, const std::vector<int>& counts, std::int64_t tree) {
  const std::vector<std::uint8_t> allowed = subset_of(p, counts, tree);
  std::vector<int> out(counts);
  for (std::size_t f = 0; f < out.size(); ++f)
    if (!allowed[f]) out[f] = 0;
  return out;
}
}  // namespace gbdt

void GbdtModel::validate() const {
  TL_REQUIRE(n_features >= 1, ValueError, "GBDT model: n_features must be >= 1, got ", n_features);
  TL_REQUIRE(n_outputs >= 1, ValueError, "GBDT model: n_outputs must be >= 1, got ", n_outputs);
  TL_REQUIRE(!gbdt::is_multiclass(loss) || n_outputs >= 2, ValueError, "GBDT model: ", to_string(loss),
             " needs n_outputs >= 2");
  TL_REQUIRE(gbdt::is_multiclass(loss) || n_outputs == 1, ValueError, "GBDT model: ", to_string(loss),
             " has one output, got ", n_outputs);
  TL_REQUIRE(static_cast<std::int64_t>(base_score.size()) == n_outputs, ValueError,
             "GBDT model: base_score has ", base_score.size(), " entries, expected ", n_outputs);
  TL_REQUIRE(static_cast<std::int64_t>(border_offsets.size()) == n_features + 1, ValueError,
             "GBDT model: border_offsets has ", border_offsets.size(), " entries, expected ", n_features + 1);
  TL_REQUIRE(border_offsets[0] == 0, ValueError, "GBDT model: border_offsets[0] must be 0");
  for (int j = 0; j < n_features; ++j) {
    const std::int32_t a = border_offsets[j], b = border_offsets[j + 1];
    TL_REQUIRE(b >= a && b - a <= gbdt::kMaxBordersPadded - 1, ValueError, "GBDT model: feature ", j, " has ",
               b - a, " borders (0..255 allowed)");
    for (std::int32_t k = a + 1; k < b; ++k)
      TL_REQUIRE(borders[k - 1] < borders[k], ValueError, "GBDT model: borders of feature ", j,
                 " are not strictly increasing");
  }
  TL_REQUIRE(static_cast<std::int64_t>(borders.size()) == border_offsets[n_features], ValueError,
             "GBDT model: borders has ", borders.size(), " entries, offsets say ", border_offsets[n_features]);
  TL_REQUIRE(grow_policy == GbdtGrowPolicy::SymmetricTree || grow_policy == GbdtGrowPolicy::Depthwise ||
                 grow_policy == GbdtGrowPolicy::Lossguide,
             ValueError, "GBDT model: unknown grow_policy ", static_cast<int>(grow_policy));
  const bool depthwise = gbdt_per_node(grow_policy);
  std::int64_t nsplit = 0, nleaf = 0;
  for (std::size_t t = 0; t < tree_depth.size(); ++t) {
    const int d = tree_depth[t];
    TL_REQUIRE(d >= 0 && d <= gbdt::kMaxDepth, ValueError, "GBDT model: tree ", t, " has depth ", d);
    nsplit += gbdt_tree_splits(grow_policy, d);
    nleaf += (std::int64_t(1) << d) * n_outputs;
  }
  TL_REQUIRE(static_cast<std::int64_t>(split_feature.size()) == nsplit &&
                 static_cast<std::int64_t>(split_bin.size()) == nsplit &&
                 static_cast<std::int64_t>(split_border.size()) == nsplit,
             ValueError, "GBDT model: split arrays must have ", nsplit, " entries (",
             depthwise ? "2^depth - 1 per tree" : "the sum of tree depths", ")");
  TL_REQUIRE(split_gain.empty() || static_cast<std::int64_t>(split_gain.size()) == nsplit, ValueError,
             "GBDT model: split_gain must be empty or have ", nsplit, " entries");
  const bool learned = nan_mode == GbdtNanMode::Learned;
  TL_REQUIRE(!learned || depthwise, ValueError, "GBDT model: nan_mode 'Learned' needs a per-node grow_policy");
  TL_REQUIRE(static_cast<std::int64_t>(split_nan_right.size()) == (learned ? nsplit : 0), ValueError,
             "GBDT model: split_nan_right must have ", learned ? nsplit : 0, " entries under nan_mode '",
             to_string(nan_mode), "', got ", split_nan_right.size());
  TL_REQUIRE(static_cast<std::int64_t>(leaf_values.size()) == nleaf, ValueError, "GBDT model: leaf_values has ",
             leaf_values.size(), " entries, expected ", nleaf);
  TL_REQUIRE(leaf_count.empty() || static_cast<std::int64_t>(leaf_count.size()) * n_outputs == nleaf, ValueError,
             "GBDT model: leaf_count must be empty or have ", nleaf / n_outputs, " entries (one per leaf), got ",
             leaf_count.size());
  for (std::size_t j = 0; j < leaf_count.size(); ++j)
    TL_REQUIRE(leaf_count[j] >= 0, ValueError, "GBDT model: leaf_count[", j, "] is negative (", leaf_count[j], ")");
  for (std::int64_t s = 0; s < nsplit; ++s) {
    const int f = split_feature[s];
    const bool nan_right = learned && split_nan_right[s] != 0;
    TL_REQUIRE(!learned || split_nan_right[s] <= 1, ValueError, "GBDT model: split_nan_right[", s, "] must be 0 or 1");
    if (depthwise && f == -1) {  // a node that does not split
      TL_REQUIRE(split_bin[s] == -1 && split_border[s] == 0.0 && !nan_right, ValueError, "GBDT model: split ", s,
                 " does not split (feature -1) and needs split_bin -1, split_border 0 and split_nan_right 0");
      continue;
    }
    TL_REQUIRE(f >= 0 && f < n_features, ValueError, "GBDT model: split ", s, " uses feature ", f);
    const int nb = border_offsets[f + 1] - border_offsets[f];
    TL_REQUIRE(split_bin[s] >= 0 && split_bin[s] < nb, ValueError, "GBDT model: split ", s, " uses border ",
               split_bin[s], " of feature ", f, " which has ", nb);
    TL_REQUIRE(split_border[s] == borders[border_offsets[f] + split_bin[s]], ValueError, "GBDT model: split ", s,
               " has border value ", split_border[s], " but border ", split_bin[s], " of feature ", f, " is ",
               borders[border_offsets[f] + split_bin[s]]);
    TL_REQUIRE(!nan_right || (split_bin[s] >= 1 && gbdt::has_nan_bin(borders.data() + border_offsets[f], nb)), ValueError,
               "GBDT model: split ", s, " sends NaN right but feature ", f,
               " has no NaN bin below border ", split_bin[s]);
  }
}

void gbdt_link(GbdtLoss loss, int n_outputs, const double* acc, std::int64_t n, GbdtOutput kind, double* out) {
  const int D = n_outputs;
  for (std::int64_t i = 0; i < n; ++i) {
    if (kind != GbdtOutput::Raw) {
      gbdt::link(loss, D, kind, acc + i * D, out + i * D);
    } else {
      for (int k = 0; k < D; ++k) out[i * D + k] = acc[i * D + k];
    }
  }
}

namespace gbdt {

std::vector<double> base_score(const GbdtParams& p, int n_outputs, const double* y, const double* w, std::int64_t n,
                               int n_threads) {
  std::vector<double> base(static_cast<std::size_t>(n_outputs), 0.0);
  if (!p.boost_from_average || gbdt::is_multiclass(p.loss)) return base;
  if (p.loss == GbdtLoss::MAE || p.loss == GbdtLoss::Quantile) {
    base[0] = weighted_quantile(y, w, n, p.loss == GbdtLoss::MAE ? 0.5 : p.loss_param);
    return base;
  }
  Context cpu(Device{}, n_threads, NumericMode::Identical, 0);
  ColStat st;
  column_stats<double>(cpu, MatrixView<const double>(y, n, 1), VectorView<const double>(w, w ? n : 0), &st);
  if (!(st.w > 0.0)) return base;
  if (p.loss == GbdtLoss::RMSE || p.loss == GbdtLoss::Huber) {
    base[0] = st.mean;
  } else if (p.loss == GbdtLoss::Poisson || p.loss == GbdtLoss::Tweedie) {
    if (st.mean > 0.0) base[0] = gbdt::log(st.mean);
  } else if (st.mean > 0.0 && st.mean < 1.0) {
    base[0] = gbdt::log(num::div(st.mean, num::sub(1.0, st.mean)));
  }
  return base;
}

double weighted_quantile(const double* y, const double* w, std::int64_t n, double alpha) {
  std::vector<std::int64_t> idx;
  idx.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    if (!w || w[i] > 0.0) idx.push_back(i);
  if (idx.empty()) return 0.0;
  std::stable_sort(idx.begin(), idx.end(), [y](std::int64_t a, std::int64_t b) { return y[a] < y[b]; });
  double total = 0.0;
  for (std::int64_t i : idx) total = num::add(total, w ? w[i] : 1.0);
  const double target = num::mul(alpha, total);
  double cum = 0.0;
  for (std::int64_t i : idx) {
    cum = num::add(cum, w ? w[i] : 1.0);
    if (cum >= target) return y[i];
  }
  return y[idx.back()];  // not reached: the last partial sum is the total
}

void quantile_leaf_values(const GbdtParams& p, std::int64_t tree, const std::int32_t* leaf, const double* y,
                          const double* w, const double* approx, std::int64_t n, std::int64_t n_leaves,
                          double* values) {
  const double alpha = p.loss == GbdtLoss::MAE ? 0.5 : p.loss_param;
  const RowSampler rs = row_sampler(p, tree);
  std::vector<std::int64_t> start(static_cast<std::size_t>(n_leaves + 1), 0);
  for (std::int64_t i = 0; i < n; ++i) start[leaf[i] + 1] += 1;
  for (std::int64_t j = 0; j < n_leaves; ++j) start[j + 1] += start[j];
  std::vector<std::int64_t> pos(start.begin(), start.end() - 1);
  std::vector<double> r(static_cast<std::size_t>(n)), rw(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t k = pos[leaf[i]]++;
    r[k] = num::sub(y[i], approx[i]);
    rw[k] = row_weight(rs, w, i);
  }
  for (std::int64_t j = 0; j < n_leaves; ++j) {
    const std::int64_t a = start[j], m = start[j + 1] - a;
    values[j] = num::mul(p.learning_rate, weighted_quantile(r.data() + a, rw.data() + a, m, alpha));
  }
}

double finish_loss(GbdtLoss loss, std::vector<double>& partials) {
  struct Pair {
    double s, w;
  };
  const std::int64_t nc = static_cast<std::int64_t>(partials.size() / 2);
  if (nc == 0) return 0.0;
  std::vector<Pair> pp(static_cast<std::size_t>(nc));
  for (std::int64_t c = 0; c < nc; ++c) pp[c] = Pair{partials[2 * c], partials[2 * c + 1]};
  tree_reduce_inplace(pp.data(), nc, 1, [](const Pair& a, const Pair& b) {
    return Pair{num::add(a.s, b.s), num::add(a.w, b.w)};
  });
  if (!(pp[0].w > 0.0)) return 0.0;
  const double mean = num::div(pp[0].s, pp[0].w);
  return loss == GbdtLoss::RMSE ? num::sqrt(mean) : mean;
}

void tree_offsets(const GbdtModel& m, std::vector<std::int64_t>* split_off, std::vector<std::int64_t>* leaf_off) {
  const std::int64_t T = m.n_trees();
  split_off->assign(static_cast<std::size_t>(T + 1), 0);
  leaf_off->assign(static_cast<std::size_t>(T + 1), 0);
  for (std::int64_t t = 0; t < T; ++t) {
    (*split_off)[t + 1] = (*split_off)[t] + gbdt_tree_splits(m.grow_policy, m.tree_depth[t]);
    (*leaf_off)[t + 1] = (*leaf_off)[t] + (std::int64_t(1) << m.tree_depth[t]) * m.n_outputs;
  }
}

void set_borders(GbdtModel& m, int n_features, const std::vector<double>& padded, const std::vector<int>& counts) {
  m.n_features = n_features;
  m.border_offsets.assign(static_cast<std::size_t>(n_features) + 1, 0);
  m.borders.clear();
  for (int f = 0; f < n_features; ++f) {
    m.border_offsets[f + 1] = m.border_offsets[f] + counts[f];
    for (int j = 0; j < counts[f]; ++j) m.borders.push_back(padded[static_cast<std::size_t>(f) * kMaxBordersPadded + j]);
  }
}

void trim_trees(GbdtModel& m) {
  if (!gbdt_per_node(m.grow_policy)) return;
  const std::int64_t D = m.n_outputs;
  const bool counted = !m.leaf_count.empty();
  std::size_t so = 0, lo = 0, s_in = 0, l_in = 0;  // write and read offsets (write <= read: in place)
  std::size_t co = 0, c_in = 0;                    // the same for leaf_count
  std::vector<std::int64_t> cnt;
  for (std::size_t t = 0; t < m.tree_depth.size(); ++t) {
    const int depth = m.tree_depth[t];
    int keep = 0;  // levels up to the last with a split
    for (int l = 0; l < depth; ++l)
      for (std::int64_t p = 0; p < (std::int64_t(1) << l); ++p)
        if (m.split_feature[s_in + ((std::size_t(1) << l) - 1) + p] >= 0) keep = l + 1;
    const std::size_t ns = (std::size_t(1) << keep) - 1, nl = (std::size_t(1) << keep) * D;
    for (std::size_t j = 0; j < ns; ++j) {
      m.split_feature[so + j] = m.split_feature[s_in + j];
      m.split_bin[so + j] = m.split_bin[s_in + j];
      if (!m.split_gain.empty()) m.split_gain[so + j] = m.split_gain[s_in + j];
      if (!m.split_nan_right.empty()) m.split_nan_right[so + j] = m.split_nan_right[s_in + j];
    }
    for (std::size_t j = 0; j < nl; ++j) m.leaf_values[lo + j] = m.leaf_values[l_in + j];
    if (counted) {
      // Leaf j of the grown tree is leaf j mod 2^keep of the cut one (the
      // levels below keep send every row left): its count goes there.
      const std::size_t nc = std::size_t(1) << keep;
      cnt.assign(nc, 0);
      for (std::size_t j = 0; j < (std::size_t(1) << depth); ++j) cnt[j & (nc - 1)] += m.leaf_count[c_in + j];
      std::copy(cnt.begin(), cnt.end(), m.leaf_count.begin() + static_cast<std::ptrdiff_t>(co));
      c_in += std::size_t(1) << depth;
      co += nc;
    }
    s_in += (std::size_t(1) << depth) - 1;
    l_in += (std::size_t(1) << depth) * D;
    so += ns;
    lo += nl;
    m.tree_depth[t] = keep;
  }
  m.split_feature.resize(so);
  m.split_bin.resize(so);
  if (!m.split_gain.empty()) m.split_gain.resize(so);
  if (!m.split_nan_right.empty()) m.split_nan_right.resize(so);
  m.leaf_values.resize(lo);
  if (counted) m.leaf_count.resize(co);
}

std::vector<std::uint8_t> nan_bins(const std::vector<double>& padded, const std::vector<int>& count) {
  std::vector<std::uint8_t> out(count.size());
  for (std::size_t f = 0; f < count.size(); ++f) out[f] = has_nan_bin(padded.data() + f * kMaxBordersPadded, count[f]);
  return out;
}

BinExtent bin_extent(const std::vector<int>& count, int max_depth) {
  int maxb = 0;
  bool any = false;
  for (int c : count) {
    maxb = std::max(maxb, c);
    any = any || c > 0;
  }
  return {maxb + 1, any ? max_depth : 0};
}

void split_nan_from_codes(GbdtModel& m) {
  const bool learned = m.nan_mode == GbdtNanMode::Learned;
  m.split_nan_right.assign(learned ? m.split_bin.size() : 0, 0);
  for (std::size_t s = 0; s < m.split_bin.size(); ++s) {
    const std::int32_t code = m.split_bin[s];
    if (code < 0) continue;  // a node that does not split
    if (learned) m.split_nan_right[s] = (code & kNanRight) != 0;
    m.split_bin[s] = code & kSplitBinMask;
  }
}

std::vector<std::int64_t> lossguide_cut(int depth, int max_leaves, int n_outputs, std::int32_t* sf, std::int32_t* sb,
                                        double* sg, std::vector<std::int64_t>& tot) {
  std::vector<std::uint8_t> keep;
  std::vector<std::int64_t> map;
  gbdt_lossguide_keep(sf, sg, depth, max_leaves, keep, map);
  for (std::size_t k = 0; k < keep.size(); ++k)
    if (!keep[k]) {
      sf[k] = -1;
      sb[k] = -1;
      sg[k] = 0.0;
    }
  const std::size_t per = static_cast<std::size_t>(2 * n_outputs);
  std::vector<std::int64_t> cut(tot.size(), 0);
  for (std::size_t j = 0; j < map.size(); ++j)
    for (std::size_t e = 0; e < per; ++e) cut[map[j] * per + e] += tot[j * per + e];
  tot.swap(cut);
  return map;
}

void values_from_totals(const std::vector<std::int64_t>& tot, double isg, double ish, double l2_leaf_reg,
                        double learning_rate, double* values, std::size_t count) {
  for (std::size_t e = 0; e < count; ++e)
    values[e] = leaf_value(dequantize(tot[2 * e], isg), dequantize(tot[2 * e + 1], ish), l2_leaf_reg, learning_rate);
}

void fill_split_borders(GbdtModel& m) {
  m.split_border.resize(m.split_feature.size());
  for (std::size_t s = 0; s < m.split_feature.size(); ++s)
    m.split_border[s] =
        m.split_feature[s] < 0 ? 0.0 : m.borders[m.border_offsets[m.split_feature[s]] + m.split_bin[s]];
}

void padded_borders(const GbdtModel& m, std::vector<double>& padded, std::vector<int>& counts) {
  const int F = m.n_features;
  padded.assign(static_cast<std::size_t>(F) * kMaxBordersPadded, num::double_from_bits(0x7ff0000000000000ULL));
  counts.assign(static_cast<std::size_t>(F), 0);
  for (int f = 0; f < F; ++f) {
    const std::int32_t a = m.border_offsets[f], b = m.border_offsets[f + 1];
    counts[f] = b - a;
    for (std::int32_t j = a; j < b; ++j) padded[static_cast<std::size_t>(f) * kMaxBordersPadded + (j - a)] = m.borders[j];
  }
}

void prepend_trees(GbdtModel& m, const GbdtModel& init) {
  auto before = [](auto& v, const auto& head) { v.insert(v.begin(), head.begin(), head.end()); };
  const std::size_t init_splits = init.split_feature.size();
  before(m.tree_depth, init.tree_depth);
  before(m.split_feature, init.split_feature);
  before(m.split_bin, init.split_bin);
  before(m.split_border, init.split_border);
  if (init.split_gain.size() == init_splits) {
    before(m.split_gain, init.split_gain);
  } else {
    m.split_gain.insert(m.split_gain.begin(), init_splits, 0.0);
  }
  if (m.nan_mode == GbdtNanMode::Learned) before(m.split_nan_right, init.split_nan_right);
  // The counts of init's trees come with them; without them (an older model)
  // the continued model has none.
  if (!init.leaf_count.empty() || init.leaf_values.empty()) {
    before(m.leaf_count, init.leaf_count);
  } else {
    m.leaf_count.clear();
  }
  before(m.leaf_values, init.leaf_values);
  m.borders = init.borders;
  m.border_offsets = init.border_offsets;
  m.n_features = init.n_features;
  m.base_score = init.base_score;
}

}  // namespace gbdt

void gbdt_lossguide_keep(const std::int32_t* split_feature, const double* split_gain, int depth, int max_leaves,
                         std::vector<std::uint8_t>& keep, std::vector<std::int64_t>& leaf_map) {
  const std::int64_t nslot = (std::int64_t(1) << depth) - 1, nleaf = std::int64_t(1) << depth;
  keep.assign(static_cast<std::size_t>(nslot), 0);
  // The leaves that may split next, ordered by (gain descending, slot ascending).
  auto before = [&](std::int64_t a, std::int64_t b) {
    return split_gain[a] > split_gain[b] || (split_gain[a] == split_gain[b] && a < b);
  };
  std::set<std::int64_t, decltype(before)> open(before);
  if (nslot > 0 && split_feature[0] >= 0) open.insert(0);
  std::int64_t leaves = 1;
  while (!open.empty() && (max_leaves <= 0 || leaves < max_leaves)) {
    const std::int64_t s = *open.begin();
    open.erase(open.begin());
    keep[s] = 1;
    ++leaves;
    // Node s = (level l, position p): children (l + 1, p) and (l + 1, p + 2^l).
    int l = 0;
    while ((std::int64_t(2) << l) - 1 <= s) ++l;
    const std::int64_t p = s - ((std::int64_t(1) << l) - 1);
    if (l + 1 < depth) {
      const std::int64_t base = (std::int64_t(2) << l) - 1;
      for (const std::int64_t c : {base + p, base + p + (std::int64_t(1) << l)})
        if (split_feature[c] >= 0) open.insert(c);
    }
  }
  // Leaf j of the grown tree: its rows stop at the first node on their path
  // whose split is not kept and go left from there on.
  leaf_map.assign(static_cast<std::size_t>(nleaf), 0);
  for (std::int64_t j = 0; j < nleaf; ++j) {
    std::int64_t to = j;
    for (int l = 0; l < depth; ++l) {
      const std::int64_t p = j & ((std::int64_t(1) << l) - 1);
      if (!keep[((std::int64_t(1) << l) - 1) + p]) {
        to = p;
        break;
      }
    }
    leaf_map[j] = to;
  }
}

namespace {

bool binary_loss(GbdtLoss l) { return l == GbdtLoss::Logloss || l == GbdtLoss::CrossEntropy; }
bool regression_loss(GbdtLoss l) {
  return l == GbdtLoss::RMSE || l == GbdtLoss::Huber || l == GbdtLoss::MAE || l == GbdtLoss::Quantile ||
         l == GbdtLoss::Poisson || l == GbdtLoss::Tweedie;
}

// sum of term(i, w_i) over sum of w_i, both summed per canonical loss chunk
// in row order and the chunks reduced by the pairwise tree
// (gbdt::finish_loss with `finish_as`: RMSE takes the root, the others not).
template <class Term>
double chunked_mean(std::int64_t m, const double* w, GbdtLoss finish_as, Term term) {
  const std::int64_t nc = (m + gbdt::kLossChunk - 1) / gbdt::kLossChunk;
  std::vector<double> part(static_cast<std::size_t>(2 * nc), 0.0);
  for (std::int64_t c = 0; c < nc; ++c) {
    double s = 0.0, ws = 0.0;
    for (std::int64_t i = c * gbdt::kLossChunk; i < std::min(m, (c + 1) * gbdt::kLossChunk); ++i) {
      const double wi = w ? w[i] : 1.0;
      s = num::add(s, term(i, wi));
      ws = num::add(ws, wi);
    }
    part[2 * c] = s;
    part[2 * c + 1] = ws;
  }
  return gbdt::finish_loss(finish_as, part);
}

// Weighted AUC of scores s against positives pos: rows sorted by (score,
// row) (a total order: one result for any sort), equal scores form a group;
// each positive of weight a earns a * (negative weight below its group +
// half the negative weight of its group). Sums run in sorted order.
double auc(const double* raw, int D, const double* y, const double* w, std::int64_t m) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) idx[i] = i;
  auto key = [&](std::int64_t i) { return gbdt::canonical_key(raw[i * D]); };
  std::sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
    const double ka = key(a), kb = key(b);
    const bool na = num::is_nan(ka), nb = num::is_nan(kb);
    if (na != nb) return nb;  // NaN scores last
    if (!na && ka != kb) return ka < kb;
    return a < b;
  });
  double num_sum = 0.0, neg_below = 0.0, pos_total = 0.0;
  std::size_t k = 0;
  while (k < idx.size()) {
    std::size_t e = k;
    const double kk = key(idx[k]);
    double gp = 0.0, gn = 0.0;
    while (e < idx.size()) {
      const double ke = key(idx[e]);
      if (!(ke == kk || (num::is_nan(ke) && num::is_nan(kk)))) break;
      const std::int64_t i = idx[e];
      const double wi = w ? w[i] : 1.0;
      if (y[i] > 0.5)
        gp = num::add(gp, wi);
      else
        gn = num::add(gn, wi);
      ++e;
    }
    num_sum = num::add(num_sum, num::mul(gp, num::add(neg_below, num::mul(0.5, gn))));
    neg_below = num::add(neg_below, gn);
    pos_total = num::add(pos_total, gp);
    k = e;
  }
  const double denom = num::mul(pos_total, neg_below);
  TL_REQUIRE(denom > 0.0, ValueError,
             "eval_metric 'AUC' needs both classes with positive weight in the eval set");
  return num::div(num_sum, denom);
}

}  // namespace

double gbdt_metric(GbdtMetric metric, GbdtLoss loss, int n_outputs, const double* raw, const double* y,
                   const double* w, std::int64_t m) {
  const int D = n_outputs;
  switch (metric) {
    case GbdtMetric::Loss:
      break;
    case GbdtMetric::AUC:
      TL_REQUIRE(binary_loss(loss), ValueError, "eval_metric 'AUC' needs a binary loss (Logloss, CrossEntropy), got ",
                 to_string(loss));
      return auc(raw, D, y, w, m);
    case GbdtMetric::Accuracy: {
      TL_REQUIRE(binary_loss(loss) || gbdt::is_multiclass(loss), ValueError,
                 "eval_metric 'Accuracy' needs a classification loss, got ", to_string(loss));
      // Weighted hits over weight (adding +0 for a miss leaves the sum's bits as they are).
      return chunked_mean(m, w, GbdtLoss::Logloss, [&](std::int64_t i, double wi) {
        bool hit;
        if (D == 1) {
          hit = (static_cast<float>(raw[i]) > 0.0f) == (y[i] > 0.5);
        } else {
          int best = 0;
          float bv = static_cast<float>(raw[i * D]);
          for (int k = 1; k < D; ++k) {
            const float v = static_cast<float>(raw[i * D + k]);
            if (v > bv) {
              bv = v;
              best = k;
            }
          }
          hit = best == static_cast<int>(y[i]);
        }
        return hit ? wi : 0.0;
      });
    }
    case GbdtMetric::RMSE:
    case GbdtMetric::MAE: {
      TL_REQUIRE(regression_loss(loss), ValueError, "eval_metric '", to_string(metric),
                 "' needs a regression loss, got ", to_string(loss));
      const bool log_link = loss == GbdtLoss::Poisson || loss == GbdtLoss::Tweedie;
      return chunked_mean(m, w, metric == GbdtMetric::RMSE ? GbdtLoss::RMSE : GbdtLoss::MAE,
                          [&](std::int64_t i, double wi) {
                            const double pred = log_link ? gbdt::exp(raw[i]) : raw[i];
                            const double d = num::sub(pred, y[i]);
                            return num::mul(wi, metric == GbdtMetric::RMSE ? num::mul(d, d) : gbdt::abs_bits(d));
                          });
    }
  }
  throw ValueError(std::string("gbdt_metric: the metric '") + to_string(metric) +
                   "' is the loss, which the backends compute");
}

}  // namespace tl
