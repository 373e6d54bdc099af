// CUDA nearest neighbours for float (templates: distance_cuda_impl.cuh).
#include "neighbors/distance/distance_cuda_impl.cuh"

TL_DISTANCE_CUDA_INST_KNN(float)
