"""Input handling shared by the clustering, neighbours and metrics code.

NumPy input is validated by scikit-learn (float32 stays float32, everything
else becomes float64, C order, finite). Device arrays (CuPy, PyTorch CUDA,
``__cuda_array_interface__``) are kept on the device, zero-copy when they are
already C-contiguous float32/float64, and checked for NaN and infinity there.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, validate_data

from .. import _array
from .._input import check_device_shape, check_n_features

FLOAT_DTYPES = (np.float64, np.float32)


def _check_device_matrix(X, name, owner):
    X = _array.as_device_matrix(X, name)
    check_device_shape(X, owner)
    has_nan, has_inf = _array.device_nonfinite(X)
    if has_nan:
        raise ValueError(f"Input {name} contains NaN.")
    if has_inf:
        raise ValueError(f"Input {name} contains infinity or a value too large for dtype('float64').")
    return X


def check_X(est, X, device, *, reset, name="X"):
    """X ready for the backend of `device`; sets or checks n_features_in_."""
    if _array.is_device_array(X):
        if device == "cpu":
            return check_X(est, _array.to_numpy(X), device, reset=reset, name=name)
        X = _check_device_matrix(X, name, type(est).__name__)
        check_n_features(est, X.shape[1], reset=reset)
        return X
    return validate_data(est, X, accept_sparse=False, dtype=list(FLOAT_DTYPES), order="C", reset=reset)


def check_plain(X, device, name="X", dtype=None):
    """For functions (no estimator): a checked host or device matrix."""
    if _array.is_device_array(X):
        if device == "cpu":
            return check_plain(_array.to_numpy(X), device, name, dtype)
        X = _check_device_matrix(X, name, None)
        if dtype is not None and str(X.dtype) != np.dtype(dtype).name:
            X = X.astype(np.dtype(dtype).name)
        return X
    return check_array(X, accept_sparse=False, dtype=dtype if dtype is not None else list(FLOAT_DTYPES), order="C",
                       input_name=name)


def as_dtype(X, dtype):
    """X in float32 or float64 (`dtype`: a NumPy, CuPy or PyTorch dtype), host
    or device, copied only when needed."""
    name = "float32" if "float32" in str(dtype) else "float64"
    if str(X.dtype).endswith(name):
        return X
    if isinstance(X, np.ndarray):
        return np.ascontiguousarray(X, dtype=name)
    if _array.kind(X) == "torch":
        import torch

        return X.to(getattr(torch, name)).contiguous()
    return X.astype(name)


def host_weights(sample_weight, n, dtype):
    """sample_weight as a C-contiguous host array of `dtype`, or None."""
    if sample_weight is None:
        return None
    from sklearn.utils.validation import _check_sample_weight

    sw = _array.to_numpy(sample_weight) if _array.is_device_array(sample_weight) else sample_weight
    return np.ascontiguousarray(_check_sample_weight(sw, np.empty((n, 0)), dtype=dtype))


def n_threads_context(n_jobs):
    """A twinlearn config context for scikit-learn's n_jobs (None: unchanged)."""
    from contextlib import nullcontext

    from .._config import config_context

    if n_jobs is None:
        return nullcontext()
    if n_jobs < 0:
        import os

        return config_context(n_threads=max(1, (os.cpu_count() or 1) + 1 + n_jobs))
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, a positive count or -1")
    return config_context(n_threads=int(n_jobs))
