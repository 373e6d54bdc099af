// Matrix products, row preparation and Gram matrices (twinlearn/linalg/*.hpp).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convert.hpp"
#include "twinlearn/core/gram.hpp"
#include "twinlearn/linalg/eigh.hpp"
#include "twinlearn/linalg/matmul.hpp"
#include "twinlearn/linalg/staging.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

// A host vector of T with `size` entries (offsets), or nullptr.
template <class T>
const T* host_offset(const std::optional<Arr>& a, std::int64_t size) {
  if (!a) return nullptr;
  auto v = as_vector<const T>(*a, "offset");
  TL_REQUIRE(v.on_host() && v.is_contiguous(), tl::ValueError, "offset must be a contiguous host (NumPy) array");
  TL_REQUIRE(v.size == size, tl::ValueError, "offset has ", v.size, " entries, X has ", size, " columns");
  return v.data;
}

// linalg_gram's result.
struct GramResult {
  nb::object G;           // d x d, float64 (NumPy)
  std::string delivered;  // the numeric mode the product delivered
};

// A C-contiguous matrix in device memory owned by the backend: NumPy input
// of a GPU computation copied once, or scratch space. It exports itself
// through DLPack (__dlpack__ / __dlpack_device__) as a legacy "dltensor"
// capsule, which every DLPack consumer (and nanobind, of any version) accepts.
struct DeviceMatrix {
  std::shared_ptr<tl::linalg::DeviceArray> array;
  std::int64_t shape[2] = {0, 0};
  nb::dlpack::dtype dtype;
  int device = 0;
};

// DLPack's DLManagedTensor, laid out as the DLPack ABI requires; the context
// keeps the allocation alive until the consumer calls the deleter.
struct ManagedTensor {
  nb::dlpack::dltensor tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor*);
};
struct ManagedContext {
  std::shared_ptr<tl::linalg::DeviceArray> array;
  std::int64_t shape[2];
  std::int64_t strides[2];
};

void delete_managed(ManagedTensor* m) {
  delete static_cast<ManagedContext*>(m->manager_ctx);
  delete m;
}

nb::object export_dlpack(const DeviceMatrix& a) {
  auto* ctx = new ManagedContext{a.array, {a.shape[0], a.shape[1]}, {a.shape[1], 1}};
  auto* m = new ManagedTensor{};
  m->tensor.data = a.array->data;
  m->tensor.device = nb::dlpack::device{2 /* kDLCUDA */, a.device};
  m->tensor.ndim = 2;
  m->tensor.dtype = a.dtype;
  m->tensor.shape = ctx->shape;
  m->tensor.strides = ctx->strides;
  m->manager_ctx = ctx;
  m->deleter = delete_managed;
  // A capsule still named "dltensor" when collected was never consumed: it
  // still owns the tensor. A consumer renames it "used_dltensor" and takes over.
  PyObject* cap = PyCapsule_New(m, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* mt = static_cast<ManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      if (mt && mt->deleter) mt->deleter(mt);
    }
  });
  if (!cap) {
    delete_managed(m);
    throw nb::python_error();
  }
  return nb::steal(cap);
}

nb::object device_ndarray(const tl::Context& ctx, tl::linalg::DeviceArray a, std::size_t rows, std::size_t cols,
                          nb::dlpack::dtype dtype) {
  DeviceMatrix d;
  d.array = std::make_shared<tl::linalg::DeviceArray>(std::move(a));
  d.shape[0] = static_cast<std::int64_t>(rows);
  d.shape[1] = static_cast<std::int64_t>(cols);
  d.dtype = dtype;
  d.device = ctx.device().id;
  return nb::cast(std::move(d));
}

std::size_t item_size(const std::string& dtype) {
  if (dtype == "float32") return sizeof(float);
  if (dtype == "float64") return sizeof(double);
  throw tl::TypeError("dtype must be float32 or float64, got " + dtype);
}

}  // namespace

TL_BINDINGS(linalg) {
  result_class<GramResult>(m, "GramResult", "Result of linalg_gram.")
      .field("G", &GramResult::G, "d x d float64 NumPy array")
      .field("delivered", &GramResult::delivered, "the numeric mode the product delivered")
      .done();
  nb::class_<DeviceMatrix>(m, "DeviceMatrix")
      .def_prop_ro("shape", [](const DeviceMatrix& a) { return nb::make_tuple(a.shape[0], a.shape[1]); })
      .def(
          "__dlpack__", [](const DeviceMatrix& a, nb::kwargs) { return export_dlpack(a); },
          "A DLPack capsule over the matrix (keywords of the protocol are accepted; the memory is never copied).")
      .def("__dlpack_device__", [](const DeviceMatrix& a) { return nb::make_tuple(2, a.device); });

  // linalg_matmul(ctx, A, transpose_a, B, transpose_b, out) -> delivered mode:
  // out = op(A) @ op(B). Canonical order except in fast mode on a GPU (cuBLAS).
  m.def(
      "linalg_matmul",
      [](const tl::Context& ctx, Arr A, bool transpose_a, Arr B, bool transpose_b, ArrW out) {
        TL_REQUIRE(A.ndim() == 2 && B.ndim() == 2 && out.ndim() == 2, tl::ValueError,
                   "matmul: A, B and out must be 2-D");
        return by_float_dtype(A, "A", [&](auto tag) -> std::string {
          using T = decltype(tag);
          auto av = as_matrix<const T>(A, "A");
          auto bv = as_matrix<const T>(B, "B");
          auto cv = as_matrix<T>(out, "out");
          nb::gil_scoped_release release;
          return tl::to_string(tl::linalg::matmul<T>(ctx, av, transpose_a, bv, transpose_b, cv));
        });
      },
      nb::arg("ctx"), nb::arg("A"), nb::arg("transpose_a"), nb::arg("B"), nb::arg("transpose_b"), nb::arg("out"));

  // linalg_prepare_rows(ctx, X, sample_weight, offset, transpose, out):
  // out = (X - offset) * sqrt(sample_weight) by rows, transposed on request.
  m.def(
      "linalg_prepare_rows",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> sample_weight, std::optional<Arr> offset, bool transpose,
         ArrW out) {
        TL_REQUIRE(X.ndim() == 2 && out.ndim() == 2, tl::ValueError, "prepare_rows: X and out must be 2-D");
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto ov = as_matrix<T>(out, "out");
          auto wv = optional_vector<T>(sample_weight, "sample_weight");
          const T* off = host_offset<T>(offset, xv.cols);
          nb::gil_scoped_release release;
          tl::linalg::prepare_rows<T>(ctx, xv, wv, off, transpose, ov);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("sample_weight").none(), nb::arg("offset").none(), nb::arg("transpose"),
      nb::arg("out"));

  // linalg_gram(ctx, X, sample_weight, offset) -> GramResult: G the d x d
  // Gram matrix of the prepared rows (tl::gram: the rows centred and weighted
  // in X's dtype, the products summed in double), a float64 NumPy array.
  m.def(
      "linalg_gram",
      [](const tl::Context& ctx, Arr X, std::optional<Arr> sample_weight, std::optional<Arr> offset) {
        TL_REQUIRE(X.ndim() == 2, tl::ValueError, "gram: X must be 2-D");
        const std::size_t d = X.shape(1);
        double* buf = nullptr;
        auto G = new_array<double>({d, d}, &buf);
        GramResult r;
        r.delivered = by_float_dtype(X, "X", [&](auto tag) -> std::string {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = optional_vector<T>(sample_weight, "sample_weight");
          const T* off = host_offset<T>(offset, xv.cols);
          const tl::MatrixView<const T> none(nullptr, xv.rows, 0, 0, 1, xv.device);
          nb::gil_scoped_release release;
          return tl::to_string(tl::gram<T>(ctx, xv, none, wv, off, buf));
        });
        r.G = nb::cast(G);
        return r;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("sample_weight").none(), nb::arg("offset").none());

  // linalg_sym_eigh(ctx, A, w, V): eigenvalues (ascending) into w and
  // eigenvectors (columns) into V of the symmetric float64 NumPy matrix A, by
  // cuSOLVER on ctx's GPU (tl::linalg::sym_eigh_device: fast mode only).
  m.def(
      "linalg_sym_eigh",
      [](const tl::Context& ctx, Arr A, ArrW w, ArrW V) {
        auto av = as_matrix<const double>(A, "A");
        auto wv = as_vector<double>(w, "w");
        auto vv = as_matrix<double>(V, "V");
        TL_REQUIRE(av.on_host() && wv.on_host() && vv.on_host(), tl::ValueError, "sym_eigh: host (NumPy) arrays only");
        TL_REQUIRE(av.rows == av.cols && av.is_c_contiguous(), tl::ValueError,
                   "sym_eigh: A must be a square C-contiguous matrix");
        TL_REQUIRE(wv.size == av.rows && wv.is_contiguous() && vv.rows == av.rows && vv.cols == av.rows &&
                       vv.is_c_contiguous(),
                   tl::ValueError, "sym_eigh: w and V must match A");
        nb::gil_scoped_release release;
        tl::linalg::sym_eigh_device(ctx, av.data, av.rows, wv.data, vv.data);
      },
      nb::arg("ctx"), nb::arg("A"), nb::arg("w"), nb::arg("V"));

  // linalg_to_device(ctx, X) -> a device copy of the C-contiguous 2-D host
  // array X on ctx's GPU, as a DLPack-capable array (for NumPy input to a
  // computation that reads X several times).
  m.def(
      "linalg_to_device",
      [](const tl::Context& ctx, Arr X) {
        TL_REQUIRE(X.ndim() == 2, tl::ValueError, "to_device: X must be 2-D");
        by_float_dtype(X, "X", [](auto) {});
        TL_REQUIRE(!device_of(X, "X").is_cuda(), tl::ValueError, "to_device: X must be a host array");
        TL_REQUIRE(X.stride(1) == 1 && (X.shape(0) <= 1 || X.stride(0) == static_cast<std::int64_t>(X.shape(1))),
                   tl::ValueError, "to_device: X must be C-contiguous");
        tl::linalg::DeviceArray a;
        {
          nb::gil_scoped_release release;
          a = tl::linalg::device_copy(ctx, X.data(), X.nbytes());
        }
        return device_ndarray(ctx, std::move(a), X.shape(0), X.shape(1), X.dtype());
      },
      nb::arg("ctx"), nb::arg("X"));

  // linalg_device_empty(ctx, rows, cols, dtype) -> uninitialised device array.
  m.def(
      "linalg_device_empty",
      [](const tl::Context& ctx, std::size_t rows, std::size_t cols, const std::string& dtype) {
        const std::size_t size = item_size(dtype);
        auto a = tl::linalg::device_empty(ctx, rows * cols * size);
        return device_ndarray(ctx, std::move(a), rows, cols,
                              size == sizeof(float) ? nb::dtype<float>() : nb::dtype<double>());
      },
      nb::arg("ctx"), nb::arg("rows"), nb::arg("cols"), nb::arg("dtype"));
}
