// Exceptions raised by the core. The Python bindings map each type to one
// Python exception class (see python/bindings/module.cpp):
//   ValueError -> ValueError, TypeError -> TypeError, OutOfMemory -> MemoryError,
//   CudaError / NotAvailable / anything else -> RuntimeError.
#pragma once
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tl {

struct ValueError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
struct TypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct OutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A backend that exists in the API but not in this build or on this machine.
struct NotAvailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
// Message building without iostreams (no locale state on error paths).
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, char v) { s += v; }
template <class T>
void append(std::string& s, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    s += v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    s += std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(v));
    s += buf;
  } else {
    static_assert(std::is_convertible_v<T, std::string>, "unsupported message part");
    s += std::string(v);
  }
}
template <class... Args>
std::string concat(const Args&... args) {
  std::string s;
  (append(s, args), ...);
  return s;
}
}  // namespace detail

}  // namespace tl

// TL_REQUIRE(cond, ErrorType, message parts...): throw ErrorType when cond is false.
#define TL_REQUIRE(cond, Err, ...)                          \
  do {                                                      \
    if (!(cond)) throw Err(::tl::detail::concat(__VA_ARGS__)); \
  } while (0)
