"""Pairwise distances on the CPU and CUDA backends.

scikit-learn's :func:`sklearn.metrics.pairwise_distances`,
:func:`~sklearn.metrics.pairwise_distances_argmin` and
:func:`~sklearn.metrics.pairwise_distances_argmin_min` for the metrics
'euclidean' ('l2'), 'sqeuclidean', 'manhattan' ('cityblock', 'l1'),
'cosine', 'chebyshev' and 'minkowski' (with ``p``), on the kernels that
nearest neighbours and KMeans use. Values follow the spelled-out arithmetic
of docs/NUMERICS.md, so in identical mode the CPU and a GPU give the same
bits; argmins break ties by the lowest index.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse as sp
from sklearn.metrics import pairwise as _skp

from .. import _io, _native as native
from .._config import n_threads_context
from ..base import TwinlearnEstimatorMixin

#: scikit-learn's pairwise_distances, taken at import (sparse input goes to it).
_SK_PAIRWISE_DISTANCES = _skp.pairwise_distances
METRICS = ("euclidean", "l2", "sqeuclidean", "manhattan", "cityblock", "l1", "cosine", "chebyshev", "minkowski")
_ZERO_DIAGONAL = ("euclidean", "l2", "sqeuclidean", "cosine")


class _Runner(TwinlearnEstimatorMixin):
    """Device and numeric-mode resolution for the functions below."""

    def __init__(self, device=None, numeric_mode=None):
        self.device = device
        self.numeric_mode = numeric_mode


def resolve_metric(metric, p=None, metric_params=None, where="metric"):
    """(name, p) for the backend; ValueError naming what is unsupported."""
    if callable(metric):
        raise ValueError(f"{where}: callable metrics are not supported; use one of {METRICS}")
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"{where}={metric!r} is not supported; use one of {METRICS} (or 'precomputed' where allowed)")
    params = dict(metric_params or {})
    if "p" in params:
        if p is not None and p != params["p"]:
            raise ValueError("p is given twice, as a parameter and in metric_params, with different values")
        p = params.pop("p")
    if params:
        raise ValueError(f"metric_params {sorted(params)} are not supported")
    if metric == "minkowski":
        p = 2.0 if p is None else float(p)
        if not p >= 1:
            raise ValueError(f"p must be greater or equal to one for minkowski metric; got p={p}")
    else:
        p = 2.0
    return metric, float(p)


def metric_struct(mod, name, p, *, direct):
    """The backend's MetricParams for metric `name` (and minkowski's `p`) as
    :func:`resolve_metric` gives them; `direct`: (sq)euclidean distances by
    differences (accurate) rather than dot products (fast)."""
    return native.params(mod.MetricParams, metric=name, p=float(p), direct=bool(direct))


def distance_power(name, p):
    """The power of the values a distance of metric `name` grows with: 1 for
    the absolute-difference metrics, Minkowski's p, 2 for the rest (squares
    or dot products)."""
    return 1.0 if name in ("manhattan", "cityblock", "l1", "chebyshev") else (p if name == "minkowski" else 2.0)


def check_distances_finite(owner, D, X, name, p):
    """The overflow error when distances D between finite rows of X's width
    are not finite (they grow as distance_power of the values, summed over
    features)."""
    _io.check_no_overflow(owner, "its distances overflow", D, dtype=_io.np_float_dtype(X),
                          power=distance_power(name, p), terms=X.shape[1])


def _prepare(X, Y, device, numeric_mode):
    runner = _Runner(device, numeric_mode)
    runner._tl_validate_params()
    dev = runner._tl_device(X)
    X = _io.check_array(X, dev, "X")
    Y = X if Y is None else _io.check_array(Y, dev, "Y")
    dt = _io.float_dtype_of(X, Y)
    X, Y = _io.as_dtype(X, dt), _io.as_dtype(Y, dt)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"Incompatible dimension for X and Y matrices: X.shape[1] == {X.shape[1]} while "
            f"Y.shape[1] == {Y.shape[1]}"
        )
    mod, ctx = runner._tl_context(dev, X)
    return mod, ctx, X, Y


def pairwise_distances(X, Y=None, metric="euclidean", *, n_jobs=None, device=None, numeric_mode=None, **kwds):
    """Distances between the rows of X and the rows of Y (or of X).

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        NumPy, or a CuPy / PyTorch device array (the result is then the same kind).
    Y : array-like of shape (n_samples_Y, n_features), default=None
        None computes the distances within X; the diagonal is then exactly 0.
        Sparse X or Y (SciPy) are computed by scikit-learn, with its metrics.
    metric : str, default='euclidean'
        One of 'euclidean', 'l2', 'sqeuclidean', 'manhattan', 'cityblock',
        'l1', 'cosine', 'chebyshev', 'minkowski' or 'precomputed'.
    n_jobs : int, default=None
        CPU threads (-1: all cores); None follows :func:`twinlearn.set_n_threads`.
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.
    **kwds : ``p`` for 'minkowski'.

    Returns
    -------
    D : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import pairwise_distances
    >>> pairwise_distances(np.array([[0.0, 0.0], [3.0, 4.0]]), device="cpu")
    array([[0., 5.],
           [5., 0.]])
    """
    if sp.issparse(X) or sp.issparse(Y):
        return _SK_PAIRWISE_DISTANCES(X, Y, metric=metric, n_jobs=n_jobs, **kwds)
    if metric == "precomputed":
        D = _io.check_array(X, _io.device_of(X), "X")
        _io.check_distances(D)
        return D
    name, p = resolve_metric(metric, kwds.pop("p", None), None)
    if kwds:
        raise ValueError(f"unsupported keyword arguments {sorted(kwds)}")
    with n_threads_context(n_jobs):
        mod, ctx, Xc, Yc = _prepare(X, Y, device, numeric_mode)
        out = _io.empty_like_kind(Xc, (Xc.shape[0], Yc.shape[0]), Xc.dtype)
        mod.pairwise_distances(ctx, Xc, Yc, metric_struct(mod, name, p, direct=True), out)
    if Y is None and name in _ZERO_DIAGONAL:
        _zero_diagonal(out)
    check_distances_finite("pairwise_distances", out, Xc, name, p)
    return _io.mirror(X, out)


def _zero_diagonal(out):
    k = _io.kind(out)
    if k == "numpy":
        np.fill_diagonal(out, 0)
    elif k == "torch":
        out.fill_diagonal_(0)
    else:
        import cupy

        cupy.fill_diagonal(out, 0)


def _argmin_min(owner, X, Y, axis, metric, metric_kwargs, device, numeric_mode):
    if axis not in (0, 1):
        raise ValueError(f"axis must be 0 or 1; got {axis}")
    if axis == 0:
        X, Y = Y, X
    metric_kwargs = dict(metric_kwargs or {})
    name, p = resolve_metric(metric, metric_kwargs.pop("p", None), metric_kwargs)
    mod, ctx, Xc, Yc = _prepare(X, Y, device, numeric_mode)
    r = mod.knn_search(ctx, Yc, Xc, metric_struct(mod, name, p, direct=False), 1)
    dist = np.asarray(r.distances)[:, 0]
    check_distances_finite(owner, dist, Xc, name, p)  # the argmins came from them
    return np.asarray(r.indices)[:, 0].astype(np.intp), dist


def pairwise_distances_argmin_min(X, Y, *, axis=1, metric="euclidean", metric_kwargs=None, device=None,
                                  numeric_mode=None):
    """For each row of X, the index of the nearest row of Y and its distance.

    Ties go to the lowest index. The distance matrix is never written whole.

    Returns
    -------
    argmin : ndarray of shape (n_samples_X,)
    distances : ndarray of shape (n_samples_X,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import pairwise_distances_argmin_min
    >>> X = np.array([[0.0, 0.0], [5.0, 5.0]]); Y = np.array([[4.0, 4.0], [1.0, 0.0]])
    >>> pairwise_distances_argmin_min(X, Y, device="cpu")
    (array([1, 0]), array([1.        , 1.41421356]))
    """
    return _argmin_min("pairwise_distances_argmin_min", X, Y, axis, metric, metric_kwargs, device, numeric_mode)


def pairwise_distances_argmin(X, Y, *, axis=1, metric="euclidean", metric_kwargs=None, device=None,
                              numeric_mode=None):
    """For each row of X, the index of the nearest row of Y (ties: lowest index).

    Returns
    -------
    argmin : ndarray of shape (n_samples_X,)
    """
    return _argmin_min("pairwise_distances_argmin", X, Y, axis, metric, metric_kwargs, device, numeric_mode)[0]
