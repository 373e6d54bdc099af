// Validation and dispatch of the spectral normalization; the check of the
// degrees both backends share.
#include <cmath>

#include "cluster/spectral/spectral_common.hpp"

namespace tl {

template <class T>
void spectral_normalize(const Context& ctx, MatrixView<const T> A, MatrixView<T> S, double* dd) {
  TL_REQUIRE(A.rows == A.cols, ValueError, "SpectralClustering: the affinity matrix must be square, got (", A.rows,
             ", ", A.cols, ")");
  TL_REQUIRE(S.rows == A.rows && S.cols == A.cols, ValueError, "SpectralClustering: output shape (", S.rows, ", ",
             S.cols, ") does not match the affinity's (", A.rows, ", ", A.cols, ")");
  check_placement(ctx, A, "A");
  check_placement(ctx, S, "S");
  if (A.rows == 0) return;
  ctx.dispatch([&] { detail::spectral_normalize_cpu(ctx, A, S, dd); },
               [&] { detail::spectral_normalize_cuda(ctx, A, S, dd); });
  for (std::int64_t i = 0; i < A.rows; ++i)
    TL_REQUIRE(std::isfinite(dd[i]), ValueError,
               "SpectralClustering: the affinity matrix must be finite with "
               "non-negative row sums; row ",
               i, " sums to ", dd[i] * dd[i] * (dd[i] < 0 ? -1 : 1));
}

template void spectral_normalize<float>(const Context&, MatrixView<const float>, MatrixView<float>, double*);
template void spectral_normalize<double>(const Context&, MatrixView<const double>, MatrixView<double>, double*);

}  // namespace tl
