// Linear models: the Gram product, the host solves and the decision function.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "convert.hpp"
#include "twinlearn/linear_model/dense_solve.hpp"
#include "twinlearn/core/gram.hpp"
#include "twinlearn/linear_model/linear_decision.hpp"
#include "twinlearn/linear_model/logistic.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

using HostMat = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using HostVec = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using NpArr = nb::ndarray<nb::numpy, double>;

NpArr numpy_of(std::vector<double>&& v, std::initializer_list<std::size_t> shape) {
  auto* heap = new std::vector<double>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return NpArr(heap->data(), shape.size(), shape.begin(), owner);
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

template <class T>
nb::tuple gram_impl(const tl::Context& ctx, Arr X, std::optional<Arr> Y, std::optional<Arr> w,
                    std::optional<Arr> offset, std::int64_t chunk) {
  auto xv = as_matrix<const T>(X, "X");
  tl::MatrixView<const T> yv(nullptr, xv.rows, 0, 0, 1, xv.device);
  if (Y) yv = as_matrix<const T>(*Y, "y");
  tl::VectorView<const T> wv;
  if (w) wv = as_vector<const T>(*w, "sample_weight");
  const std::int64_t D = xv.cols + yv.cols;
  const T* off = host_ptr<T>(offset, D, "offset");
  std::vector<double> out(static_cast<std::size_t>(D * D));
  tl::NumericMode mode = tl::NumericMode::Identical;
  {
    nb::gil_scoped_release release;
    if (chunk > 0)
      tl::gram_with_chunk_for_testing<T>(ctx, xv, yv, wv, off, chunk, out.data());
    else
      mode = tl::gram<T>(ctx, xv, yv, wv, off, out.data());
  }
  return nb::make_tuple(numpy_of(std::move(out), {static_cast<std::size_t>(D), static_cast<std::size_t>(D)}),
                        std::string(tl::to_string(mode)));
}

template <class T>
nb::tuple gram_moments_impl(const tl::Context& ctx, Arr X, std::optional<Arr> Y, bool center) {
  auto xv = as_matrix<const T>(X, "X");
  tl::MatrixView<const T> yv(nullptr, xv.rows, 0, 0, 1, xv.device);
  if (Y) yv = as_matrix<const T>(*Y, "y");
  const std::int64_t D = xv.cols + yv.cols;
  std::vector<double> out(static_cast<std::size_t>(D * D));
  std::vector<tl::ColStat> st(static_cast<std::size_t>(D));
  tl::NumericMode mode;
  {
    nb::gil_scoped_release release;
    mode = tl::gram_moments<T>(ctx, xv, yv, center, out.data(), st.data());
  }
  const auto uD = static_cast<std::size_t>(D);
  return nb::make_tuple(numpy_of(std::move(out), {uD, uD}), colstats_array(st.data(), D),
                        std::string(tl::to_string(mode)));
}

}  // namespace

void init_linear_model(nb::module_& m) {
  // gram(ctx, X, Y=None, w=None, offset=None) -> (G, delivered_mode):
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

  // gram_moments(ctx, X, Y=None, center=True) -> (G, stats, delivered_mode):
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

  // solve_normal_equations(G, d, alpha, tol, gram_eps, method, max_iter)
  //   -> (coef (t, d) float64, rank, cholesky, n_iter)
  m.def(
      "solve_normal_equations",
      [](HostMat G, std::int64_t d, HostVec alpha, double tol, double gram_eps, const std::string& method,
         std::int64_t max_iter) {
        const std::int64_t D = static_cast<std::int64_t>(G.shape(0));
        if (static_cast<std::int64_t>(G.shape(1)) != D || d < 0 || d > D)
          throw tl::ValueError("solve_normal_equations: G must be square with at least d rows");
        const std::int64_t t = D - d;
        if (static_cast<std::int64_t>(alpha.shape(0)) != t)
          throw tl::ValueError("solve_normal_equations: alpha must have one entry per target");
        tl::NormalEquationsOptions opt;
        opt.tol = tol;
        opt.gram_eps = gram_eps;
        opt.max_iter = max_iter;
        if (method == "auto")
          opt.method = tl::NormalEquationsOptions::Method::Auto;
        else if (method == "eigen")
          opt.method = tl::NormalEquationsOptions::Method::Eigen;
        else if (method == "nnls")
          opt.method = tl::NormalEquationsOptions::Method::Nnls;
        else
          throw tl::ValueError("solve_normal_equations: unknown method '" + method + "'");
        std::vector<double> coef(static_cast<std::size_t>(t * d));
        tl::NormalEquationsInfo info;
        {
          nb::gil_scoped_release release;
          info = tl::solve_normal_equations(G.data(), d, t, alpha.data(), opt, coef.data());
        }
        return nb::make_tuple(numpy_of(std::move(coef), {static_cast<std::size_t>(t), static_cast<std::size_t>(d)}),
                              info.rank, info.cholesky, info.n_iter);
      },
      nb::arg("G"), nb::arg("d"), nb::arg("alpha"), nb::arg("tol"), nb::arg("gram_eps"), nb::arg("method"),
      nb::arg("max_iter") = 0);

  // symmetric_eigh(A, vectors) -> (eigenvalues ascending, V or None)
  m.def(
      "symmetric_eigh",
      [](HostMat A, bool vectors) {
        const std::int64_t n = static_cast<std::int64_t>(A.shape(0));
        if (static_cast<std::int64_t>(A.shape(1)) != n) throw tl::ValueError("symmetric_eigh: A must be square");
        std::vector<double> lam(static_cast<std::size_t>(n)), V(static_cast<std::size_t>(vectors ? n * n : 0));
        {
          nb::gil_scoped_release release;
          tl::linalg::symmetric_eigh(A.data(), n, lam.data(), vectors ? V.data() : nullptr);
        }
        nb::object vo = nb::none();
        if (vectors) vo = nb::cast(numpy_of(std::move(V), {static_cast<std::size_t>(n), static_cast<std::size_t>(n)}));
        return nb::make_tuple(numpy_of(std::move(lam), {static_cast<std::size_t>(n)}), vo);
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

  // logistic_lbfgs(ctx, X, y (int32 class indices), w, W (rows, cols) float64 host, in/out, n_classes,
  //                fit_intercept, sum_weights, l2, l1, max_iter, gtol, gtol_converged)
  //   -> (n_iter, n_evals, status, objective)
  m.def(
      "logistic_lbfgs",
      [](const tl::Context& ctx, Arr X, Arr y, std::optional<Arr> w,
         nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> W, std::int64_t n_classes,
         bool fit_intercept, double sum_weights, double l2, double l1, std::int64_t max_iter, double gtol,
         double gtol_converged) {
        tl::LogisticOptions opt;
        opt.n_classes = n_classes;
        opt.fit_intercept = fit_intercept;
        opt.sum_weights = sum_weights;
        opt.l2 = l2;
        opt.l1 = l1;
        opt.max_iter = max_iter;
        opt.gtol = gtol;
        opt.gtol_converged = gtol_converged;
        const std::int64_t rows = n_classes == 2 ? 1 : n_classes;
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto yv = as_vector<const std::int32_t>(y, "y");
          tl::VectorView<const T> wv;
          if (w) wv = as_vector<const T>(*w, "sample_weight");
          if (static_cast<std::int64_t>(W.shape(0)) != rows ||
              static_cast<std::int64_t>(W.shape(1)) != xv.cols + (fit_intercept ? 1 : 0))
            throw tl::ValueError("logistic_lbfgs: W has the wrong shape");
          tl::LogisticResult r;
          {
            nb::gil_scoped_release release;
            r = tl::logistic_lbfgs<T>(ctx, xv, yv, wv, opt, W.data());
          }
          return nb::make_tuple(r.n_iter, r.n_evals, static_cast<int>(r.status), r.objective);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("y"), nb::arg("w").none(), nb::arg("W"), nb::arg("n_classes"),
      nb::arg("fit_intercept"), nb::arg("sum_weights"), nb::arg("l2"), nb::arg("l1"), nb::arg("max_iter"),
      nb::arg("gtol"), nb::arg("gtol_converged") = 0.0);

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

  // enet_cd_gram(G, d, target, l1, l2, max_iter, tol, positive, random, seed, w (d,) float64 in/out)
  //   -> (n_iter, gap, scaled tol, converged); Q, q and y_norm2 are read from the augmented Gram G.
  m.def(
      "enet_cd_gram",
      [](HostMat G, std::int64_t d, std::int64_t target, double l1, double l2, std::int64_t max_iter, double tol,
         bool positive, bool random, std::uint64_t seed,
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
        tl::linalg::EnetResult r;
        {
          nb::gil_scoped_release release;
          r = tl::linalg::enet_coordinate_descent_gram(Q.data(), q.data(), yy, d, l1, l2, max_iter, tol, positive,
                                                       random, seed, w.data());
        }
        return nb::make_tuple(r.n_iter, r.gap, r.tol, r.converged);
      },
      nb::arg("G"), nb::arg("d"), nb::arg("target"), nb::arg("l1"), nb::arg("l2"), nb::arg("max_iter"),
      nb::arg("tol"), nb::arg("positive"), nb::arg("random"), nb::arg("seed"), nb::arg("w"));
}
