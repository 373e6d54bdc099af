// The CUDA backend of kernel density for float (kde_cuda_impl.cuh).
#include "neighbors/kde/kde_cuda_impl.cuh"

namespace tl::detail {
template void kde_chunk_partials_cuda<float>(const Context&, MatrixView<const float>, const float*, MatrixView<const float>,
                                          const kde::Params<float>&, kde::Pass, const float*, float*);
}  // namespace tl::detail
