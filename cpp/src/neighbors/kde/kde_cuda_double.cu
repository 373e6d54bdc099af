// The CUDA backend of kernel density for double (kde_cuda_impl.cuh).
#include "neighbors/kde/kde_cuda_impl.cuh"

namespace tl::detail {
template void kde_chunk_partials_cuda<double>(const Context&, MatrixView<const double>, const double*, MatrixView<const double>,
                                          const kde::Params<double>&, kde::Pass, const double*, double*);
}  // namespace tl::detail
