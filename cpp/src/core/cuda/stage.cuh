// Staging of inputs for the CUDA kernels of the reductions and the GEMM:
// a C-contiguous device pointer for any view the CUDA backend accepts.
//   - a C-contiguous device array is used in place;
//   - a host array is copied to the device, packed first when it is strided;
//   - a strided device array is refused (ValueError).
#pragma once
#include <cstdint>
#include <vector>

#include "core/cuda/memory.cuh"

namespace tl::detail {

template <class T>
struct StagedInput {
  DeviceBuffer<T> owned;
  std::vector<T> packed;  // host copy of a strided host view
  const T* data = nullptr;
};

template <class T>
StagedInput<T> stage_input(const Context& ctx, MatrixView<const T> m, const char* name) {
  StagedInput<T> s;
  if (m.size() == 0) return s;
  if (m.device.is_cuda()) {
    TL_REQUIRE(m.is_c_contiguous(), ValueError, name, ": the CUDA backend needs C-contiguous CUDA arrays");
    s.data = m.data;
    return s;
  }
  const T* src = m.data;
  if (!m.is_c_contiguous()) {
    s.packed.resize(static_cast<std::size_t>(m.size()));
    for (std::int64_t i = 0; i < m.rows; ++i)
      for (std::int64_t j = 0; j < m.cols; ++j) s.packed[i * m.cols + j] = m(i, j);
    src = s.packed.data();
  }
  s.owned = DeviceBuffer<T>(static_cast<std::size_t>(m.size()), ctx.device().id);
  TL_CUDA_CHECK(cudaMemcpyAsync(s.owned.data(), src, sizeof(T) * m.size(), cudaMemcpyHostToDevice, tl_stream(ctx)));
  s.data = s.owned.data();
  return s;
}

}  // namespace tl::detail
