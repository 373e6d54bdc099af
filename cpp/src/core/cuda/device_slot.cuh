// One object per CUDA device, created on first use and kept for the process
// (library handles: cuBLAS, cuSOLVER), each with the mutex that serialises
// work on it.
#pragma once
#include <mutex>
#include <vector>

#include "twinlearn/core/error.hpp"

namespace tl::detail {

template <class H>
struct DeviceSlot {
  std::mutex mu;
  H h{};
};

// The slot of `device` for objects of type H (one table per H).
template <class H>
DeviceSlot<H>& device_slot(int device) {
  static std::mutex mu;
  static auto* slots = new std::vector<DeviceSlot<H>*>();  // never destroyed: handles outlive static teardown
  std::lock_guard<std::mutex> lock(mu);
  TL_REQUIRE(device >= 0, ValueError, "device ordinal ", device, " is out of range");
  if (device >= static_cast<int>(slots->size())) slots->resize(device + 1, nullptr);
  DeviceSlot<H>*& s = (*slots)[device];
  if (!s) s = new DeviceSlot<H>();
  return *s;
}

}  // namespace tl::detail
