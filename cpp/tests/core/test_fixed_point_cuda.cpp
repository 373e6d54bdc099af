// CPU versus CUDA identity of the fixed-point histograms. Compiled into both
// test binaries; skips (or fails under TWINLEARN_REQUIRE_GPU=1) without a GPU.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "../test_util.hpp"
#include "twinlearn/core/fixed_point.hpp"

namespace {

tl::Context cpu_ctx() { return tl::Context(tl::Device{}, 3, tl::NumericMode::Identical, 0); }
tl::Context gpu_ctx() { return tl::Context(tl::parse_device("cuda:0"), 0, tl::NumericMode::Identical, 0); }

template <class T>
void check(std::int64_t rows, std::int64_t nv, std::int64_t n_bins) {
  std::mt19937_64 rng(rows * 131 + nv * 7 + n_bins);
  std::normal_distribution<double> nd;
  std::vector<T> values(static_cast<std::size_t>(rows * nv));
  for (auto& v : values) v = static_cast<T>(nd(rng) * (rng() % 5 == 0 ? 1e3 : 1e-2));
  std::vector<std::int32_t> bins(static_cast<std::size_t>(rows));
  for (auto& b : bins) b = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(n_bins));
  tl::MatrixView<const T> V(values.data(), rows, nv);
  tl::VectorView<const std::int32_t> B(bins.data(), rows);
  const tl::FixedScale s = tl::fixed_point_scale_for<T>(cpu_ctx(), V);
  EXPECT_EQ(s.exponent, tl::fixed_point_scale_for<T>(gpu_ctx(), V).exponent);
  std::vector<std::int64_t> a(static_cast<std::size_t>(n_bins * nv)), b(a.size());
  tl::fixed_histogram<T>(cpu_ctx(), V, B, n_bins, s, a.data());
  tl::fixed_histogram<T>(gpu_ctx(), V, B, n_bins, s, b.data());
  EXPECT_EQ(a, b) << "rows=" << rows << " nv=" << nv << " n_bins=" << n_bins;
}

}  // namespace

TEST(FixedPointCuda, HistogramIdenticalToCpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t rows : {1, 7, 1000, 100003, 1000000}) {
    check<double>(rows, 1, 1);
    check<float>(rows, 2, 64);
    check<double>(rows, 2, 255);
    check<float>(rows, 2, 5000);  // 80 KB of bins: global atomics, no shared histogram
  }
}

TEST(FixedPointCuda, ErrorsAreRaisedOnGpu) {
  TL_REQUIRE_GPU_OR_SKIP();
  const std::int64_t n = 5000;
  std::vector<double> v(n, 1.0);
  std::vector<std::int32_t> bins(n, 0);
  std::vector<std::int64_t> out(4);
  tl::MatrixView<const double> V(v.data(), n, 1);
  tl::VectorView<const std::int32_t> B(bins.data(), n);
  const tl::FixedScale s = tl::fixed_point_scale(1.0, n);
  EXPECT_NO_THROW(tl::fixed_histogram<double>(gpu_ctx(), V, B, 4, s, out.data()));
  EXPECT_EQ(out[0], n * tl::fixed_quantize(1.0, s));
  EXPECT_THROW(tl::fixed_histogram<double>(gpu_ctx(), V, B, 4, tl::FixedScale{s.exponent + 1}, out.data()),
               tl::ValueError);
  bins[100] = 4;
  EXPECT_THROW(tl::fixed_histogram<double>(gpu_ctx(), V, B, 4, s, out.data()), tl::ValueError);
  bins[100] = 0;
  v[9] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(tl::fixed_histogram<double>(gpu_ctx(), V, B, 4, s, out.data()), tl::ValueError);
}
