// What a CUDA backend file of a family usually needs, in one include: error
// checks, launch sizes and device memory, and the names it calls unqualified
// (a file in its own tl::<family>_detail namespace writes
// `using namespace tl::cuda_kit;`).
#pragma once
#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"

namespace tl::cuda_kit {
using tl::detail::blocks_for;
using tl::detail::DeviceBuffer;
using tl::detail::DeviceGuard;
using tl::detail::download_async;
using tl::detail::stage_to_device;
using tl::detail::upload_async;
}  // namespace tl::cuda_kit
