// The execution context: where and how a computation runs. Every public entry
// point takes one; dispatch to the CPU or CUDA implementation goes through it.
#pragma once
#include <cstdint>
#include <string>

#include "twinlearn/core/error.hpp"
#include "twinlearn/core/numeric_mode.hpp"

namespace tl {

enum class DeviceKind : int { CPU = 0, CUDA = 1 };

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int id = 0;  // CUDA ordinal; 0 for the CPU

  bool is_cuda() const { return kind == DeviceKind::CUDA; }
  std::string str() const { return is_cuda() ? "cuda:" + std::to_string(id) : "cpu"; }
  friend bool operator==(const Device& a, const Device& b) { return a.kind == b.kind && a.id == b.id; }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

// Parses "cpu", "cuda" (= "cuda:0") or "cuda:N".
Device parse_device(const std::string& s);

class Context {
 public:
  Context() = default;
  Context(Device device, int n_threads, NumericMode mode, std::uint64_t seed, std::uintptr_t stream = 0)
      : device_(device), n_threads_(n_threads), mode_(mode), seed_(seed), stream_(stream) {}

  const Device& device() const { return device_; }
  bool is_cuda() const { return device_.is_cuda(); }
  // Threads for CPU work: the value given, or all hardware threads when <= 0.
  int n_threads() const;
  NumericMode mode() const { return mode_; }
  std::uint64_t seed() const { return seed_; }
  // cudaStream_t as an integer (0 = the legacy default stream), so this
  // header compiles without the CUDA headers.
  std::uintptr_t stream() const { return stream_; }

  void set_device(Device d) { device_ = d; }
  void set_n_threads(int n) { n_threads_ = n; }
  void set_mode(NumericMode m) { mode_ = m; }
  void set_seed(std::uint64_t s) { seed_ = s; }
  void set_stream(std::uintptr_t s) { stream_ = s; }

  // Runs cpu() or cuda() according to the device. In a build without CUDA the
  // cuda branch is never instantiated and a CUDA context raises NotAvailable.
  template <class CpuFn, class CudaFn>
  decltype(auto) dispatch(CpuFn&& cpu, CudaFn&& cuda) const {
#if defined(TWINLEARN_WITH_CUDA) && TWINLEARN_WITH_CUDA
    if (is_cuda()) return cuda();
#else
    (void)cuda;
    if (is_cuda())
      throw NotAvailable("twinlearn was built without CUDA: the CUDA backend is not available in this module");
#endif
    return cpu();
  }

 private:
  Device device_{};
  int n_threads_ = 0;
  NumericMode mode_ = NumericMode::Deterministic;
  std::uint64_t seed_ = 0;
  std::uintptr_t stream_ = 0;
};

}  // namespace tl
