// GaussianNB math shared by both backends, and the class layout used by the
// segmented statistics.
#pragma once
#include <cstdint>
#include <vector>

#include "twinlearn/core/lane_reduce.hpp"
#include "twinlearn/core/numerics.hpp"
#include "twinlearn/naive_bayes/gaussian_nb.hpp"

namespace tl::detail {

// Rows grouped by class, in increasing row order within each class (a stable
// counting sort of the labels), and the canonical chunks of every class.
struct ClassLayout {
  std::vector<std::int64_t> perm;         // rows entries: row indices, class by class
  std::vector<std::int64_t> class_start;  // n_classes + 1 offsets into perm
  std::vector<std::int64_t> chunk_base;   // n_classes + 1 offsets into the chunk list
  std::vector<std::int32_t> chunk_class;  // total chunks entries
  std::int64_t n_chunks = 0;
};

ClassLayout make_class_layout(const std::int64_t* labels, std::int64_t rows, std::int64_t n_classes);

// One term of S: (x - theta)^2 / var.
TL_HD double jll_term(double x, double theta, double var) {
  const double d = tl::num::sub(x, theta);
  return tl::num::div(tl::num::mul(d, d), var);
}

TL_HD double jll_finish(double s, double joint, double nconst) {
  return tl::num::add(joint, tl::num::sub(nconst, tl::num::mul(0.5, s)));
}

template <class T>
void class_column_stats_cpu(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const ClassLayout& layout,
                            std::int64_t n_classes, ColStat* out);
template <class T>
void class_column_stats_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w,
                             const ClassLayout& layout, std::int64_t n_classes, ColStat* out);
template <class T>
void gaussian_nb_jll_cpu(const Context& ctx, MatrixView<const T> X, const double* theta, const double* var,
                         const double* joint, const double* nconst, std::int64_t n_classes, double* out);
template <class T>
void gaussian_nb_jll_cuda(const Context& ctx, MatrixView<const T> X, const double* theta, const double* var,
                          const double* joint, const double* nconst, std::int64_t n_classes, double* out);

}  // namespace tl::detail
