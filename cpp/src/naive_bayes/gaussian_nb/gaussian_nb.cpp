#include "naive_bayes/gaussian_nb/gaussian_nb_common.hpp"

namespace tl {

template <class T>
void class_column_stats(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const std::int64_t* labels,
                        std::int64_t n_classes, ColStat* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0, ValueError, "class_column_stats: negative shape");
  TL_REQUIRE(n_classes >= 1, ValueError, "class_column_stats: n_classes must be at least 1, got ", n_classes);
  TL_REQUIRE(labels != nullptr || X.rows == 0, ValueError, "class_column_stats: no labels");
  TL_REQUIRE(out != nullptr || X.cols == 0, ValueError, "class_column_stats: no output buffer");
  check_placement(ctx, X, "X");
  if (w.data) {
    TL_REQUIRE(w.size == X.rows, ValueError, "sample_weight has ", w.size, " entries but X has ", X.rows, " rows");
    check_placement(ctx, w, "sample_weight");
  }
  for (std::int64_t i = 0; i < X.rows; ++i)
    TL_REQUIRE(labels[i] >= 0 && labels[i] < n_classes, ValueError, "class_column_stats: label ", labels[i], " of row ",
               i, " is outside [0, ", n_classes, ")");
  if (X.cols == 0) return;
  const detail::ClassLayout layout = detail::make_class_layout(labels, X.rows, n_classes);
  if (layout.n_chunks == 0) {
    for (std::int64_t e = 0; e < n_classes * X.cols; ++e) out[e] = ColStat{};
    return;
  }
  ctx.dispatch([&] { detail::class_column_stats_cpu(ctx, X, w, layout, n_classes, out); },
               [&] { detail::class_column_stats_cuda(ctx, X, w, layout, n_classes, out); });
}

template <class T>
void gaussian_nb_jll(const Context& ctx, MatrixView<const T> X, const double* theta, const double* var,
                     const double* joint, const double* nconst, std::int64_t n_classes, double* out) {
  TL_REQUIRE(X.rows >= 0 && X.cols >= 0, ValueError, "gaussian_nb_jll: negative shape");
  TL_REQUIRE(n_classes >= 1, ValueError, "gaussian_nb_jll: n_classes must be at least 1, got ", n_classes);
  TL_REQUIRE(theta && var && joint && nconst, ValueError, "gaussian_nb_jll: missing parameters");
  TL_REQUIRE(out != nullptr || X.rows == 0, ValueError, "gaussian_nb_jll: no output buffer");
  check_placement(ctx, X, "X");
  if (X.rows == 0) return;
  ctx.dispatch([&] { detail::gaussian_nb_jll_cpu(ctx, X, theta, var, joint, nconst, n_classes, out); },
               [&] { detail::gaussian_nb_jll_cuda(ctx, X, theta, var, joint, nconst, n_classes, out); });
}

namespace detail {

ClassLayout make_class_layout(const std::int64_t* labels, std::int64_t rows, std::int64_t n_classes) {
  ClassLayout L;
  L.class_start.assign(static_cast<std::size_t>(n_classes + 1), 0);
  for (std::int64_t i = 0; i < rows; ++i) ++L.class_start[labels[i] + 1];
  for (std::int64_t c = 0; c < n_classes; ++c) L.class_start[c + 1] += L.class_start[c];
  L.perm.resize(static_cast<std::size_t>(rows));
  std::vector<std::int64_t> next(L.class_start.begin(), L.class_start.end() - 1);
  for (std::int64_t i = 0; i < rows; ++i) L.perm[next[labels[i]]++] = i;
  L.chunk_base.assign(static_cast<std::size_t>(n_classes + 1), 0);
  for (std::int64_t c = 0; c < n_classes; ++c)
    L.chunk_base[c + 1] = L.chunk_base[c] + colstats_num_chunks(L.class_start[c + 1] - L.class_start[c]);
  L.n_chunks = L.chunk_base[n_classes];
  L.chunk_class.resize(static_cast<std::size_t>(L.n_chunks));
  for (std::int64_t c = 0; c < n_classes; ++c)
    for (std::int64_t t = L.chunk_base[c]; t < L.chunk_base[c + 1]; ++t)
      L.chunk_class[t] = static_cast<std::int32_t>(c);
  return L;
}

}  // namespace detail

template void class_column_stats<float>(const Context&, MatrixView<const float>, VectorView<const float>,
                                        const std::int64_t*, std::int64_t, ColStat*);
template void class_column_stats<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                         const std::int64_t*, std::int64_t, ColStat*);
template void gaussian_nb_jll<float>(const Context&, MatrixView<const float>, const double*, const double*,
                                     const double*, const double*, std::int64_t, double*);
template void gaussian_nb_jll<double>(const Context&, MatrixView<const double>, const double*, const double*,
                                      const double*, const double*, std::int64_t, double*);

}  // namespace tl
