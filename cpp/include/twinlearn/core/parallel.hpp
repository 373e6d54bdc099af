// OpenMP helpers. Every parallel region names its thread count, and an
// exception thrown by any iteration is carried out of the region and rethrown
// on the calling thread (the first one thrown wins; the rest are dropped).
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>

#include "twinlearn/core/context.hpp"

namespace tl {

class ExceptionCarrier {
 public:
  template <class Fn>
  void run(Fn&& fn) noexcept {
    try {
      fn();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!ptr_) ptr_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (ptr_) std::rethrow_exception(ptr_);
  }

 private:
  std::mutex mu_;
  std::exception_ptr ptr_;
};

// fn(i) for i in [0, n) on ctx.n_threads() threads, static schedule. The
// result must not depend on which thread runs which i (the caller's promise).
template <class Fn>
void parallel_for(const Context& ctx, std::int64_t n, Fn&& fn) {
  // Never more threads than iterations; one iteration runs inline (starting a
  // thread team costs more than small work).
  const int nt = static_cast<int>(std::min<std::int64_t>(ctx.n_threads(), n));
  if (nt <= 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  ExceptionCarrier carrier;
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::int64_t i = 0; i < n; ++i) {
    carrier.run([&] { fn(i); });
  }
  carrier.rethrow();
}

}  // namespace tl
