// Validation and dispatch of tl::gp: fast mode on a CUDA context goes to
// cuSOLVER, everything else to the fixed-order host routines.
#include <algorithm>

#include "gaussian_process/cholesky/cholesky_impl.hpp"

namespace tl::gp {

namespace {

bool on_device_solver(const Context& ctx) { return ctx.is_cuda() && ctx.mode() == NumericMode::Fast; }

void check_sizes(const char* what, std::int64_t n, std::int64_t m) {
  TL_REQUIRE(n >= 0 && m >= 0, ValueError, what, ": negative size (n = ", n, ", m = ", m, ")");
}

}  // namespace

bool cholesky(const Context& ctx, double* A, std::int64_t n) {
  check_sizes("gp cholesky", n, 0);
  if (n == 0) return true;
  TL_REQUIRE(A != nullptr, ValueError, "gp cholesky: no data");
  if (on_device_solver(ctx)) {
    return ctx.dispatch([&] { return host::cholesky(ctx, A, n); }, [&] { return detail::cholesky_cuda(ctx, A, n); });
  }
  return host::cholesky(ctx, A, n);
}

void solve_lower(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m) {
  check_sizes("gp solve_lower", n, m);
  if (n == 0 || m == 0) return;
  host::solve_lower(ctx, U, n, B, m, false);
}

void cho_solve(const Context& ctx, const double* U, std::int64_t n, double* B, std::int64_t m) {
  check_sizes("gp cho_solve", n, m);
  if (n == 0 || m == 0) return;
  if (on_device_solver(ctx)) {
    ctx.dispatch([&] {}, [&] { detail::cho_solve_cuda(ctx, U, n, B, m); });
    return;
  }
  host::solve_lower(ctx, U, n, B, m, false);
  host::solve_upper(ctx, U, n, B, m);
}

void cho_inverse(const Context& ctx, const double* U, std::int64_t n, double* out) {
  check_sizes("gp cho_inverse", n, 0);
  if (n == 0) return;
  if (on_device_solver(ctx)) {
    ctx.dispatch([&] {}, [&] { detail::cho_inverse_cuda(ctx, U, n, out); });
    return;
  }
  std::fill(out, out + n * n, 0.0);
  for (std::int64_t i = 0; i < n; ++i) out[i * n + i] = 1.0;
  host::solve_lower(ctx, U, n, out, n, true);
  host::solve_upper(ctx, U, n, out, n);
}

}  // namespace tl::gp
