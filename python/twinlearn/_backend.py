"""Lazy access to the compiled backends.

``_core`` (the CPU backend) is always built. ``_cuda`` holds the CUDA backend
and is imported only when first needed, so ``import twinlearn`` works on a
machine without a GPU, a driver or the CUDA libraries; the reason it cannot be
used is kept for ``twinlearn doctor`` and for error messages.
"""

from __future__ import annotations

import importlib
import threading

_lock = threading.Lock()
_cuda_module = None  # the _cuda module when a GPU is usable
_cuda_raw = None  # the _cuda module whenever it imports
_cuda_reason: str | None = None
_cuda_probed = False


def core():
    from . import _core

    return _core


def _probe_cuda():
    global _cuda_module, _cuda_raw, _cuda_reason, _cuda_probed
    with _lock:
        if _cuda_probed:
            return
        try:
            mod = importlib.import_module("twinlearn._cuda")
        except ModuleNotFoundError as exc:
            if exc.name != "twinlearn._cuda":
                raise
            # This build has no CUDA backend at all.
            _cuda_reason = (
                "this twinlearn was built without its CUDA backend (twinlearn._cuda); build it on a "
                "machine with the CUDA toolkit (nvcc on PATH: `make build`, or CMake with "
                "-DTWINLEARN_CUDA=ON) to run on a GPU"
            )
        except ImportError as exc:  # built, but the CUDA libraries or driver are missing
            _cuda_reason = f"the CUDA backend module could not be imported: {exc}"
        else:
            _cuda_raw = mod
            status = mod.cuda_status()
            if status["device_count"] > 0:
                _cuda_module = mod
            else:
                _cuda_reason = f"the CUDA backend is built but no GPU is usable: {status['error']}"
        _cuda_probed = True


def cuda_module_raw():
    """The _cuda module if it imports, usable or not (for diagnostics); else None."""
    _probe_cuda()
    return _cuda_raw


def cuda_available() -> bool:
    _probe_cuda()
    return _cuda_module is not None


def cuda_unavailable_reason() -> str | None:
    _probe_cuda()
    return _cuda_reason


def cuda():
    """The CUDA backend module; RuntimeError naming the reason when unusable."""
    _probe_cuda()
    if _cuda_module is None:
        raise RuntimeError(f"twinlearn cannot run on a GPU here: {_cuda_reason}")
    return _cuda_module


def cuda_device_count() -> int:
    return cuda().cuda_status()["device_count"] if cuda_available() else 0


def module_for(device: str):
    """The backend module that runs on `device` ('cpu' or 'cuda:N')."""
    if device == "cpu":
        return core()
    mod = cuda()
    n = mod.cuda_status()["device_count"]
    ordinal = int(device.split(":")[1])
    if ordinal >= n:
        raise ValueError(f"device {device!r} does not exist: {n} GPU(s) are visible")
    return mod
