// Dispatch of the device array helpers (CUDA contexts only).
#include "linalg/staging/staging_impl.hpp"

#include "twinlearn/core/error.hpp"

namespace tl::linalg {

namespace {
[[noreturn]] void cpu_context() {
  throw ValueError("device arrays need a CUDA context; this one runs on the CPU");
}
}  // namespace

DeviceArray device_empty(const Context& ctx, std::size_t bytes) {
  return ctx.dispatch([&]() -> DeviceArray { cpu_context(); }, [&] { return detail::device_empty_cuda(ctx, bytes); });
}

DeviceArray device_copy(const Context& ctx, const void* host, std::size_t bytes) {
  TL_REQUIRE(host != nullptr || bytes == 0, ValueError, "device_copy: no data");
  return ctx.dispatch([&]() -> DeviceArray { cpu_context(); },
                      [&] { return detail::device_copy_cuda(ctx, host, bytes); });
}

}  // namespace tl::linalg
