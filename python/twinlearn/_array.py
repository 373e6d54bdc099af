"""Array ingestion and output allocation.

Inputs may be NumPy arrays (any dtype, any order: converted as needed), or
device arrays passed zero-copy: anything with ``__dlpack__`` (CuPy arrays,
PyTorch CUDA tensors) or ``__cuda_array_interface__`` (through CuPy). Results
are returned in the caller's array type: NumPy in, NumPy out; CuPy in, CuPy
out; PyTorch in, PyTorch out.
"""

from __future__ import annotations

import numpy as np

FLOAT_DTYPES = (np.float64, np.float32)


def _module_root(x) -> str:
    return type(x).__module__.split(".")[0]


def kind(x) -> str:
    """'numpy', 'cupy', 'torch', 'cai' (other __cuda_array_interface__), or 'other'."""
    if isinstance(x, np.ndarray):
        return "numpy"
    root = _module_root(x)
    if root == "cupy":
        return "cupy"
    if root == "torch":
        return "torch"
    if hasattr(x, "__cuda_array_interface__"):
        return "cai"
    return "other"


def is_device_array(x) -> bool:
    k = kind(x)
    if k == "cupy" or k == "cai":
        return True
    if k == "torch":
        return x.device.type == "cuda"
    return False


def device_of(x) -> str:
    """'cpu' or 'cuda:N' for the memory an array lives in."""
    k = kind(x)
    if k == "cupy":
        return f"cuda:{x.device.id}"
    if k == "torch":
        return f"cuda:{x.device.index or 0}" if x.device.type == "cuda" else "cpu"
    if k == "cai":
        import cupy

        return f"cuda:{cupy.asarray(x).device.id}"
    return "cpu"


def _float_dtype_name(dt) -> str:
    """float32 stays float32; every other dtype computes in float64 (as scikit-learn)."""
    return "float32" if str(dt).endswith("float32") else "float64"


def as_device_matrix(x, name="X", ensure_2d=True):
    """A C-contiguous float32/float64 device array from a device array, zero-copy when it already is one."""
    k = kind(x)
    if k == "cai":
        import cupy

        x = cupy.asarray(x)
        k = "cupy"
    if k == "cupy":
        import cupy

        if x.dtype.kind == "c":
            raise ValueError(f"Complex data not supported in {name}")
        dt = np.float32 if x.dtype == np.float32 else np.float64
        x = cupy.ascontiguousarray(x, dtype=dt)
    elif k == "torch":
        import torch

        if x.is_complex():
            raise ValueError(f"Complex data not supported in {name}")
        dt = torch.float32 if x.dtype == torch.float32 else torch.float64
        x = x.detach().to(dt).contiguous()
    else:
        raise TypeError(f"{name}: unsupported array type {type(x).__name__}")
    if ensure_2d and x.ndim != 2:
        raise ValueError(
            f"Expected a 2D array for {name}, got {x.ndim}D with shape {tuple(x.shape)}. "
            "Reshape your data with array.reshape(-1, 1) for a single feature "
            "or array.reshape(1, -1) for a single sample."
        )
    return x


def to_numpy(x):
    """A NumPy copy (or view) of any supported array."""
    k = kind(x)
    if k == "numpy":
        return x
    if k in ("cupy", "cai"):
        import cupy

        return cupy.asnumpy(cupy.asarray(x))
    if k == "torch":
        return x.detach().cpu().numpy()
    return np.asarray(x)


def empty_like_kind(x, shape, dtype):
    """An uninitialised array of the same kind and device as x."""
    k = kind(x)
    dt = _float_dtype_name(dtype)
    if k in ("cupy", "cai"):
        import cupy

        with cupy.cuda.Device(int(device_of(x).split(":")[1])):
            return cupy.empty(shape, dtype=dt)
    if k == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dt), device=x.device)
    return np.empty(shape, dtype=dt)


def from_numpy_like(x, a):
    """Move the NumPy array a to the kind and device of x."""
    k = kind(x)
    if k in ("cupy", "cai"):
        import cupy

        with cupy.cuda.Device(int(device_of(x).split(":")[1])):
            return cupy.asarray(a)
    if k == "torch":
        import torch

        return torch.from_numpy(np.ascontiguousarray(a)).to(x.device)
    return a


def current_stream(x) -> int:
    """The caller's current CUDA stream for the array's library, as an integer (0 = default)."""
    k = kind(x)
    if k in ("cupy", "cai"):
        import cupy

        return int(cupy.cuda.get_current_stream().ptr)
    if k == "torch" and x.device.type == "cuda":
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    return 0


def _sum_is_finite(x) -> bool:
    """True when the sum of device array x is finite: then x holds no NaN and
    no infinity (either makes the sum NaN or infinite). One reduction pass,
    where looking for NaN and for infinity separately takes several."""
    if kind(x) == "torch":
        import torch

        return bool(torch.isfinite(x.sum()).item())
    import cupy

    return bool(cupy.isfinite(cupy.asarray(x).sum()))


def device_nonfinite(x) -> tuple[bool, bool]:
    """(any NaN, any infinity) in device array x. A finite sum answers both
    at once; otherwise (a non-finite value, or finite values whose sum
    overflows) each is looked for."""
    if _sum_is_finite(x):
        return False, False
    return _device_any_exact(x, "nan"), _device_any_exact(x, "inf")


def device_any(x, pred: str) -> bool:
    """True when any element of device array x is NaN ('nan') or infinite ('inf')."""
    return not _sum_is_finite(x) and _device_any_exact(x, pred)


def _device_any_exact(x, pred: str) -> bool:
    k = kind(x)
    if k == "torch":
        import torch

        f = torch.isnan if pred == "nan" else torch.isinf
        return bool(f(x).any().item())
    import cupy

    f = cupy.isnan if pred == "nan" else cupy.isinf
    return bool(f(cupy.asarray(x)).any())
