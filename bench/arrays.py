"""Moving benchmark data between NumPy, CuPy and PyTorch, and synchronizing
the GPU around timed calls. Optional libraries are imported on first use."""

from __future__ import annotations

import gc
import importlib

import numpy as np


def optional_import(name: str):
    """The module, or None when it cannot be imported."""
    try:
        return importlib.import_module(name)
    except Exception:  # ImportError, or a library that fails while loading its GPU runtime
        return None


def torch_cuda_usable() -> bool:
    torch = optional_import("torch")
    return torch is not None and torch.cuda.is_available()


def cupy_usable() -> bool:
    cupy = optional_import("cupy")
    if cupy is None:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def device_input_kind() -> str | None:
    """The array library for 'data already on the device': CuPy, else PyTorch."""
    if cupy_usable():
        return "cupy"
    if torch_cuda_usable():
        return "torch"
    return None


def to_input(a, kind: str, device: str):
    """Host array `a` as the contender's input kind ('numpy', 'cupy', 'torch')."""
    if kind == "numpy" or not isinstance(a, np.ndarray):
        return a
    if kind == "cupy":
        import cupy

        return cupy.asarray(a)
    if kind == "torch":
        import torch

        t = torch.from_numpy(a)
        return t if device == "cpu" else t.to(device)
    raise ValueError(f"unknown input kind {kind!r}")


def to_host(x):
    """NumPy from NumPy, CuPy, PyTorch, cuDF-like objects, or tuples of them."""
    if x is None or isinstance(x, np.ndarray):
        return x
    if isinstance(x, tuple):
        return tuple(to_host(v) for v in x)
    root = type(x).__module__.split(".")[0]
    if root == "cupy":
        return x.get()
    if root == "torch":
        return x.detach().cpu().numpy()
    if hasattr(x, "to_numpy"):
        return x.to_numpy()
    return np.asarray(x)


class DeviceSync:
    """Waits for all queued GPU work of the process (cudaDeviceSynchronize,
    through whichever library is at hand); a no-op on a CPU benchmark."""

    def __init__(self, device: str):
        self.method = "none"
        self._fn = lambda: None
        if device == "cpu":
            return
        if torch_cuda_usable():
            import torch

            self.method, self._fn = "torch.cuda.synchronize", torch.cuda.synchronize
        elif cupy_usable():
            import cupy

            self.method, self._fn = "cupy deviceSynchronize", cupy.cuda.runtime.deviceSynchronize
        else:
            from twinlearn import _backend

            mod = _backend.cuda()
            ctx = mod.Context(device, 0, "fast", 0, 0)
            self.method, self._fn = "twinlearn synchronize", lambda: mod.synchronize(ctx)

    def __call__(self):
        self._fn()


def release_device_memory(device: str):
    """Return cached device memory of every library in use, so that one
    contender's cache does not starve the next."""
    gc.collect()
    if device == "cpu":
        return
    import sys

    if "torch" in sys.modules and torch_cuda_usable():
        sys.modules["torch"].cuda.empty_cache()
    if "cupy" in sys.modules:
        cupy = sys.modules["cupy"]
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    try:
        from twinlearn import _backend

        if _backend.cuda_available():
            _backend.cuda().allocator_release_cached(int(device.split(":")[1]))
    except ImportError:
        pass
