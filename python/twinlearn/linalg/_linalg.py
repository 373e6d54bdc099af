"""matmul and gram: array handling around the backends' canonical products."""

from __future__ import annotations

import numpy as np

from .. import _array, _backend
from .._config import check_device, check_numeric_mode, get_device, get_n_threads, get_numeric_mode


def _resolve_device(device, arrays) -> str:
    dev = check_device(device if device is not None else get_device(), "device")
    on_device = [a for a in arrays if a is not None and _array.is_device_array(a)]
    if dev == "auto":
        if on_device:
            dev = _array.device_of(on_device[0])
        else:
            dev = "cuda:0" if _backend.cuda_available() else "cpu"
    for a in on_device:
        if dev != "cpu" and _array.device_of(a) != dev:
            raise ValueError(f"an input lives on {_array.device_of(a)} but the computation runs on {dev}")
    return dev


def context(device: str, mode: str, like=None):
    """(backend module, Context) for running on `device` in numeric mode `mode`."""
    mod = _backend.module_for(device)
    stream = 0
    if like is not None and _array.is_device_array(like) and _array.device_of(like) == device:
        stream = _array.current_stream(like)
    return mod, mod.Context(device, get_n_threads(), mode, 0, stream)


def _float_dtype(*arrays):
    """float32 when every operand is float32, else float64 (NumPy's promotion for floats)."""
    return np.dtype(np.float32) if all(str(a.dtype).endswith("float32") for a in arrays) else np.dtype(np.float64)


def _operand(x, name, dtype, device):
    """x as a 2-D C-contiguous array of `dtype` the backend for `device` accepts,
    and whether it was given transposed (a Fortran-ordered array is passed as
    its C-ordered transpose, without a copy)."""
    if _array.is_device_array(x):
        if device == "cpu":
            x = _array.to_numpy(x)
        else:
            k = _array.kind(x)
            if x.ndim != 2:
                raise ValueError(f"{name} must be a 2-D array, got {x.ndim}-D")
            if k == "torch":
                import torch

                tdt = torch.float32 if dtype == np.float32 else torch.float64
                x = x.detach().to(tdt)
                if not x.is_contiguous() and x.t().is_contiguous():
                    return x.t(), True
                return x.contiguous(), False
            import cupy

            x = cupy.asarray(x).astype(dtype, copy=False)
            if not x.flags.c_contiguous and x.flags.f_contiguous:
                return x.T, True
            return cupy.ascontiguousarray(x), False
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise ValueError(f"Complex data not supported in {name}")
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {x.ndim}-D")
    x = x.astype(dtype, copy=False)
    if not x.flags.c_contiguous and x.flags.f_contiguous:
        return x.T, True
    return np.ascontiguousarray(x), False


def _matmul(A, B, transpose_a=False, transpose_b=False, *, device=None, numeric_mode=None):
    """matmul, also returning the numeric mode the product delivered."""
    mode = check_numeric_mode(numeric_mode if numeric_mode is not None else get_numeric_mode())
    dev = _resolve_device(device, (A, B))
    like = A if _array.is_device_array(A) else (B if _array.is_device_array(B) else None)
    dtype = _float_dtype(np.empty(0, dtype=_dtype_of(A)), np.empty(0, dtype=_dtype_of(B)))
    a, fa = _operand(A, "A", dtype, dev)
    b, fb = _operand(B, "B", dtype, dev)
    ta, tb = bool(transpose_a) ^ fa, bool(transpose_b) ^ fb
    m = a.shape[1] if ta else a.shape[0]
    ka = a.shape[0] if ta else a.shape[1]
    kb = b.shape[1] if tb else b.shape[0]
    n = b.shape[0] if tb else b.shape[1]
    if ka != kb:
        raise ValueError(
            f"matmul: op(A) has shape ({m}, {ka}) and op(B) has shape ({kb}, {n}): inner dimensions differ"
        )
    ref = a if _array.is_device_array(a) else (b if _array.is_device_array(b) else np.empty(0))
    out = _array.empty_like_kind(ref, (m, n), dtype)
    mod, ctx = context(dev, mode, a if _array.is_device_array(a) else b)
    delivered = mod.linalg_matmul(ctx, a, ta, b, tb, out)
    if like is not None and not _array.is_device_array(out):
        out = _array.from_numpy_like(like, out)
    return out, delivered


def _dtype_of(x):
    if _array.kind(x) == "torch":
        return np.dtype(np.float32) if str(x.dtype).endswith("float32") else np.dtype(np.float64)
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return np.dtype(np.float32) if str(dt).endswith("float32") else np.dtype(np.float64)


def matmul(A, B, transpose_a=False, transpose_b=False, *, device=None, numeric_mode=None):
    """The matrix product ``op(A) @ op(B)``, ``op(M)`` being ``M`` or ``M.T``.

    Parameters
    ----------
    A : array of shape (m, k), or (k, m) with ``transpose_a``
        NumPy array (any real dtype) or a CuPy / PyTorch CUDA array.
    B : array of shape (k, n), or (n, k) with ``transpose_b``
    transpose_a, transpose_b : bool, default=False
        Use ``A.T`` / ``B.T``. Transposed operands are never copied in fast
        mode on a GPU; on the canonical path a transposed A is packed first
        (an exact copy).
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        None follows :func:`twinlearn.get_device`; 'auto' runs where a device
        operand lives, else on the first usable GPU, else on the CPU.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        None follows :func:`twinlearn.get_numeric_mode`. ``identical`` and
        ``deterministic``: the canonical product (each entry one fma chain
        over k in increasing order), the same bits on the CPU and any GPU.
        ``fast`` on a GPU: cuBLAS (no TF32).

    Returns
    -------
    C : array of shape (m, n)
        float32 when both operands are float32, else float64; a device array
        of the operand's kind when an operand is one, else NumPy.

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linalg import matmul
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> matmul(A, A, transpose_a=True, device="cpu")
    array([[10., 14.],
           [14., 20.]])
    """
    return _matmul(A, B, transpose_a, transpose_b, device=device, numeric_mode=numeric_mode)[0]


def gram_matrix(mod, ctx, X, sample_weight=None, offset=None):
    """(G, delivered mode): the float64 NumPy d x d Gram matrix of the rows
    (X - offset) * sqrt(sample_weight), computed by the backend of ctx.
    X is a C-contiguous float array the backend accepts; offset a NumPy array
    of X's dtype or None; sample_weight an array of X's dtype and kind or None."""
    return mod.linalg_gram(ctx, X, sample_weight, offset)


def gram(X, center=False, sample_weight=None, *, device=None, numeric_mode=None):
    """The Gram matrix ``Zᵀ Z`` of the rows of X, optionally centred and weighted.

    ``Z[i, j] = (X[i, j] - mean[j]) * sqrt(sample_weight[i])``, ``mean`` being
    the (weighted) column mean when ``center`` is True and 0 otherwise; so
    ``gram(X)`` is ``X.T @ X`` and ``gram(X, sample_weight=w)`` is ``X.T @ diag(w) @ X``.
    The mean comes from the canonical column statistics and is rounded to X's
    dtype; the subtraction and the weighting are computed in X's dtype, the
    products are summed in float64 in the canonical order of the Gram product
    (docs/NUMERICS.md, "Linear solves").

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        NumPy array or a CuPy / PyTorch CUDA array.
    center : bool, default=False
        Subtract the (weighted) column mean first: the result is then
        ``(n_samples - 1)`` times the covariance matrix (unweighted case).
    sample_weight : array of shape (n_samples,), default=None
        Non-negative weights.
    device, numeric_mode :
        As for :func:`matmul`.

    Returns
    -------
    G : ndarray of shape (n_features, n_features), float64
        A NumPy array whatever X's kind: it is small, and its entries are
        float64 sums (of exact products, for float32 data).

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linalg import gram
    >>> X = np.array([[1.0, 2.0], [3.0, 5.0], [5.0, 8.0]])
    >>> gram(X, center=True, device="cpu")
    array([[ 8., 12.],
           [12., 18.]])
    """
    mode = check_numeric_mode(numeric_mode if numeric_mode is not None else get_numeric_mode())
    dev = _resolve_device(device, (X, sample_weight))
    dtype = _dtype_of(X)
    x, _ = _operand(X, "X", dtype, dev)
    n, d = x.shape
    w = None
    if sample_weight is not None:
        w = _weights(sample_weight, n, dtype, x)
    mod, ctx = context(dev, mode, x)
    offset = None
    if center:
        if n == 0:
            raise ValueError("gram: center=True needs at least one row")
        stats = np.asarray(mod.column_stats(ctx, x, w))
        offset = np.ascontiguousarray(stats[1].astype(dtype))
    G, _ = gram_matrix(mod, ctx, x, w, offset)
    return G


def _weights(sample_weight, n, dtype, like):
    """sample_weight as a 1-D array of `dtype`, living where `like` does; finite and >= 0."""
    w_host = _array.to_numpy(sample_weight)
    w_host = np.ascontiguousarray(np.asarray(w_host, dtype=dtype))
    if w_host.ndim != 1 or w_host.shape[0] != n:
        raise ValueError(f"sample_weight.shape == {w_host.shape}, expected ({n},)!")
    if not np.all(np.isfinite(w_host)) or np.any(w_host < 0):
        raise ValueError("sample_weight must be finite and non-negative")
    return _array.from_numpy_like(like, w_host) if _array.is_device_array(like) else w_host
