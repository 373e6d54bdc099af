// The forest's backend entry points (forest.cpp validates and dispatches).
#pragma once
#include <cstdint>

#include "ensemble/forest/forest_builder.hpp"
#include "twinlearn/ensemble/forest.hpp"

namespace tl::forest_detail {

// Scratch sizes of one tree, in elements.
TL_HD std::int64_t stats_size(std::int64_t class_sum, std::int64_t n_outputs) {
  return 4 * stat_width(class_sum, n_outputs) + class_sum;
}
// Values per node: n_outputs x n_classes (classification), n_outputs (regression).
template <class T>
TL_HD std::int64_t values_per_node(const TreeInput<T>& in) {
  return in.n_classes > 0 ? in.n_outputs * in.n_classes : in.n_outputs;
}
TL_HD std::int64_t node_capacity(std::int64_t rows) { return rows > 0 ? 2 * rows : 1; }

template <class T>
ForestTrees fit_cpu(const Context& ctx, const TreeInput<T>& in, const ForestParams& p);
template <class T>
ForestTrees fit_cuda(const Context& ctx, MatrixView<const T> X, const TreeInput<T>& in, const ForestParams& p);

template <class T>
void apply_cpu(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
               const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
               const double* threshold, std::int64_t* out);
template <class T>
void apply_cuda(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
                const double* threshold, std::int64_t* out);

// Appends tree t's nodes (n of them, in `o`) to f.
void append_tree(ForestTrees& f, const TreeOut& o, std::int64_t n, std::int64_t n_values);

}  // namespace tl::forest_detail
