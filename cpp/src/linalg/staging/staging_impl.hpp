// Backend entry points of twinlearn/linalg/staging.hpp.
#pragma once
#include "twinlearn/linalg/staging.hpp"

namespace tl::linalg::detail {
DeviceArray device_empty_cuda(const Context& ctx, std::size_t bytes);
DeviceArray device_copy_cuda(const Context& ctx, const void* host, std::size_t bytes);
}  // namespace tl::linalg::detail
