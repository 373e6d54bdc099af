// Helpers shared by the C++ tests.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "twinlearn/core/runtime.hpp"

namespace tltest {

// True when a CUDA device is usable. Without one, CUDA tests skip, unless
// TWINLEARN_REQUIRE_GPU=1 (make test-gpu), where they fail instead. The test
// binary built without CUDA always skips them: the CUDA binary runs them.
inline bool gpu_or_skip_reason(std::string* why) {
  tl::CudaStatus s = tl::cuda_status();
  if (s.device_count > 0) return true;
  *why = s.compiled ? "no usable GPU: " + s.error : "built without CUDA";
  return false;
}

#define TL_REQUIRE_GPU_OR_SKIP()                                                       \
  do {                                                                                 \
    std::string why_;                                                                  \
    if (!::tltest::gpu_or_skip_reason(&why_)) {                                        \
      const char* req_ = std::getenv("TWINLEARN_REQUIRE_GPU");                         \
      if (TWINLEARN_WITH_CUDA && req_ && std::string(req_) == "1")                     \
        FAIL() << "GPU required but " << why_;                                         \
      GTEST_SKIP() << why_;                                                            \
    }                                                                                  \
  } while (0)

// The row count of a large fixture: n, or n / 8 (at least 500) when
// TWINLEARN_TEST_SMALL=1. compute-sanitizer's racecheck runs the CUDA
// identity tests 100-1000x slower than they run bare; tests/sanitize_gpu.py
// sets it for the steps that would not finish at full size. The rule under
// test is the same at either size; only the number of blocks is smaller.
inline std::int64_t rows(std::int64_t n) {
  const char* s = std::getenv("TWINLEARN_TEST_SMALL");
  if (!s || std::string(s) != "1") return n;
  return n / 8 > 500 ? n / 8 : (n < 500 ? n : 500);
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Data with a huge dynamic range: sequential and tree orders give different sums.
inline std::vector<double> hostile_column(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = nd(rng) * (rng() % 4 == 0 ? 1e8 : 1.0);
  return v;
}

}  // namespace tltest
