"""Which inputs twinlearn serves, decided without copying the data where possible.

Served: dense 2-D NumPy arrays of bool, integer, float32 or float64 (lists and
tuples are converted to such an array first; pandas DataFrames whose columns
all have such NumPy dtypes are passed as they are, so feature names are kept),
and 2-D CUDA device arrays (CuPy, PyTorch, ``__cuda_array_interface__``).
Not served: sparse matrices, other dtypes (object, complex, float16, strings,
pandas extension dtypes), empty data, anything else.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .. import _io

_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def _dtype_reason(dt) -> str | None:
    if dt.kind in "biu" or dt in _FLOATS:
        return None
    return f"dtype {dt} unsupported"


def _non_finite(X) -> str | None:
    """Reason when float array X holds NaN or infinity (one summing pass when clean)."""
    if X.dtype.kind != "f":
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(X.sum()):
            return None
    if np.isnan(X).any():
        return "X contains NaN"
    if np.isinf(X).any():
        return "X contains infinity"
    return None


def inspect_X(X, allow_nan: bool):
    """``(X', n_samples, n_features, on_device, None)`` when twinlearn serves X
    (X' is what to pass it), else ``(None, 0, 0, False, reason)``."""
    if isinstance(X, np.ndarray):
        if X.ndim != 2:
            return None, 0, 0, False, f"X has {X.ndim} dimension(s), not 2"
        reason = _dtype_reason(X.dtype)
        if reason is not None:
            return None, 0, 0, False, reason
        n, d = X.shape
        if n == 0 or d == 0:
            return None, 0, 0, False, f"X is empty (shape {X.shape})"
        if not allow_nan:
            reason = _non_finite(X)
            if reason is not None:
                return None, 0, 0, False, reason
        return X, n, d, False, None
    if sparse.issparse(X):
        return None, 0, 0, False, "X is sparse"
    if isinstance(X, (list, tuple)):
        try:
            A = np.asarray(X)
        except (ValueError, TypeError) as exc:
            return None, 0, 0, False, f"X cannot be read as an array ({exc})"
        Xc, n, d, dev, reason = inspect_X(A, allow_nan)
        return Xc, n, d, dev, reason
    root = type(X).__module__.partition(".")[0]
    if root == "pandas":
        dtypes = getattr(X, "dtypes", None)
        if getattr(X, "ndim", None) != 2 or dtypes is None:
            return None, 0, 0, False, f"X is a pandas {type(X).__name__}, not a DataFrame"
        for dt in dtypes:
            if not isinstance(dt, np.dtype):
                return None, 0, 0, False, f"X has a column of pandas dtype {dt}"
            reason = _dtype_reason(dt)
            if reason is not None:
                return None, 0, 0, False, f"X has a column of {reason}"
        n, d = X.shape
        if n == 0 or d == 0:
            return None, 0, 0, False, f"X is empty (shape {X.shape})"
        if not allow_nan:
            reason = _non_finite(X.to_numpy())
            if reason is not None:
                return None, 0, 0, False, reason
        return X, n, d, False, None
    if _io.is_device_array(X):
        shape = tuple(X.shape)
        if len(shape) != 2:
            return None, 0, 0, False, f"X has {len(shape)} dimension(s), not 2"
        if shape[0] == 0 or shape[1] == 0:
            return None, 0, 0, False, f"X is empty (shape {shape})"
        return X, shape[0], shape[1], True, None
    return None, 0, 0, False, f"X of type {type(X).__name__} unsupported"
