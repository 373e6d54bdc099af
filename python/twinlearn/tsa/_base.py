"""Pieces shared by the batched time-series models: the batch layout of the
input, the device and numeric-mode context, and per-series error reporting."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _backend, _io
from .._config import check_device, check_numeric_mode, get_device, get_n_threads, get_numeric_mode


def as_batch(endog, name="endog"):
    """(Y, was_1d): `endog` as a C-contiguous float64 (n_obs, n_series) host
    array, time along axis 0 and one series per column. A 1-D input is one
    series. NaN marks padding before the first or after the last value of a
    series; infinities are refused."""
    y = np.asarray(_io.to_host(endog))
    if y.dtype == object or not (np.issubdtype(y.dtype, np.number) or y.dtype == bool):
        raise ValueError(f"{name} must be numeric, got dtype {y.dtype}")
    if y.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (one series) or 2-D (n_obs, n_series), got {y.ndim}-D")
    was_1d = y.ndim == 1
    Y = np.ascontiguousarray(y.reshape(-1, 1) if was_1d else y, dtype=np.float64)
    if Y.shape[0] == 0 or Y.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {y.shape}")
    if np.isinf(Y).any():
        j = int(np.nonzero(np.isinf(Y).any(axis=0))[0][0])
        raise ValueError(f"{name} contains infinity (series {j}); NaN is the only padding value")
    return Y, was_1d


def context(device, numeric_mode):
    """(backend module, Context, device string, numeric mode) for a fit."""
    dev = check_device(device if device is not None else get_device())
    if dev == "auto":
        dev = "cuda:0" if _backend.cuda_available() else "cpu"
    mode = check_numeric_mode(numeric_mode if numeric_mode is not None else get_numeric_mode())
    mod = _backend.module_for(dev)
    return mod, mod.Context(dev, get_n_threads(), mode, 0, 0), dev, mode


def check_errors(errors):
    if errors not in ("raise", "nan"):
        raise ValueError(f"errors must be 'raise' or 'nan', got {errors!r}")
    return errors


def report_failures(status, messages, errors):
    """Raise a ValueError naming the failed series (status != 0) when
    errors == 'raise'; with 'nan' the failed series keep NaN results."""
    bad = np.nonzero(np.asarray(status) != 0)[0]
    if errors == "raise" and bad.size:
        shown = ", ".join(f"series {int(j)}: {messages.get(int(status[j]), 'failed')}" for j in bad[:5])
        more = f" (and {bad.size - 5} more)" if bad.size > 5 else ""
        raise ValueError(f"{bad.size} series could not be fitted: {shown}{more}. "
                         "Pass errors='nan' to fit the rest of the batch.")


def check_int(value, name, low=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")
    return int(value)


def per_series(value, n, width, name):
    """A (n, width) float64 array from a scalar, a (width,) vector or an
    (n, width) array of per-series values."""
    a = np.asarray(value, dtype=np.float64)
    if a.ndim == 0 and width == 1:
        return np.full((n, 1), float(a))
    if a.ndim == 1 and a.shape[0] == width:
        return np.broadcast_to(a, (n, width)).copy()
    if width == 1 and a.ndim == 1 and a.shape[0] == n:
        return a.reshape(n, 1).copy()
    if a.ndim == 2 and a.shape == (n, width):
        return a.copy()
    raise ValueError(f"{name} must be a scalar, a ({width},) vector or an ({n}, {width}) array, got shape {a.shape}")
