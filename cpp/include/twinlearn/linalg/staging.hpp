// Device arrays for callers without a device array library: a copy of a host
// buffer on the context's device, or uninitialised device memory. The memory
// comes from the caching allocator and goes back to it when the last copy of
// the handle is dropped. CUDA backend only (a CPU context raises ValueError).
#pragma once
#include <cstddef>
#include <memory>

#include "twinlearn/core/context.hpp"

namespace tl::linalg {

struct DeviceArray {
  std::shared_ptr<void> owner;  // keeps the memory alive
  void* data = nullptr;         // device pointer, bytes as asked
};

DeviceArray device_empty(const Context& ctx, std::size_t bytes);
DeviceArray device_copy(const Context& ctx, const void* host, std::size_t bytes);

}  // namespace tl::linalg
