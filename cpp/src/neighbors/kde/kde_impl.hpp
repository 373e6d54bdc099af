// Backend entry points of kernel density (validated inputs only).
#pragma once
#include <cstdint>

#include "neighbors/kde/kde_common.hpp"

namespace tl::detail {

// partials[i * nchunks + c] = the chunk partial of query i over training
// chunk c (core/reduce.hpp's lanes and lane tree) of the pass's terms
// (kde::term); nchunks = reduce_num_chunks(n). shift: m host values (the
// Sum pass of a log kernel), else nullptr. weights: n host values or nullptr.
// partials: host memory.
template <class T>
void kde_chunk_partials_cpu(const Context& ctx, MatrixView<const T> train, const T* weights,
                            MatrixView<const T> queries, const kde::Params<T>& c, kde::Pass pass, const T* shift,
                            T* partials);
template <class T>
void kde_chunk_partials_cuda(const Context& ctx, MatrixView<const T> train, const T* weights,
                             MatrixView<const T> queries, const kde::Params<T>& c, kde::Pass pass, const T* shift,
                             T* partials);

}  // namespace tl::detail
