// The Dot family's distance kernels for float (templates: distance_cuda_impl.cuh).
#include "neighbors/distance/distance_cuda_impl.cuh"

TL_DISTANCE_CUDA_FAMILY(float, tl::dist::Family::Dot)
