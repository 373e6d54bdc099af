#include "twinlearn/core/context.hpp"

#include <omp.h>

#include <cctype>

namespace tl {

Device parse_device(const std::string& s) {
  if (s == "cpu") return Device{DeviceKind::CPU, 0};
  if (s == "cuda") return Device{DeviceKind::CUDA, 0};
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5) {
    const std::string num = s.substr(5);
    bool digits = num.size() <= 6;
    for (char c : num) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) return Device{DeviceKind::CUDA, std::stoi(num)};
  }
  throw ValueError("device must be 'cpu', 'cuda' or 'cuda:N'; got '" + s + "'");
}

int Context::n_threads() const {
  if (n_threads_ > 0) return n_threads_;
  const int n = omp_get_max_threads();
  return n > 0 ? n : 1;
}

}  // namespace tl
