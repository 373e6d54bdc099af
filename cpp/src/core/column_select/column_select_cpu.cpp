#include <algorithm>
#include <vector>

#include "core/column_select/column_select_impl.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

template <class T>
void column_select_cpu(const Context& ctx, MatrixView<const T> X, const std::int64_t* ranks, std::int64_t k, T* out) {
  using namespace select_detail;
  using K = key_t<T>;
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  const std::int64_t rows = X.rows, cols = X.cols;
  // One task per column: the column's keys, then nth_element for each wanted
  // rank in increasing order, each search confined to the part of the array
  // above the previous rank. Selection under a total order is exact.
  parallel_for(ctx, cols, [&](std::int64_t j) {
    std::vector<std::int64_t> want;
    for (std::int64_t r = 0; r < k; ++r)
      if (ranks[r * cols + j] >= 0) want.push_back(ranks[r * cols + j]);
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    std::vector<K> keys(static_cast<std::size_t>(want.empty() ? 0 : rows));
    if (!want.empty()) {
      for (std::int64_t i = 0; i < rows; ++i) keys[i] = to_key(X(i, j));
      auto lo = keys.begin();
      for (std::int64_t r : want) {
        std::nth_element(lo, keys.begin() + r, keys.end());
        lo = keys.begin() + r + 1;
      }
    }
    for (std::int64_t r = 0; r < k; ++r) {
      const std::int64_t q = ranks[r * cols + j];
      out[r * cols + j] = from_key<T>(q >= 0 ? keys[q] : ~K(0));
    }
  });
}

template void column_select_cpu<float>(const Context&, MatrixView<const float>, const std::int64_t*, std::int64_t,
                                       float*);
template void column_select_cpu<double>(const Context&, MatrixView<const double>, const std::int64_t*, std::int64_t,
                                        double*);

}  // namespace tl::detail
