"""matmul and gram: array handling around the backends' canonical products."""

from __future__ import annotations

import numpy as np

from .. import _io
from .._config import check_numeric_mode, get_numeric_mode


def _matmul(A, B, transpose_a=False, transpose_b=False, *, device=None, numeric_mode=None):
    """matmul, also returning the numeric mode the product delivered."""
    mode = check_numeric_mode(numeric_mode if numeric_mode is not None else get_numeric_mode())
    dev = _io.resolve_device(device, (A, B))
    dtype = _io.float_dtype_of(A, B)
    a, fa = _io.matrix_operand(A, "A", dtype, dev)
    b, fb = _io.matrix_operand(B, "B", dtype, dev)
    ta, tb = bool(transpose_a) ^ fa, bool(transpose_b) ^ fb
    m = a.shape[1] if ta else a.shape[0]
    ka = a.shape[0] if ta else a.shape[1]
    kb = b.shape[1] if tb else b.shape[0]
    n = b.shape[0] if tb else b.shape[1]
    if ka != kb:
        raise ValueError(
            f"matmul: op(A) has shape ({m}, {ka}) and op(B) has shape ({kb}, {n}): inner dimensions differ"
        )
    out = _io.empty_like_kind(_io.first_device_array(a, b), (m, n), dtype)  # NumPy when neither is on a device
    mod, ctx = _io.backend_context(dev, mode, a if _io.is_device_array(a) else b)
    delivered = mod.linalg_matmul(ctx, a, ta, b, tb, out)
    return _io.mirror(_io.first_device_array(A, B), out), delivered


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
    r = mod.linalg_gram(ctx, X, sample_weight, offset)
    return r.G, r.delivered


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
    dev = _io.resolve_device(device, (X, sample_weight))
    dtype = _io.float_dtype_of(X)
    # The Gram product reads X by rows: a Fortran-ordered X is copied to C
    # order (its C-ordered transpose would be read as the rows of X.T).
    x, _ = _io.matrix_operand(X, "X", dtype, dev, allow_transposed=False)
    n, d = x.shape
    w = None
    if sample_weight is not None:
        w = _weights(sample_weight, n, dtype, x)
    mod, ctx = _io.backend_context(dev, mode, x)
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
    w_host = np.ascontiguousarray(np.asarray(_io.to_numpy(sample_weight), dtype=dtype))
    if w_host.ndim != 1 or w_host.shape[0] != n:
        raise ValueError(f"sample_weight.shape == {w_host.shape}, expected ({n},)!")
    if not np.all(np.isfinite(w_host)) or np.any(w_host < 0):
        raise ValueError("sample_weight must be finite and non-negative")
    return _io.mirror(like, w_host)
