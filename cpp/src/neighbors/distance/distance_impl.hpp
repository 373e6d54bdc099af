// Backend entry points of pairwise distances and nearest neighbours
// (validated inputs only).
#pragma once
#include "core/distance/distance_cpu.hpp"

namespace tl::detail {

template <class T>
void pairwise_distances_cpu(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, Metric metric,
                            MatrixView<T> out);
template <class T>
void knn_search_cpu(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                    std::int64_t k, T* dist, std::int64_t* ind);

template <class T>
void pairwise_distances_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, Metric metric,
                             MatrixView<T> out);
template <class T>
void knn_search_cuda(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                     std::int64_t k, T* dist, std::int64_t* ind);

// Calls sink(row0, rows, block) for consecutive blocks of query rows, block
// being a host rows x n matrix (C order) of distances to every index row.
template <class T>
using DistanceBlockSink = void (*)(void* state, std::int64_t row0, std::int64_t rows, const T* block);
template <class T>
void distance_blocks_cpu(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                         DistanceBlockSink<T> sink, void* state);
template <class T>
void distance_blocks_cuda(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                          DistanceBlockSink<T> sink, void* state);

}  // namespace tl::detail
