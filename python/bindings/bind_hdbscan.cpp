// Bindings of HDBSCAN.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "convert.hpp"
#include "twinlearn/cluster/hdbscan.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostF64 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using HostI64 = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// hdbscan_fit's result.
struct HdbscanFit {
  nb::object labels;           // n, int64: cluster id or -1
  nb::object probabilities;    // n, float64
  nb::object core_distances;   // n, float64
  nb::object mst_src;          // n - 1, int64 (in the order Prim adds the rows)
  nb::object mst_dst;          // n - 1, int64
  nb::object mst_weight;       // n - 1, float64
};

bool parse_method(const std::string& s) {
  if (s == "eom") return false;
  if (s == "leaf") return true;
  throw tl::ValueError("The 'cluster_selection_method' parameter of HDBSCAN must be a str among {'eom', 'leaf'}. Got '" +
                       s + "' instead.");
}
const char* method_name(bool leaf) { return leaf ? "leaf" : "eom"; }

}  // namespace

TL_BINDINGS(hdbscan) {
  params_class<tl::HdbscanParams>(m, "HdbscanParams", "Parameters of HDBSCAN (twinlearn/cluster/hdbscan.hpp).")
      .field("min_cluster_size", &tl::HdbscanParams::min_cluster_size, ">= 2")
      .field("cluster_selection_epsilon", &tl::HdbscanParams::cluster_selection_epsilon, ">= 0")
      .field("max_cluster_size", &tl::HdbscanParams::max_cluster_size, ">= 1, or 0 for no limit ('eom' only)")
      .enum_field("cluster_selection_method", &tl::HdbscanParams::leaf, parse_method, method_name, "'eom' or 'leaf'")
      .field("allow_single_cluster", &tl::HdbscanParams::allow_single_cluster, "allow a single cluster")
      .done();
  result_class<HdbscanFit>(m, "HdbscanFit", "Result of hdbscan_fit.")
      .field("labels", &HdbscanFit::labels, "n, int64: cluster id, or -1 for noise")
      .field("probabilities", &HdbscanFit::probabilities, "n, float64: membership strength")
      .field("core_distances", &HdbscanFit::core_distances, "n, float64: distance to the min_samples-th neighbour")
      .field("mst_src", &HdbscanFit::mst_src, "n - 1, int64: spanning-tree edge sources")
      .field("mst_dst", &HdbscanFit::mst_dst, "n - 1, int64: spanning-tree edge targets")
      .field("mst_weight", &HdbscanFit::mst_weight, "n - 1, float64: mutual-reachability weights")
      .done();

  // hdbscan_fit(ctx, X, metric, p, precomputed, min_samples, alpha, brute,
  // params) -> HdbscanFit. X: float64 rows (host), or the square distance
  // matrix with precomputed. brute: scikit-learn's brute path (core distances
  // from the distances divided by alpha; each edge's source is the row added
  // before it).
  m.def(
      "hdbscan_fit",
      [](const tl::Context& ctx, Arr X, const std::string& metric, double p, bool precomputed,
         std::int64_t min_samples, double alpha, bool brute, const tl::HdbscanParams& params) {
        auto xv = as_matrix<const double>(X, "X");
        if (!xv.on_host()) throw tl::ValueError("X: hdbscan_fit needs a host array");
        const std::int64_t n = xv.rows;
        if (!(alpha > 0.0)) throw tl::ValueError("The 'alpha' parameter of HDBSCAN must be > 0. Got " +
                                                 std::to_string(alpha) + " instead.");
        if (n < 2) throw tl::ValueError("n_samples=" + std::to_string(n) + " while HDBSCAN requires more than one sample");
        tl::Metric mt;
        if (!precomputed) {
          mt = tl::parse_metric(metric, p);
          mt.direct = true;
        }
        const std::size_t nn = static_cast<std::size_t>(n);
        double *cp = nullptr, *pp = nullptr, *wp = nullptr;
        std::int64_t *lp = nullptr, *sp = nullptr, *dp = nullptr;
        auto core = new_array<double>({nn}, &cp);
        auto prob = new_array<double>({nn}, &pp);
        auto labels = new_array<std::int64_t>({nn}, &lp);
        auto src = new_array<std::int64_t>({nn - 1}, &sp);
        auto dst = new_array<std::int64_t>({nn - 1}, &dp);
        auto w = new_array<double>({nn - 1}, &wp);
        {
          nb::gil_scoped_release release;
          if (precomputed) {
            tl::hdbscan_core_distances_precomputed(ctx, xv, min_samples, alpha, cp);
          } else {
            tl::hdbscan_core_distances(ctx, xv, mt, min_samples, cp);
            if (brute && alpha != 1.0)
              for (std::size_t i = 0; i < nn; ++i) cp[i] = cp[i] / alpha;
          }
          tl::hdbscan_mst(ctx, xv, mt, precomputed, cp, alpha, brute, sp, dp, wp);
          tl::hdbscan_labels(n, sp, dp, wp, params, lp, pp);
        }
        HdbscanFit r;
        r.labels = nb::cast(labels);
        r.probabilities = nb::cast(prob);
        r.core_distances = nb::cast(core);
        r.mst_src = nb::cast(src);
        r.mst_dst = nb::cast(dst);
        r.mst_weight = nb::cast(w);
        return r;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("metric"), nb::arg("p"), nb::arg("precomputed"), nb::arg("min_samples"),
      nb::arg("alpha"), nb::arg("brute"), nb::arg("params"));

  // hdbscan_tree(src, dst, weight, params) -> (labels, probabilities): step 3
  // from spanning-tree edges (the edges are sorted by a stable sort of their
  // weights, so edges given in sorted order keep it).
  m.def(
      "hdbscan_tree",
      [](HostI64 src, HostI64 dst, HostF64 w, const tl::HdbscanParams& params) {
        const std::int64_t ne = static_cast<std::int64_t>(src.shape(0));
        if (static_cast<std::int64_t>(dst.shape(0)) != ne || static_cast<std::int64_t>(w.shape(0)) != ne)
          throw tl::ValueError("src, dst and weight must have the same length");
        const std::size_t nn = static_cast<std::size_t>(ne + 1);
        double* pp = nullptr;
        std::int64_t* lp = nullptr;
        auto labels = new_array<std::int64_t>({nn}, &lp);
        auto prob = new_array<double>({nn}, &pp);
        {
          nb::gil_scoped_release release;
          tl::hdbscan_labels(ne + 1, src.data(), dst.data(), w.data(), params, lp, pp);
        }
        return nb::make_tuple(labels, prob);
      },
      nb::arg("src"), nb::arg("dst"), nb::arg("weight"), nb::arg("params"));
}
