// Linear models: the Gram product, the host solves and the decision function.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "convert.hpp"
#include "twinlearn/core/gram.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"
#include "twinlearn/linear_model/linear_decision.hpp"
#include "twinlearn/linear_model/logistic.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

using HostMat = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using HostVec = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// gram's result: G (D x D float64) and the numeric mode the product delivered.
struct Gram {
  nb::object gram;
  std::string delivered;
};

// gram_moments' result: G, the columns' statistics and the mode delivered.
struct GramMoments {
  nb::object gram;
  nb::object stats;
  std::string delivered;
};

// solve_normal_equations' result: the coefficients and the core's NormalEquationsInfo.
struct NormalEquationsFit {
  nb::object coef;
  tl::NormalEquationsInfo info;
};

// symmetric_eigh's result.
struct Eigh {
  nb::object eigenvalues;
  nb::object eigenvectors;
};

using Method = tl::NormalEquationsOptions::Method;

Method parse_method(const std::string& s) {
  if (s == "auto") return Method::Auto;
  if (s == "eigen") return Method::Eigen;
  if (s == "nnls") return Method::Nnls;
  throw tl::ValueError("solve_normal_equations: unknown method '" + s + "'");
}

const char* method_name(Method m) {
  switch (m) {
    case Method::Auto: return "auto";
    case Method::Eigen: return "eigen";
    case Method::Nnls: return "nnls";
  }
  return "?";
}

// Host pointer to n entries of T from an optional host array of that dtype.
template <class T>
const T* host_ptr(const std::optional<Arr>& a, std::int64_t n, const char* name) {
  if (!a) return nullptr;
  auto v = as_vector<const T>(*a, name);
  if (!v.on_host()) throw tl::ValueError(std::string(name) + " must be a host (NumPy) array");
  if (v.size != n || !v.is_contiguous())
    throw tl::ValueError(std::string(name) + " must be a contiguous array of " + std::to_string(n) + " entries");
  return v.data;
}

// The targets Y beside X: none (0 columns) when absent.
template <class T>
tl::MatrixView<const T> optional_targets(const std::optional<Arr>& Y, const tl::MatrixView<const T>& xv) {
  if (Y) return as_matrix<const T>(*Y, "y");
  return tl::MatrixView<const T>(nullptr, xv.rows, 0, 0, 1, xv.device);
}

template <class T>
Gram gram_impl(const tl::Context& ctx, Arr X, std::optional<Arr> Y, std::optional<Arr> w, std::optional<Arr> offset,
               std::int64_t chunk) {
  auto xv = as_matrix<const T>(X, "X");
  auto yv = optional_targets<T>(Y, xv);
  auto wv = optional_vector<T>(w, "sample_weight");
  const std::int64_t D = xv.cols + yv.cols;
  const T* off = host_ptr<T>(offset, D, "offset");
  const auto uD = static_cast<std::size_t>(D);
  double* gp = nullptr;
  auto G = new_array<double>({uD, uD}, &gp);
  tl::NumericMode mode = tl::NumericMode::Identical;
  {
    nb::gil_scoped_release release;
    if (chunk > 0)
      tl::gram_with_chunk_for_testing<T>(ctx, xv, yv, wv, off, chunk, gp);
    else
      mode = tl::gram<T>(ctx, xv, yv, wv, off, gp);
  }
  return Gram{nb::cast(G), std::string(tl::to_string(mode))};
}

template <class T>
GramMoments gram_moments_impl(const tl::Context& ctx, Arr X, std::optional<Arr> Y, bool center) {
  auto xv = as_matrix<const T>(X, "X");
  auto yv = optional_targets<T>(Y, xv);
  const std::int64_t D = xv.cols + yv.cols;
  const auto uD = static_cast<std::size_t>(D);
  double* gp = nullptr;
  auto G = new_array<double>({uD, uD}, &gp);
  std::vector<tl::ColStat> st(uD);
  tl::NumericMode mode;
  {
    nb::gil_scoped_release release;
    mode = tl::gram_moments<T>(ctx, xv, yv, center, gp, st.data());
  }
  return GramMoments{nb::cast(G), nb::cast(colstats_array(st.data(), D)), std::string(tl::to_string(mode))};
}

}  // namespace

TL_BINDINGS(linear_model) {
  result_class<Gram>(m, "Gram", "Result of gram.")
      .field("gram", &Gram::gram, "D x D float64: Zcᵀ Zc for Z = [X | Y]")
      .field("delivered", &Gram::delivered, "the numeric mode the product delivered")
      .done();
  result_class<GramMoments>(m, "GramMoments", "Result of gram_moments.")
      .field("gram", &GramMoments::gram, "D x D float64")
      .field("stats", &GramMoments::stats, "5 x D float64, as column_stats' rows for each column of [X | Y]")
      .field("delivered", &GramMoments::delivered, "the numeric mode the product delivered")
      .done();
  params_class<tl::NormalEquationsOptions>(
      m, "NormalEquationsOptions", "Parameters of solve_normal_equations (twinlearn/linear_model/dense_solve.hpp).")
      .field("tol", &tl::NormalEquationsOptions::tol, "least squares: relative singular value cut-off; 0 for ridge")
      .field("gram_eps", &tl::NormalEquationsOptions::gram_eps, "relative accuracy of the Gram entries")
      .enum_field("method", &tl::NormalEquationsOptions::method, parse_method, method_name,
                  "'auto', 'eigen' or 'nnls'")
      .field("max_iter", &tl::NormalEquationsOptions::max_iter, "nnls outer iterations; 0: 3 * n_features")
      .done();
  result_class<NormalEquationsFit>(m, "NormalEquationsFit", "Result of solve_normal_equations.")
      .field("coef", &NormalEquationsFit::coef, "t x d float64")
      .computed("rank", [](const NormalEquationsFit& r) { return r.info.rank; }, "numerical rank of the system")
      .computed("cholesky", [](const NormalEquationsFit& r) { return r.info.cholesky; },
                "every target was solved by Cholesky")
      .computed("n_iter", [](const NormalEquationsFit& r) { return r.info.n_iter; }, "nnls iterations")
      .done();
  result_class<Eigh>(m, "Eigh", "Result of symmetric_eigh.")
      .field("eigenvalues", &Eigh::eigenvalues, "n, ascending")
      .field("eigenvectors", &Eigh::eigenvectors, "n x n (column i: eigenvalue i), or None")
      .done();
  params_class<tl::LogisticOptions>(m, "LogisticOptions",
                                    "Parameters of logistic_lbfgs (twinlearn/linear_model/logistic.hpp).")
      .field("n_classes", &tl::LogisticOptions::n_classes, ">= 2; two classes use one coefficient row")
      .field("fit_intercept", &tl::LogisticOptions::fit_intercept)
      .field("sum_weights", &tl::LogisticOptions::sum_weights, "S > 0")
      .field("l2", &tl::LogisticOptions::l2, "l2 penalty strength, >= 0")
      .field("l1", &tl::LogisticOptions::l1, "l1 penalty strength, >= 0 (OWL-QN when > 0)")
      .field("max_iter", &tl::LogisticOptions::max_iter)
      .field("gtol", &tl::LogisticOptions::gtol, "stop when max |(pseudo-)gradient| <= gtol")
      .field("gtol_converged", &tl::LogisticOptions::gtol_converged,
             "a run stopped by max_iter converged when the gradient is at most this; 0: gtol")
      .field("ftol", &tl::LogisticOptions::ftol, "stop when the relative decrease <= ftol")
      .field("memory", &tl::LogisticOptions::memory, "stored correction pairs")
      .field("max_linesearch", &tl::LogisticOptions::max_linesearch, "evaluations per line search")
      .done();
  result_class<tl::LogisticResult>(m, "LogisticResult", "Result of logistic_lbfgs.")
      .field("n_iter", &tl::LogisticResult::n_iter)
      .field("n_evals", &tl::LogisticResult::n_evals)
      .computed("status", [](const tl::LogisticResult& r) { return static_cast<int>(r.status); },
                "0 converged, 1 max_iter, 2 line search failed, 3 non-finite objective")
      .field("objective", &tl::LogisticResult::objective)
      .done();
  params_class<tl::linalg::EnetParams>(m, "EnetParams",
                                       "Parameters of enet_cd_gram (twinlearn/linear_model/dense_solve.hpp).")
      .field("l1", &tl::linalg::EnetParams::l1, "l1 penalty (alpha * l1_ratio * n_samples)")
      .field("l2", &tl::linalg::EnetParams::l2, "l2 penalty (alpha * (1 - l1_ratio) * n_samples)")
      .field("max_iter", &tl::linalg::EnetParams::max_iter, "sweeps")
      .field("tol", &tl::linalg::EnetParams::tol, "duality gap tolerance, relative to ||y||²")
      .field("positive", &tl::linalg::EnetParams::positive, "w >= 0")
      .field("random", &tl::linalg::EnetParams::random, "coordinates in the order of the Philox draws")
      .field("seed", &tl::linalg::EnetParams::seed, "of those draws")
      .done();
  result_class<tl::linalg::EnetResult>(m, "EnetResult", "Result of enet_cd_gram.")
      .field("n_iter", &tl::linalg::EnetResult::n_iter, "sweeps run")
      .field("gap", &tl::linalg::EnetResult::gap, "final duality gap (unscaled)")
      .field("tol", &tl::linalg::EnetResult::tol, "tol * ||y||²")
      .field("converged", &tl::linalg::EnetResult::converged)
      .done();

  // gram(ctx, X, Y=None, w=None, offset=None) -> Gram:
  // G = Zcᵀ Zc for Z = [X | Y], Zc = sqrt(w) * (Z - offset) (D x D float64).
  m.def(
      "gram",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> Y, std::optional<Arr> w, std::optional<Arr> offset) {
        return by_float_dtype(X, "X", [&](auto tag) {
          return gram_impl<decltype(tag)>(ctx, X, Y, w, offset, 0);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("Y").none() = nb::none(), nb::arg("w").none() = nb::none(),
      nb::arg("offset").none() = nb::none());

  // gram_moments(ctx, X, Y=None, center=True) -> GramMoments:
  // G = (Z - m)ᵀ (Z - m) (or ZᵀZ without center) for Z = [X | Y], m the
  // columns' means; stats (5 x D) as column_stats' (weight sum, mean, m2,
  // finite count, infinity count) for each column of Z.
  m.def(
      "gram_moments",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> Y, bool center) {
        return by_float_dtype(X, "X", [&](auto tag) { return gram_moments_impl<decltype(tag)>(ctx, X, Y, center); });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("Y").none() = nb::none(), nb::arg("center") = true);

  // The same product with another chunk size, CPU backend (separating tests only).
  m.def(
      "_gram_with_chunk",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> Y, std::optional<Arr> w, std::optional<Arr> offset,
         std::int64_t chunk) {
        if (chunk <= 0) throw tl::ValueError("chunk must be positive");
        return by_float_dtype(X, "X", [&](auto tag) {
          return gram_impl<decltype(tag)>(ctx, X, Y, w, offset, chunk);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("Y").none(), nb::arg("w").none(), nb::arg("offset").none(),
      nb::arg("chunk"));

  // solve_normal_equations(G, d, alpha, options: NormalEquationsOptions) -> NormalEquationsFit
  m.def(
      "solve_normal_equations",
      [](HostMat G, std::int64_t d, HostVec alpha, const tl::NormalEquationsOptions& opt) {
        const std::int64_t D = static_cast<std::int64_t>(G.shape(0));
        if (static_cast<std::int64_t>(G.shape(1)) != D || d < 0 || d > D)
          throw tl::ValueError("solve_normal_equations: G must be square with at least d rows");
        const std::int64_t t = D - d;
        if (static_cast<std::int64_t>(alpha.shape(0)) != t)
          throw tl::ValueError("solve_normal_equations: alpha must have one entry per target");
        double* cp = nullptr;
        auto coef = new_array<double>({static_cast<std::size_t>(t), static_cast<std::size_t>(d)}, &cp);
        NormalEquationsFit r;
        {
          nb::gil_scoped_release release;
          r.info = tl::solve_normal_equations(G.data(), d, t, alpha.data(), opt, cp);
        }
        r.coef = nb::cast(coef);
        return r;
      },
      nb::arg("G"), nb::arg("d"), nb::arg("alpha"), nb::arg("options"));

  // symmetric_eigh(A, vectors=False) -> Eigh (eigenvalues ascending; eigenvectors None unless vectors)
  m.def(
      "symmetric_eigh",
      [](HostMat A, bool vectors) {
        const std::int64_t n = static_cast<std::int64_t>(A.shape(0));
        if (static_cast<std::int64_t>(A.shape(1)) != n) throw tl::ValueError("symmetric_eigh: A must be square");
        const auto un = static_cast<std::size_t>(n);
        double* lp = nullptr;
        double* vp = nullptr;
        auto lam = new_array<double>({un}, &lp);
        Eigh r{nb::none(), nb::none()};
        if (vectors) r.eigenvectors = nb::cast(new_array<double>({un, un}, &vp));
        {
          nb::gil_scoped_release release;
          tl::linalg::symmetric_eigh(A.data(), n, lp, vp);
        }
        r.eigenvalues = nb::cast(lam);
        return r;
      },
      nb::arg("A"), nb::arg("vectors") = false);

  // linear_decision(ctx, X, coef (t, d), intercept (t,), out (n, t)) -> number of non-finite entries of X.
  // coef and intercept are host arrays of X's dtype.
  m.def(
      "linear_decision",
      [](const tl::Context& ctx, Arr X, Arr coef, Arr intercept, ArrW out) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto cv = as_matrix<const T>(coef, "coef");
          auto ov = as_matrix<T>(out, "out");
          if (!cv.on_host() || !cv.is_c_contiguous()) throw tl::ValueError("coef must be a C-contiguous host array");
          if (cv.cols != xv.cols)
            throw tl::ValueError("X has " + std::to_string(xv.cols) + " features, coef has " +
                                 std::to_string(cv.cols));
          const T* ip = host_ptr<T>(std::optional<Arr>(intercept), cv.rows, "intercept");
          nb::gil_scoped_release release;
          return tl::linear_decision<T>(ctx, xv, cv.data, ip, cv.rows, ov);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("coef"), nb::arg("intercept"), nb::arg("out"));

  // logistic_lbfgs(ctx, X, y (int32 class indices), w, W (rows, cols) float64 host, in/out,
  //                options: LogisticOptions) -> LogisticResult
  m.def(
      "logistic_lbfgs",
      [](const tl::Context& ctx, Arr X, Arr y, std::optional<Arr> w,
         nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> W, const tl::LogisticOptions& opt) {
        const std::int64_t rows = opt.n_classes == 2 ? 1 : opt.n_classes;
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto yv = as_vector<const std::int32_t>(y, "y");
          auto wv = optional_vector<T>(w, "sample_weight");
          if (static_cast<std::int64_t>(W.shape(0)) != rows ||
              static_cast<std::int64_t>(W.shape(1)) != xv.cols + (opt.fit_intercept ? 1 : 0))
            throw tl::ValueError("logistic_lbfgs: W has the wrong shape");
          nb::gil_scoped_release release;
          return tl::logistic_lbfgs<T>(ctx, xv, yv, wv, opt, W.data());
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("y"), nb::arg("w").none(), nb::arg("W"), nb::arg("options"));

  // logistic_proba(ctx, scores (n, 1 or K), log, out (n, 2 or K)): probabilities or their logarithms.
  m.def(
      "logistic_proba",
      [](const tl::Context& ctx, Arr scores, bool log, ArrW out) {
        by_float_dtype(scores, "scores", [&](auto tag) {
          using T = decltype(tag);
          auto sv = as_matrix<const T>(scores, "scores");
          auto ov = as_matrix<T>(out, "out");
          nb::gil_scoped_release release;
          tl::logistic_proba<T>(ctx, sv, log, ov);
        });
      },
      nb::arg("ctx"), nb::arg("scores"), nb::arg("log"), nb::arg("out"));

  // enet_cd_gram(G, d, target, params: EnetParams, w (d,) float64 in/out) -> EnetResult;
  // Q, q and y_norm2 are read from the augmented Gram G.
  m.def(
      "enet_cd_gram",
      [](HostMat G, std::int64_t d, std::int64_t target, const tl::linalg::EnetParams& p,
         nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu> w) {
        const std::int64_t D = static_cast<std::int64_t>(G.shape(0));
        if (static_cast<std::int64_t>(G.shape(1)) != D || d < 0 || target < 0 || d + target >= D)
          throw tl::ValueError("enet_cd_gram: bad Gram matrix or target index");
        if (static_cast<std::int64_t>(w.shape(0)) != d) throw tl::ValueError("enet_cd_gram: w must have d entries");
        std::vector<double> Q(static_cast<std::size_t>(d * d)), q(static_cast<std::size_t>(d));
        const double* g = G.data();
        for (std::int64_t i = 0; i < d; ++i) {
          for (std::int64_t j = 0; j < d; ++j) Q[i * d + j] = g[i * D + j];
          q[i] = g[i * D + d + target];
        }
        const double yy = g[(d + target) * D + d + target];
        nb::gil_scoped_release release;
        return tl::linalg::enet_coordinate_descent_gram(Q.data(), q.data(), yy, d, p, w.data());
      },
      nb::arg("G"), nb::arg("d"), nb::arg("target"), nb::arg("params"), nb::arg("w"));
}
