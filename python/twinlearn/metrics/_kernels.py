"""Pairwise kernels on the CPU and CUDA backends (sklearn.metrics.pairwise).

Each kernel is one product or distance matrix from twinlearn's kernels
followed by elementwise steps, in scikit-learn's order:

=============  ==========================================  ======================
kernel         K                                           from
=============  ==========================================  ======================
linear         X Yᵀ                                        canonical GEMM
polynomial     (gamma X Yᵀ + coef0) ** degree              GEMM, math_pow
sigmoid        tanh(gamma X Yᵀ + coef0)                    GEMM, math_apply
rbf            exp(-gamma |x - y|²)                        distances (direct form)
laplacian      exp(-gamma |x - y|₁)                        distances
cosine         (x / |x|) · (y / |y|)                       normalizer, GEMM
=============  ==========================================  ======================

The products, distances and row norms are the project's canonical kernels;
the multiplications and additions are single IEEE operations (one array
operation each, never fused into an fma); exp, tanh and pow are the
project's own (docs/NUMERICS.md, rule 4). So identical mode gives the same
bits on the CPU and a GPU, and the values equal scikit-learn's within the
tolerance stated in docs/NUMERICS.md ("Clustering metrics"). chi2,
additive_chi2, callables, scikit-learn's Gaussian-process kernels and sparse
input are computed by scikit-learn.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import sparse as sp
from sklearn.metrics import pairwise as _skp
from sklearn.utils._param_validation import Hidden, Interval, StrOptions, validate_params

from .. import _io
from .._config import n_threads_context
from ._pairwise import _prepare, check_distances_finite, metric_struct

_TL = {"device": "no_validation", "numeric_mode": "no_validation"}
_XY = {"X": ["array-like", "sparse matrix"], "Y": ["array-like", "sparse matrix", None], **_TL}
_GAMMA = [Interval(Real, 0, None, closed="left"), None, Hidden(np.ndarray)]

_NUM = "within 1e-12 (float64) / 1e-5 (float32) of max abs K; identical: CPU = GPU bits"
#: docs/SUPPORT_MATRIX.md rows: (scikit-learn, twinlearn, computed by twinlearn,
#: computed by scikit-learn, numbers).
SUPPORT = tuple(
    (f"sklearn.metrics.pairwise.{name}", f"twinlearn.metrics.{name}", "dense X, Y", "sparse X or Y", _NUM)
    for name in ("linear_kernel", "polynomial_kernel", "sigmoid_kernel", "rbf_kernel", "laplacian_kernel",
                 "cosine_similarity")
) + (("sklearn.metrics.pairwise_kernels", "twinlearn.metrics.pairwise_kernels",
      "dense X, Y: linear, poly(nomial), rbf, laplacian, sigmoid, cosine; 'precomputed'",
      "sparse input, chi2, additive_chi2, callables, Gaussian-process kernels", _NUM),)

#: The parameters each kernel takes (scikit-learn's KERNEL_PARAMS).
KERNEL_PARAMS = {
    "additive_chi2": (),
    "chi2": frozenset(["gamma"]),
    "cosine": (),
    "linear": (),
    "poly": frozenset(["gamma", "degree", "coef0"]),
    "polynomial": frozenset(["gamma", "degree", "coef0"]),
    "rbf": frozenset(["gamma"]),
    "laplacian": frozenset(["gamma"]),
    "sigmoid": frozenset(["gamma", "coef0"]),
}
#: Kernels scikit-learn computes (no twinlearn kernel for them).
SKLEARN_ONLY = ("additive_chi2", "chi2")


#: scikit-learn's own functions, taken at import: the fallbacks call these
#: even where twinlearn's functions have been swapped into scikit-learn.
_SKLEARN = {name: getattr(_skp, name) for name in (
    "linear_kernel", "polynomial_kernel", "sigmoid_kernel", "rbf_kernel", "laplacian_kernel", "cosine_similarity",
    "pairwise_kernels", "check_pairwise_arrays")}


def _sklearn(name):
    return _SKLEARN[name]


def _host_fallback(name, X, Y, **kw):
    """scikit-learn's kernel `name` on host copies, mirrored back to X's kind."""
    out = _sklearn(name)(_io.to_host(X), _io.to_host(Y), **kw)
    return _io.mirror(X, out) if not sp.issparse(out) else out


def _sparse(X, Y):
    return sp.issparse(X) or sp.issparse(Y)


def _gamma(gamma, X):
    return 1.0 / X.shape[1] if gamma is None else gamma


def _product(X, Y, device, numeric_mode, owner):
    """(mod, ctx, X Yᵀ) in X's array type, X and Y checked and of one dtype."""
    mod, ctx, Xc, Yc = _prepare(X, Y, device, numeric_mode)
    K = _io.empty_like_kind(Xc, (Xc.shape[0], Yc.shape[0]), Xc.dtype)
    mod.gemm(ctx, Xc, Yc, True, K)
    _io.check_no_overflow(owner, "its products overflow", K, dtype=_io.np_float_dtype(Xc), power=2,
                          terms=Xc.shape[1])
    return mod, ctx, Xc, K


def _distances(X, Y, name, device, numeric_mode):
    mod, ctx, Xc, Yc = _prepare(X, Y, device, numeric_mode)
    D = _io.empty_like_kind(Xc, (Xc.shape[0], Yc.shape[0]), Xc.dtype)
    mod.pairwise_distances(ctx, Xc, Yc, metric_struct(mod, name, 2.0, direct=True), D)
    check_distances_finite(name + " kernel", D, Xc, name, 2.0)
    return mod, ctx, Xc, D


def _flat(K):
    return K.reshape(-1)


def _apply(mod, ctx, fn, K):
    """K = fn(K) elementwise, in place, with the project's own function."""
    flat = _flat(K)
    mod.math_apply(ctx, fn, flat, flat)
    return K


def _full_like(K, value):
    k = _io.kind(K)
    if k == "numpy":
        return np.full(K.shape, value, dtype=K.dtype)
    if k == "torch":
        import torch

        return torch.full_like(K, float(value))
    import cupy

    return cupy.full(K.shape, value, dtype=K.dtype)


def _affine(K, gamma, coef0):
    """K = K * gamma + coef0 as two roundings (two array operations: a
    device library never fuses them into one fma)."""
    K *= gamma
    K += coef0
    return K


@validate_params({**_XY, "dense_output": ["boolean"]}, prefer_skip_nested_validation=True)
def linear_kernel(X, Y=None, dense_output=True, *, device=None, numeric_mode=None):
    """The linear kernel ``K = X Yᵀ`` (the canonical GEMM in identical mode).

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        NumPy, or a CuPy / PyTorch device array (the result is then the same kind).
    Y : array-like of shape (n_samples_Y, n_features), default=None
        None: Y = X.
    dense_output : bool, default=True
        Only read for sparse input (computed by scikit-learn).
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    K : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import linear_kernel
    >>> linear_kernel(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]), device="cpu")
    array([[11.]])
    """
    if _sparse(X, Y):
        return _host_fallback("linear_kernel", X, Y, dense_output=dense_output)
    _, _, _, K = _product(X, Y, device, numeric_mode, "linear_kernel")
    return _io.mirror(X, K)


@validate_params(
    {**_XY, "degree": [Interval(Real, 1, None, closed="left")], "gamma": _GAMMA,
     "coef0": [Interval(Real, None, None, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def polynomial_kernel(X, Y=None, degree=3, gamma=None, coef0=1, *, device=None, numeric_mode=None):
    """The polynomial kernel ``K = (gamma X Yᵀ + coef0) ** degree``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
    Y : array-like of shape (n_samples_Y, n_features), default=None
    degree : float, default=3
    gamma : float, default=None
        None: 1 / n_features.
    coef0 : float, default=1
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    K : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import polynomial_kernel
    >>> polynomial_kernel(np.array([[1.0, 1.0]]), degree=2, gamma=1.0, coef0=1.0, device="cpu")
    array([[9.]])
    """
    if _sparse(X, Y):
        return _host_fallback("polynomial_kernel", X, Y, degree=degree, gamma=gamma, coef0=coef0)
    mod, ctx, Xc, K = _product(X, Y, device, numeric_mode, "polynomial_kernel")
    _affine(K, _gamma(gamma, Xc), coef0)
    flat = _flat(K)
    mod.math_pow(ctx, flat, _full_like(flat, degree), flat)
    return _io.mirror(X, K)


@validate_params(
    {**_XY, "gamma": _GAMMA, "coef0": [Interval(Real, None, None, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def sigmoid_kernel(X, Y=None, gamma=None, coef0=1, *, device=None, numeric_mode=None):
    """The sigmoid kernel ``K = tanh(gamma X Yᵀ + coef0)``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
    Y : array-like of shape (n_samples_Y, n_features), default=None
    gamma : float, default=None
        None: 1 / n_features.
    coef0 : float, default=1
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    K : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import sigmoid_kernel
    >>> sigmoid_kernel(np.array([[0.0, 0.0]]), coef0=0.0, device="cpu")
    array([[0.]])
    """
    if _sparse(X, Y):
        return _host_fallback("sigmoid_kernel", X, Y, gamma=gamma, coef0=coef0)
    mod, ctx, Xc, K = _product(X, Y, device, numeric_mode, "sigmoid_kernel")
    _affine(K, _gamma(gamma, Xc), coef0)
    return _io.mirror(X, _apply(mod, ctx, "tanh", K))


def _exp_of_distances(name, metric, X, Y, gamma, device, numeric_mode):
    """exp(-gamma * distance) over the `metric` distances (the rbf and Laplacian
    kernels); sparse input goes to scikit-learn's `name`."""
    if _sparse(X, Y):
        return _host_fallback(name, X, Y, gamma=gamma)
    mod, ctx, Xc, K = _distances(X, Y, metric, device, numeric_mode)
    K *= -_gamma(gamma, Xc)
    return _io.mirror(X, _apply(mod, ctx, "exp", K))


@validate_params({**_XY, "gamma": _GAMMA}, prefer_skip_nested_validation=True)
def rbf_kernel(X, Y=None, gamma=None, *, device=None, numeric_mode=None):
    """The RBF (Gaussian) kernel ``K = exp(-gamma |x - y|²)``.

    The squared distances are the direct form (differences, exact to a few
    ulps), so ``K(x, x) == 1`` exactly.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
    Y : array-like of shape (n_samples_Y, n_features), default=None
    gamma : float, default=None
        None: 1 / n_features.
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    K : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import rbf_kernel
    >>> rbf_kernel(np.array([[0.0], [1.0]]), gamma=1.0, device="cpu")
    array([[1.        , 0.36787944],
           [0.36787944, 1.        ]])
    """
    return _exp_of_distances("rbf_kernel", "sqeuclidean", X, Y, gamma, device, numeric_mode)


@validate_params(
    {**_XY, "gamma": [Interval(Real, 0, None, closed="neither"), Hidden(np.ndarray), None]},
    prefer_skip_nested_validation=True,
)
def laplacian_kernel(X, Y=None, gamma=None, *, device=None, numeric_mode=None):
    """The Laplacian kernel ``K = exp(-gamma |x - y|₁)``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
    Y : array-like of shape (n_samples_Y, n_features), default=None
    gamma : float, default=None
        None: 1 / n_features.
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    K : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import laplacian_kernel
    >>> laplacian_kernel(np.array([[0.0], [1.0]]), gamma=1.0, device="cpu")
    array([[1.        , 0.36787944],
           [0.36787944, 1.        ]])
    """
    return _exp_of_distances("laplacian_kernel", "manhattan", X, Y, gamma, device, numeric_mode)


@validate_params({**_XY, "dense_output": ["boolean"]}, prefer_skip_nested_validation=True)
def cosine_similarity(X, Y=None, dense_output=True, *, device=None, numeric_mode=None):
    """Cosine similarity: the linear kernel of the L2-normalized rows.

    Zero rows keep norm 1 (scikit-learn's rule), so their similarity to
    anything is 0.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
    Y : array-like of shape (n_samples_Y, n_features), default=None
    dense_output : bool, default=True
        Only read for sparse input (computed by scikit-learn).
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    K : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import cosine_similarity
    >>> cosine_similarity(np.array([[1.0, 0.0], [3.0, 4.0]]), device="cpu")
    array([[1. , 0.6],
           [0.6, 1. ]])
    """
    if _sparse(X, Y):
        return _host_fallback("cosine_similarity", X, Y, dense_output=dense_output)
    mod, ctx, Xc, Yc = _prepare(X, Y, device, numeric_mode)

    def normalized(A):
        out = _io.empty_like_kind(A, tuple(A.shape), A.dtype)
        mod.normalizer_apply(ctx, A, "l2", out)
        return out

    Xn = normalized(Xc)
    Yn = Xn if Y is None else normalized(Yc)
    K = _io.empty_like_kind(Xc, (Xc.shape[0], Yc.shape[0]), Xc.dtype)
    mod.gemm(ctx, Xn, Yn, True, K)
    return _io.mirror(X, K)


_FUNCTIONS = {
    "linear": linear_kernel,
    "poly": polynomial_kernel,
    "polynomial": polynomial_kernel,
    "rbf": rbf_kernel,
    "laplacian": laplacian_kernel,
    "sigmoid": sigmoid_kernel,
    "cosine": cosine_similarity,
}


def _is_gp_kernel(metric):
    from sklearn.gaussian_process.kernels import Kernel

    return isinstance(metric, Kernel)


@validate_params(
    {**_XY, "metric": [StrOptions(set(KERNEL_PARAMS) | {"precomputed"}), callable], "filter_params": ["boolean"],
     "n_jobs": [Integral, None]},
    prefer_skip_nested_validation=True,
)
def pairwise_kernels(X, Y=None, metric="linear", *, filter_params=False, n_jobs=None, device=None,
                     numeric_mode=None, **kwds):
    """The kernel between the rows of X and the rows of Y (or of X).

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features), or (n_samples_X, n_samples_Y) precomputed
    Y : array-like of shape (n_samples_Y, n_features), default=None
    metric : str or callable, default='linear'
        'linear', 'polynomial' ('poly'), 'rbf', 'laplacian', 'sigmoid' and
        'cosine' run on twinlearn's kernels; 'chi2', 'additive_chi2',
        callables and Gaussian-process kernels are computed by scikit-learn;
        'precomputed' returns X (checked).
    filter_params : bool, default=False
        Drop the keyword arguments the kernel does not take.
    n_jobs : int, default=None
        CPU threads (-1: all cores); None follows :func:`twinlearn.set_n_threads`.
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.
    **kwds : the kernel's parameters (gamma, degree, coef0).

    Returns
    -------
    K : array of shape (n_samples_X, n_samples_Y)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import pairwise_kernels
    >>> pairwise_kernels(np.array([[1.0, 2.0]]), metric="polynomial", degree=2, gamma=1.0, coef0=0.0, device="cpu")
    array([[25.]])
    """
    if metric == "precomputed":
        if _io.is_device_array(X):
            return X
        X, _ = _sklearn("check_pairwise_arrays")(X, Y, precomputed=True)
        return X
    if isinstance(metric, str) and metric in _FUNCTIONS and not _sparse(X, Y):
        if filter_params:
            kwds = {k: kwds[k] for k in kwds if k in KERNEL_PARAMS[metric]}
        with n_threads_context(n_jobs):
            return _FUNCTIONS[metric](X, Y, device=device, numeric_mode=numeric_mode, **kwds)
    if not (isinstance(metric, str) or callable(metric) or _is_gp_kernel(metric)):
        raise ValueError(f"metric={metric!r} is not supported")
    out = _sklearn("pairwise_kernels")(_io.to_host(X), _io.to_host(Y), metric=metric, filter_params=filter_params,
                                        n_jobs=n_jobs, **kwds)
    return _io.mirror(X, out)
