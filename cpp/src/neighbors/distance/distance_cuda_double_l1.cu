// The L1, Linf, Lp families' distance kernels for double (templates: distance_cuda_impl.cuh).
#include "neighbors/distance/distance_cuda_impl.cuh"

TL_DISTANCE_CUDA_FAMILY(double, tl::dist::Family::L1)
TL_DISTANCE_CUDA_FAMILY(double, tl::dist::Family::Linf)
TL_DISTANCE_CUDA_FAMILY(double, tl::dist::Family::Lp)
