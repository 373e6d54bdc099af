// Exceptions raised by the core. The Python bindings map each type to one
// Python exception class (see python/bindings/module.cpp):
//   ValueError -> ValueError, TypeError -> TypeError, OutOfMemory -> MemoryError,
//   CudaError / NotAvailable / anything else -> RuntimeError.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

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
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace tl

// TL_REQUIRE(cond, ErrorType, message parts...): throw ErrorType when cond is false.
#define TL_REQUIRE(cond, Err, ...)                          \
  do {                                                      \
    if (!(cond)) throw Err(::tl::detail::concat(__VA_ARGS__)); \
  } while (0)
