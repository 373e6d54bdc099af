#include <gtest/gtest.h>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/core/numeric_mode.hpp"
#include "twinlearn/core/parallel.hpp"

TEST(Context, ParsesDevices) {
  EXPECT_FALSE(tl::parse_device("cpu").is_cuda());
  EXPECT_EQ(tl::parse_device("cuda").id, 0);
  EXPECT_EQ(tl::parse_device("cuda:3").id, 3);
  EXPECT_TRUE(tl::parse_device("cuda:3").is_cuda());
  EXPECT_THROW(tl::parse_device("gpu"), tl::ValueError);
  EXPECT_THROW(tl::parse_device("cuda:"), tl::ValueError);
  EXPECT_THROW(tl::parse_device("cuda:x"), tl::ValueError);
  EXPECT_THROW(tl::parse_device("cuda:-1"), tl::ValueError);
}

TEST(Context, NumericModes) {
  EXPECT_EQ(tl::parse_numeric_mode("identical"), tl::NumericMode::Identical);
  EXPECT_THROW(tl::parse_numeric_mode("exact"), tl::ValueError);
  EXPECT_TRUE(tl::satisfies(tl::NumericMode::Identical, tl::NumericMode::Fast));
  EXPECT_FALSE(tl::satisfies(tl::NumericMode::Fast, tl::NumericMode::Deterministic));
}

TEST(Context, ThreadsDefaultToAllCores) {
  tl::Context c;
  EXPECT_GE(c.n_threads(), 1);
  c.set_n_threads(3);
  EXPECT_EQ(c.n_threads(), 3);
}

TEST(Context, DispatchRunsCpuOrRefusesCuda) {
  tl::Context cpu;
  EXPECT_EQ(cpu.dispatch([] { return 1; }, [] { return 2; }), 1);
#if !TWINLEARN_WITH_CUDA
  tl::Context gpu(tl::parse_device("cuda"), 1, tl::NumericMode::Fast, 0);
  EXPECT_THROW(gpu.dispatch([] { return 1; }, [] { return 2; }), tl::NotAvailable);
#endif
}

TEST(Parallel, ExceptionIsCarriedOutOfTheRegion) {
  for (int threads : {1, 2, 4}) {
    tl::Context c(tl::Device{}, threads, tl::NumericMode::Deterministic, 0);
    std::vector<int> done(100, 0);
    EXPECT_THROW(tl::parallel_for(c, 100,
                                  [&](std::int64_t i) {
                                    done[i] = 1;
                                    if (i == 37) throw tl::ValueError("boom");
                                  }),
                 tl::ValueError);
  }
}

TEST(Parallel, VisitsEveryIndexOnce) {
  tl::Context c(tl::Device{}, 3, tl::NumericMode::Deterministic, 0);
  std::vector<int> hits(1000, 0);
  tl::parallel_for(c, 1000, [&](std::int64_t i) { hits[i] += 1; });
  for (int h : hits) EXPECT_EQ(h, 1);
}

// NumPy calls a[:, None] (stride 0 on the new axis) and a[None, :] C-contiguous:
// the stride of an extent-1 dimension is never used. A real column slice is not.
TEST(MatrixView, ExtentOneStridesDoNotBreakContiguity) {
  double buf[12] = {};
  EXPECT_TRUE(tl::MatrixView<double>(buf, 12, 1, 1, 0, tl::Device{}).is_c_contiguous());
  EXPECT_TRUE(tl::MatrixView<double>(buf, 1, 12, 99, 1, tl::Device{}).is_c_contiguous());
  EXPECT_TRUE(tl::MatrixView<double>(buf, 4, 3, 3, 1, tl::Device{}).is_c_contiguous());
  EXPECT_FALSE(tl::MatrixView<double>(buf, 4, 2, 3, 1, tl::Device{}).is_c_contiguous());
  EXPECT_FALSE(tl::MatrixView<double>(buf, 3, 4, 1, 3, tl::Device{}).is_c_contiguous());
  EXPECT_FALSE(tl::MatrixView<double>(buf, 6, 1, 2, 1, tl::Device{}).is_c_contiguous());
}
