#include "cluster/spectral/spectral_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
void spectral_normalize_cpu(const Context& ctx, MatrixView<const T> A, MatrixView<T> S, double* dd) {
  TL_REQUIRE(A.on_host() && S.on_host(), ValueError, "the CPU backend needs host arrays");
  TL_REQUIRE(A.is_c_contiguous(), ValueError, "SpectralClustering: the affinity matrix must be C-contiguous");
  const std::int64_t n = A.rows;
  parallel_for(ctx, n, [&](std::int64_t i) { dd[i] = spectral_sqrt_degree(spectral_degree(&A(i, 0), n, i)); });
  parallel_for(ctx, n, [&](std::int64_t i) {
    for (std::int64_t j = 0; j < n; ++j) S(i, j) = spectral_entry(A(i, j), dd[i], dd[j], i == j);
  });
}

template void spectral_normalize_cpu<float>(const Context&, MatrixView<const float>, MatrixView<float>, double*);
template void spectral_normalize_cpu<double>(const Context&, MatrixView<const double>, MatrixView<double>, double*);

}  // namespace tl::detail
