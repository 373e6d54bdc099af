// The Dot, L2 families' distance kernels for double (templates: distance_cuda_impl.cuh).
#include "neighbors/distance/distance_cuda_impl.cuh"

TL_DISTANCE_CUDA_FAMILY(double, tl::dist::Family::Dot)
TL_DISTANCE_CUDA_FAMILY(double, tl::dist::Family::L2)
