// CPU backend of tl::linear_decision: one task per block of 256 rows; each
// output is its own fma chain over the features in increasing order.
#include <algorithm>
#include <vector>

#include "linear_model/linear_decision/linear_decision_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
std::int64_t linear_decision_cpu(const Context& ctx, MatrixView<const T> X, const T* coef, const T* intercept,
                                 std::int64_t t, MatrixView<T> out) {
  TL_REQUIRE(X.on_host() && out.on_host(), ValueError, "the CPU backend needs host arrays");
  const std::int64_t n = X.rows, d = X.cols, block = 256, nblocks = (n + block - 1) / block;
  std::vector<std::int64_t> bad(static_cast<std::size_t>(nblocks), 0);
  parallel_for(ctx, nblocks, [&](std::int64_t b) {
    std::int64_t nb = 0;
    const std::int64_t r1 = std::min(n, (b + 1) * block);
    for (std::int64_t i = b * block; i < r1; ++i) {
      for (std::int64_t j = 0; j < d; ++j) nb += non_finite(X(i, j));
      for (std::int64_t c = 0; c < t; ++c) {
        const T* w = coef + c * d;
        T acc = T(0);
        for (std::int64_t j = 0; j < d; ++j) acc = num::fma(X(i, j), w[j], acc);
        if (intercept) acc = num::add(acc, intercept[c]);
        out(i, c) = num::canonical(acc);
      }
    }
    bad[b] = nb;
  });
  std::int64_t total = 0;
  for (std::int64_t v : bad) total += v;
  return total;
}

template std::int64_t linear_decision_cpu<float>(const Context&, MatrixView<const float>, const float*,
                                                 const float*, std::int64_t, MatrixView<float>);
template std::int64_t linear_decision_cpu<double>(const Context&, MatrixView<const double>, const double*,
                                                  const double*, std::int64_t, MatrixView<double>);

}  // namespace tl::detail
