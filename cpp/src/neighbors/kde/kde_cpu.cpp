// CPU backend of kernel density: the training rows packed in panels of 256
// (core/distance/distance_cpu.hpp), so panel 8c + s of chunk c holds lane
// l's s-th row in its column l; a block of query rows folds each panel's
// terms into its lane partials, then runs the lane tree per query.
#include <algorithm>
#include <vector>

#include "core/distance/distance_cpu.hpp"
#include "neighbors/kde/kde_impl.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {

template <class T>
void kde_chunk_partials_cpu(const Context& ctx, MatrixView<const T> train, const T* weights,
                            MatrixView<const T> queries, const kde::Params<T>& c, kde::Pass pass, const T* shift,
                            T* partials) {
  check_host_rows(queries, "X");
  static_assert(kPanel == kde::kLanes, "one panel column per lane");
  const PackedPanels<T> P = pack_panels(ctx, train, false);
  const BlockKernel<T> kernel = block_kernel<T>(kde::family_of(c.metric));
  const std::int64_t n = train.rows, d = queries.cols, m = queries.rows;
  const std::int64_t nchunks = reduce_num_chunks(n), nblocks = (m + kRowBlock - 1) / kRowBlock;
  const bool has_w = weights != nullptr;
  const T ident = kde::identity<T>(pass);
  parallel_for(ctx, nblocks, [&](std::int64_t b) {
    const std::int64_t r0 = b * kRowBlock, nr = std::min(kRowBlock, m - r0);
    std::vector<T> acc(static_cast<std::size_t>(kRowBlock * P.width));
    std::vector<T> lanes(static_cast<std::size_t>(kRowBlock * kde::kLanes));
    const T* x = queries.data + r0 * queries.row_stride;
    for (std::int64_t ch = 0; ch < nchunks; ++ch) {
      std::fill(lanes.begin(), lanes.end(), ident);
      for (std::int64_t s = 0; s < kde::kLaneLen; ++s) {
        const std::int64_t q = ch * kde::kLaneLen + s;
        if (q >= P.npanels) break;
        kernel(x, queries.row_stride, nr, P.panel(q), P.width, d, c.p, acc.data());
        const std::int64_t nc = P.rows_in(q), c0 = q * P.width;
        for (std::int64_t r = 0; r < nr; ++r) {
          const T sh = shift ? shift[r0 + r] : T(0);
          T* lr = lanes.data() + r * kde::kLanes;
          const T* ar = acc.data() + r * P.width;
          for (std::int64_t j = 0; j < nc; ++j) {
            const T w = has_w ? weights[c0 + j] : T(1);
            lr[j] = kde::merge(pass, lr[j], kde::term(c, pass, ar[j], has_w, w, sh));
          }
        }
      }
      for (std::int64_t r = 0; r < nr; ++r) {
        T* lr = lanes.data() + r * kde::kLanes;
        tree_reduce_inplace(lr, kde::kLanes, 1, [pass](T a, T b2) { return kde::merge(pass, a, b2); });
        partials[(r0 + r) * nchunks + ch] = lr[0];
      }
    }
  });
}

#define TL_INST(T)                                                                                              \
  template void kde_chunk_partials_cpu<T>(const Context&, MatrixView<const T>, const T*, MatrixView<const T>, \
                                          const kde::Params<T>&, kde::Pass, const T*, T*);
TL_INST(float)
TL_INST(double)
#undef TL_INST

}  // namespace tl::detail
