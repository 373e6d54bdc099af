"""Helpers of the GPU tests that pass CuPy arrays or PyTorch CUDA tensors."""

import numpy as np
import pytest


def to_device(lib, a):
    """a on cuda:0 as a CuPy array (lib='cupy') or a PyTorch tensor; skips when lib is missing."""
    mod = pytest.importorskip(lib)
    if lib == "torch" and not mod.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    return mod.as_tensor(a, device="cuda:0") if lib == "torch" else mod.asarray(a)


def host(a):
    """A NumPy copy of a CuPy array, a tensor or anything array-like."""
    return a.cpu().numpy() if hasattr(a, "cpu") else (a.get() if hasattr(a, "get") else np.asarray(a))
