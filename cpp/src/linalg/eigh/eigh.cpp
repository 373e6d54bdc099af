// Validation and dispatch of tl::linalg::sym_eigh_device.
#include "linalg/eigh/eigh_impl.hpp"

namespace tl::linalg {

void sym_eigh_device(const Context& ctx, const double* A, std::int64_t d, double* w, double* V) {
  TL_REQUIRE(d >= 0, ValueError, "sym_eigh: negative size");
  TL_REQUIRE(d <= (std::int64_t(1) << 15), ValueError, "sym_eigh: d = ", d, " is larger than the device solver takes");
  TL_REQUIRE((A && w && V) || d == 0, ValueError, "sym_eigh: no data");
  if (d == 0) return;
  ctx.dispatch(
      [&] { throw NotAvailable("sym_eigh_device needs a CUDA context: the CPU backend diagonalizes with LAPACK"); },
      [&] { detail::sym_eigh_cuda(ctx, A, d, w, V); });
}

}  // namespace tl::linalg
