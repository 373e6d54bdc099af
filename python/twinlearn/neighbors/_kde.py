"""Kernel density estimation by exact sums on the CPU and CUDA backends.

:class:`KernelDensity` has scikit-learn's names, parameters and results.
Where scikit-learn walks a KD or ball tree and prunes with ``atol`` /
``rtol``, twinlearn sums every training row exactly, in tiles (a query tile
against a training tile, never an n x m matrix), in the canonical order of
docs/NUMERICS.md ("Kernel density"): the same bits on the CPU and on any GPU,
in every numeric mode.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _io, _native as native
from .._backend import module_for
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ..metrics._pairwise import metric_struct

KERNELS = ("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine")
#: The metrics served (scikit-learn's KD-tree metrics); others raise.
KDE_METRICS = ("euclidean", "l2", "manhattan", "cityblock", "l1", "chebyshev", "infinity", "minkowski")
_BACKEND_NAME = {"l2": "euclidean", "cityblock": "manhattan", "l1": "manhattan", "infinity": "chebyshev"}


def _seed(random_state):
    """A 63-bit seed for the counter-based draws, from scikit-learn's random_state."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int64).max, dtype=np.int64))


def _log_vn(n):
    return 0.5 * n * math.log(math.pi) - math.lgamma(0.5 * n + 1)


def _log_sn(n):
    return math.log(2 * math.pi) + _log_vn(n - 1)


def log_kernel_norm(h, d, kernel):
    """scikit-learn's log normalisation of `kernel` with bandwidth h in d
    dimensions (the euclidean volume; scikit-learn applies it for every
    metric, and so does twinlearn)."""
    if kernel == "gaussian":
        factor = 0.5 * d * math.log(2 * math.pi)
    elif kernel == "tophat":
        factor = _log_vn(d)
    elif kernel == "epanechnikov":
        factor = _log_vn(d) + math.log(2.0 / (d + 2.0))
    elif kernel == "exponential":
        factor = _log_sn(d - 1) + math.lgamma(d)
    elif kernel == "linear":
        factor = _log_vn(d) - math.log(d + 1.0)
    else:  # cosine
        factor, tmp = 0.0, 2.0 / math.pi
        for k in range(1, d + 1, 2):
            factor += tmp
            tmp *= -(d - k) * (d - k - 1) * (2.0 / math.pi) ** 2
        factor = math.log(factor) + _log_sn(d - 1)
    return -factor - d * math.log(h)


class KernelDensity(TwinlearnEstimatorMixin, BaseEstimator):
    """Kernel density estimation, exact, on the CPU or a GPU.

    scikit-learn's :class:`sklearn.neighbors.KernelDensity`: ``score_samples``
    is the log of the (weighted) kernel sum over every training row divided
    by the total weight, with scikit-learn's kernel normalisation. The sums
    are exact (no tree, no pruning) and run in a fixed order, so the CPU and
    any GPU give the same bits (docs/NUMERICS.md, "Kernel density").

    Parameters
    ----------
    bandwidth : float or {'scott', 'silverman'}, default=1.0
        The kernel's bandwidth (> 0), or the rule that sets it from the data:
        'scott' ``n ** (-1 / (d + 4))``, 'silverman'
        ``(n * (d + 2) / 4) ** (-1 / (d + 4))``.
    algorithm : {'kd_tree', 'ball_tree', 'auto'}, default='auto'
        Accepted for compatibility; no effect (every algorithm is the exact sum).
    kernel : {'gaussian', 'tophat', 'epanechnikov', 'exponential', 'linear', 'cosine'}, default='gaussian'
        The kernel.
    metric : str, default='euclidean'
        'euclidean' ('l2'), 'manhattan' ('cityblock', 'l1'), 'chebyshev'
        ('infinity') or 'minkowski' (p from ``metric_params``, default 2).
        As in scikit-learn the normalisation is the euclidean one whatever
        the metric. Other metrics raise ValueError.
    atol, rtol : float, default=0
        Accepted (>= 0); the exact sums satisfy any tolerance.
    breadth_first : bool, default=True
        Accepted; no effect.
    leaf_size : int, default=40
        Accepted (>= 1); no effect (no tree is built).
    metric_params : dict, default=None
        ``{'p': p}`` for 'minkowski' (p >= 1); nothing else.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where score_samples runs (see :class:`twinlearn.base.TwinlearnEstimatorMixin`).
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        Every mode is served by the identical path.

    Attributes
    ----------
    bandwidth_ : float
        The bandwidth used.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.neighbors import KernelDensity
    >>> X = np.random.default_rng(42).random((100, 3))
    >>> kde = KernelDensity(kernel='gaussian', bandwidth=0.5, device="cpu").fit(X)
    >>> kde.score_samples(X[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "bandwidth": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"scott", "silverman"})],
        "algorithm": [StrOptions({"kd_tree", "ball_tree", "auto"})],
        "kernel": [StrOptions(set(KERNELS))],
        "metric": [str],
        "atol": [Interval(numbers.Real, 0, None, closed="left")],
        "rtol": [Interval(numbers.Real, 0, None, closed="left")],
        "breadth_first": ["boolean"],
        "leaf_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "metric_params": [None, dict],
        **TL_PARAMETER_CONSTRAINTS,
    }
    _tl_native = (
        native.Spec(
            "MetricParams",
            fields={"metric": "metric", "metric_params": "p"},
            python_only={
                "bandwidth": "kde_log_sum's bandwidth argument (bandwidth_)",
                "kernel": "kde_log_sum's kernel argument",
                "algorithm": "every algorithm is the exact sum",
                "leaf_size": "no tree is built",
                "atol": "exact sums satisfy any tolerance",
                "rtol": "exact sums satisfy any tolerance",
                "breadth_first": "no tree is walked",
            },
            derived={"direct": "True: euclidean distances by differences"},
        ),
    )

    def __init__(self, *, bandwidth=1.0, algorithm="auto", kernel="gaussian", metric="euclidean", atol=0, rtol=0,
                 breadth_first=True, leaf_size=40, metric_params=None, device=None, numeric_mode=None):
        self.bandwidth = bandwidth
        self.algorithm = algorithm
        self.kernel = kernel
        self.metric = metric
        self.atol = atol
        self.rtol = rtol
        self.breadth_first = breadth_first
        self.leaf_size = leaf_size
        self.metric_params = metric_params
        self.device = device
        self.numeric_mode = numeric_mode

    def __getstate__(self):
        state = super().__getstate__()
        if "_fit_X" in state:
            state = dict(state, _fit_X=_io.to_host(state["_fit_X"]))
        return state

    def _resolve_metric(self):
        if self.metric not in KDE_METRICS:
            raise ValueError(f"KernelDensity: metric={self.metric!r} is not supported; use one of {KDE_METRICS}")
        params = dict(self.metric_params or {})
        p = float(params.pop("p", 2.0))
        if params:
            raise ValueError(f"KernelDensity: metric_params {sorted(params)} are not supported (only 'p')")
        if self.metric == "minkowski":
            if not p >= 1:
                raise ValueError(f"KernelDensity: minkowski needs p >= 1 in metric_params; got p={p}")
        return _BACKEND_NAME.get(self.metric, self.metric), p

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the kernel density model on X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training rows (NumPy, or a CuPy/PyTorch CUDA array).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows (a positive total).

        Returns
        -------
        self : KernelDensity
            The fitted estimator.
        """
        self._tl_validate_params()
        self._tl_metric = self._resolve_metric()
        device = self._tl_device(X)
        X = _io.check_finite_X(self, X, device, reset=True)
        n, d = X.shape
        if isinstance(self.bandwidth, str):
            if self.bandwidth == "scott":
                self.bandwidth_ = n ** (-1 / (d + 4))
            else:
                self.bandwidth_ = (n * (d + 2) / 4) ** (-1 / (d + 4))
        else:
            self.bandwidth_ = self.bandwidth
        dtype = _io.np_float_dtype(X)
        if sample_weight is not None:
            from sklearn.utils.validation import _check_sample_weight

            sw = _check_sample_weight(_io.to_host(sample_weight), np.empty((n, 0)), dtype=np.float64,
                                      ensure_non_negative=True)
            total = float(np.sum(sw))
            if not total > 0:
                raise ValueError("sample_weight: the weights must have a positive sum")
            self._tl_weights = np.ascontiguousarray(sw, dtype=dtype)
            self._tl_total_weight = total
        else:
            self._tl_weights = None
            self._tl_total_weight = float(n)
        h = np.asarray(self.bandwidth_, dtype=dtype)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"bandwidth={self.bandwidth_!r} is not a positive finite number in {np.dtype(dtype).name}")
        self._fit_X = X
        self._tl_record_fit(device, "identical")
        return self

    def score_samples(self, X):
        """Log of the density at each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The query rows.

        Returns
        -------
        density : ndarray of shape (n_samples,)
            Log density (normalised as scikit-learn's), in the fitted data's
            dtype; -inf where every kernel term is 0.
        """
        check_is_fitted(self)
        device = self._tl_device(X)
        X = _io.as_dtype(_io.check_finite_X(self, X, device, reset=False), self._fit_X.dtype)
        name, p = self._tl_metric
        dtype = _io.np_float_dtype(self._fit_X)
        mod, ctx = self._tl_context(device, X)
        train = _io.place(self._fit_X, device)
        r = mod.kde_log_sum(ctx, train, self._tl_weights, X, metric_struct(mod, name, p, direct=True), self.kernel,
                            float(self.bandwidth_))
        const = log_kernel_norm(float(self.bandwidth_), self.n_features_in_, self.kernel) - math.log(
            self._tl_total_weight)
        return np.asarray(r) + np.asarray(const, dtype=dtype)

    def score(self, X, y=None):
        """Total log-likelihood of the rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The query rows.
        y : None
            Ignored.

        Returns
        -------
        logprob : float
            The sum of ``score_samples(X)`` (in float64).
        """
        return float(np.sum(_io.to_numpy(self.score_samples(X)), dtype=np.float64))

    def sample(self, n_samples=1, random_state=None):
        """Random rows drawn from the model (gaussian and tophat kernels).

        Draws come from the library's counter-based generator seeded from
        `random_state` (the same rows on any machine, not scikit-learn's
        rows): a training row by its weight, then the kernel's offset.

        Parameters
        ----------
        n_samples : int, default=1
            Number of rows to draw.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            The drawn rows (NumPy, the fitted data's dtype).
        """
        check_is_fitted(self)
        if self.kernel not in ("gaussian", "tophat"):
            raise NotImplementedError(f"sample() supports the 'gaussian' and 'tophat' kernels; got {self.kernel!r}")
        if not isinstance(n_samples, numbers.Integral) or isinstance(n_samples, bool) or n_samples < 1:
            raise ValueError(f"n_samples must be an integer >= 1; got {n_samples!r}")
        n_samples = int(n_samples)
        seed = _seed(random_state)
        core = module_for("cpu")
        ctx = core.Context("cpu", 1, "identical", seed, 0)
        data = _io.to_numpy(self._fit_X)
        n, d = data.shape
        u = np.asarray(core.rng_uniform(ctx, seed, 0, 0, n_samples, "float64"))
        if self._tl_weights is None:
            i = np.minimum((u * n).astype(np.int64), n - 1)
        else:
            cum = np.cumsum(self._tl_weights.astype(np.float64))
            i = np.minimum(np.searchsorted(cum, u * cum[-1]), n - 1)
        z = np.asarray(core.rng_normal(ctx, seed, 1, 0, n_samples * d, "float64")).reshape(n_samples, d)
        h = float(self.bandwidth_)
        if self.kernel == "gaussian":
            out = data[i] + h * z
        else:
            from scipy.special import gammainc

            s_sq = np.einsum("ij,ij->i", z, z)
            s_sq = np.where(s_sq > 0, s_sq, np.finfo(np.float64).tiny)
            correction = gammainc(0.5 * d, 0.5 * s_sq) ** (1.0 / d) * h / np.sqrt(s_sq)
            out = data[i] + z * correction[:, None]
        return np.ascontiguousarray(out, dtype=data.dtype)
