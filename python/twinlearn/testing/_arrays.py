"""Moving test data between NumPy and the device array libraries."""

from __future__ import annotations

import os

import numpy as np

from .. import _io

#: The device array libraries a test may pass arrays of.
DEVICE_LIBS = ("cupy", "torch")


def host(a):
    """A NumPy view or copy of a NumPy, CuPy or PyTorch array (CPU or CUDA) or
    of anything array-like; None stays None."""
    if a is None:
        return None
    if _io.kind(a) in ("cupy", "cai", "torch"):
        return _io.to_numpy(a)
    return np.asarray(a)


def gpu_required() -> bool:
    """True under ``TWINLEARN_REQUIRE_GPU=1``, where a test that needs a GPU
    must fail rather than skip for want of one."""
    return os.environ.get("TWINLEARN_REQUIRE_GPU") == "1"


def skip_without_gpu() -> None:
    """Skip the calling test when no CUDA GPU is usable (fail instead under
    ``TWINLEARN_REQUIRE_GPU=1``)."""
    import pytest

    from .. import _backend

    if _backend.cuda_available():
        return
    reason = f"no usable GPU: {_backend.cuda_unavailable_reason()}"
    if gpu_required():
        pytest.fail(f"TWINLEARN_REQUIRE_GPU=1 but {reason}")
    pytest.skip(reason)


def to_device(lib: str, a):
    """`a` on cuda:0 as a CuPy array (``lib='cupy'``) or a PyTorch CUDA tensor
    (``lib='torch'``); skips the test when the library or its GPU is missing."""
    import pytest

    if lib not in DEVICE_LIBS:
        raise ValueError(f"lib must be one of {DEVICE_LIBS}, got {lib!r}")
    mod = pytest.importorskip(lib)
    if lib == "torch":
        if not mod.cuda.is_available():
            pytest.skip("PyTorch has no CUDA device")
        return mod.as_tensor(np.asarray(a), device="cuda:0")
    return mod.asarray(a)


def same_kind(a, b) -> bool:
    """Whether `a` and `b` are arrays of one library and one device."""
    return _io.kind(a) == _io.kind(b) and _io.device_of(a) == _io.device_of(b)
