// Floating-point classification by the bits, for CPU loops meant to
// vectorize: GCC does not vectorize a loop whose floating-point comparisons
// pick values (they may trap, under the default -ftrapping-math), while the
// same tests as integer operations on the bits vectorize. Host code only.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "twinlearn/core/numerics.hpp"

namespace tl::detail {

template <class T>
struct FloatBits {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static constexpr U kSign = U(1) << (8 * sizeof(T) - 1);
  static constexpr U kMagnitude = ~kSign;
  static constexpr U kInf = sizeof(T) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);

  static U bits(T v) {
    U b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  }
  static T value(U b) {
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
  // 1 or 0, as U (all-ones masks are 0 - these).
  static U is_finite(U b) { return U((b & kMagnitude) < kInf); }
  static U is_inf(U b) { return U((b & kMagnitude) == kInf); }
  static U is_nan(U b) { return U((b & kMagnitude) > kInf); }
  // num::canonical by the bits: a NaN becomes the canonical quiet NaN.
  static U canonical(U b) {
    const U nan = U(0) - is_nan(b);
    return (nan & bits(num::quiet_nan(T(0)))) | (~nan & b);
  }
};

}  // namespace tl::detail
