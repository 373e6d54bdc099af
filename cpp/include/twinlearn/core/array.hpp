// Non-owning typed array views. A view says where its memory lives (host or a
// CUDA device); strides are in elements, so a view can describe C-order,
// F-order or sliced data. Kernels that need contiguous rows check is_c_contiguous().
#pragma once
#include <cstddef>
#include <cstdint>

#include "twinlearn/core/context.hpp"
#include "twinlearn/core/error.hpp"

namespace tl {

enum class DType : int { Float32 = 0, Float64 = 1, Int32 = 2, Int64 = 3, UInt8 = 4 };

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::UInt8; };

inline const char* to_string(DType d) {
  switch (d) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
  }
  return "?";
}

// A 2-D view: rows x cols elements of T at data, element (i, j) at
// data[i * row_stride + j * col_stride]. A 1-D array is a view with cols == 1.
template <class T>
struct MatrixView {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t row_stride = 0;  // elements
  std::int64_t col_stride = 1;  // elements
  Device device{};

  MatrixView() = default;
  MatrixView(T* d, std::int64_t r, std::int64_t c, Device dev = Device{})
      : data(d), rows(r), cols(c), row_stride(c), col_stride(1), device(dev) {}
  MatrixView(T* d, std::int64_t r, std::int64_t c, std::int64_t rs, std::int64_t cs, Device dev)
      : data(d), rows(r), cols(c), row_stride(rs), col_stride(cs), device(dev) {}

  std::int64_t size() const { return rows * cols; }
  bool empty() const { return rows == 0 || cols == 0; }
  bool on_host() const { return !device.is_cuda(); }
  // Strides of extent-1 dimensions never matter (NumPy: a[:, None] is C-contiguous).
  bool is_c_contiguous() const { return (col_stride == 1 || cols <= 1) && (row_stride == cols || rows <= 1); }
  T& operator()(std::int64_t i, std::int64_t j) const { return data[i * row_stride + j * col_stride]; }
  MatrixView<const T> as_const() const {
    return MatrixView<const T>(data, rows, cols, row_stride, col_stride, device);
  }
};

template <class T>
struct VectorView {
  T* data = nullptr;
  std::int64_t size = 0;
  std::int64_t stride = 1;
  Device device{};

  VectorView() = default;
  VectorView(T* d, std::int64_t n, Device dev = Device{}) : data(d), size(n), stride(1), device(dev) {}
  VectorView(T* d, std::int64_t n, std::int64_t s, Device dev) : data(d), size(n), stride(s), device(dev) {}
  bool on_host() const { return !device.is_cuda(); }
  bool is_contiguous() const { return stride == 1 || size <= 1; }
  T& operator[](std::int64_t i) const { return data[i * stride]; }
};

// Checks that a view lives where the context runs, or on the host (which the
// CUDA backend copies in). Device arrays on another GPU are refused.
template <class V>
void check_placement(const Context& ctx, const V& v, const char* name) {
  if (v.device.is_cuda()) {
    TL_REQUIRE(ctx.is_cuda(), ValueError, name, " is a CUDA array but the estimator runs on the CPU; ",
               "use device='cuda' or pass a NumPy array");
    TL_REQUIRE(v.device.id == ctx.device().id, ValueError, name, " is on ", v.device.str(),
               " but the computation runs on ", ctx.device().str());
  }
}

}  // namespace tl
