"""TruncatedSVD on the CPU and CUDA backends."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._io import np_float_dtype
from ..base import TL_PARAMETER_CONSTRAINTS
from . import _solvers
from ._base import BaseProjection, apply_input, back_project, fit_input, project


class TruncatedSVD(BaseProjection):
    """Dimensionality reduction by truncated SVD of the (uncentred) data.

    scikit-learn's :class:`sklearn.decomposition.TruncatedSVD` for dense data
    on the CPU backend or a GPU.

    ``algorithm='randomized'`` is Halko et al.'s randomized SVD with the
    project's random generator (``random_state`` seeds it; the same bits on
    every backend). When min(n_samples, n_features) is small the power
    iterations run on that side's Gram matrix (``XᵀX`` or ``XXᵀ``, one pass
    over the data on the backend), otherwise on tall iterates on the backend.
    In ``fast`` mode on a GPU, when that Gram matrix is ``XᵀX``, the solver
    takes its exact leading eigenpairs from the device's eigensolver instead
    of the power iterations they approximate (``n_iter``, ``n_oversamples``
    and ``random_state`` then change nothing).
    ``algorithm='arpack'`` is computed exactly: the eigendecomposition of
    ``XᵀX`` when n_samples >= n_features, else the SVD of X on the host, with
    ARPACK's constraint ``n_components < min(X.shape)``; ``tol`` is met trivially.
    Components follow scikit-learn's sign rule. The projections, variances and
    products run on the backend; in ``identical`` and ``deterministic`` mode
    with the canonical kernels (the same bits on the CPU and any GPU), in
    ``fast`` mode on a GPU with cuBLAS. The host steps (eigendecomposition,
    SVD, QR, small products) use LAPACK and BLAS, except in ``identical``
    mode: fixed-order code there (Jacobi eigensolver and SVD, Householder
    QR, canonical products), the same bits on every machine.

    Parameters
    ----------
    n_components : int, default=2
    algorithm : {'arpack', 'randomized'}, default='randomized'
    n_iter : int, default=5
        Power iterations of the randomized solver.
    n_oversamples : int, default=10
    power_iteration_normalizer : {'auto', 'QR', 'LU', 'none'}, default='auto'
        scikit-learn's choice of normalization between power iterations;
        every choice spans the same space, and here the iterates are always
        orthonormalized (the most stable choice).
    random_state : int, RandomState instance or None, default=None
    tol : float, default=0.0
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    explained_variance_ : ndarray of shape (n_components,)
    explained_variance_ratio_ : ndarray of shape (n_components,)
    singular_values_ : ndarray of shape (n_components,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn import TruncatedSVD
    >>> X = np.array([[3.0, 1.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 1.0], [2.0, 2.0, 0.0]])
    >>> svd = TruncatedSVD(n_components=2, random_state=0, device="cpu").fit(X)
    >>> svd.singular_values_.round(4)
    array([4.899, 2.   ])
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "algorithm": [StrOptions({"arpack", "randomized"})],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "n_oversamples": [Interval(Integral, 1, None, closed="left")],
        "power_iteration_normalizer": [StrOptions({"auto", "QR", "LU", "none"})],
        "random_state": ["random_state"],
        "tol": [Interval(Real, 0, None, closed="left")],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        n_components=2,
        *,
        algorithm="randomized",
        n_iter=5,
        n_oversamples=10,
        power_iteration_normalizer="auto",
        random_state=None,
        tol=0.0,
        device=None,
        numeric_mode=None,
    ):
        self.algorithm = algorithm
        self.n_components = n_components
        self.n_iter = n_iter
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.tol = tol
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the model on X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch CUDA arrays (kept on their device).
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._fit(X, transform=False)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Fit the model on X and reduce X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        X_new : array of shape (n_samples, n_components), the caller's array type
        """
        return self._fit(X, transform=True)

    def _fit(self, X, transform):
        """Fit; with `transform`, return X reduced (else None).

        explained_variance_ is the variance of each column of the reduced X,
        as scikit-learn's. When the solver formed G = XᵀX (n >= d), that is
        vᵀGv / n - (v·mean)² for each component v (host, float64), the same in
        fit and fit_transform and no pass over the data; otherwise the
        reduced X's column variances."""
        X, backend, device = fit_input(self, X, min_features=2, finite_by_stats=True)
        n, d = X.shape
        k = self.n_components
        # XᵀX, when a solver takes it, comes with the column statistics.
        if n >= d and (self.algorithm == "arpack"
                       or _solvers.use_gram_route(n, d, k, self.n_oversamples, self.n_iter)):
            _, mean, m2, G = backend.stats_with_gram(X, center=False)
            backend.record("gram", G)
        else:
            (_, mean, m2), G = backend.column_stats(X, require_finite=True), None
        dtype = np_float_dtype(X).type
        if self.algorithm == "arpack":
            if not 0 < k < min(n, d):
                raise ValueError(f"`k` must be an integer satisfying `0 < k < min(A.shape)`, got k={k}.")
            Vt, S, G = self._exact(backend, X, k, G)
        else:
            if k > d:
                raise ValueError(f"n_components({k}) must be <= n_features({d}).")
            Vt, S, G = self._randomized(backend, X, k, G)
        _solvers.svd_flip_rows(Vt)
        self.components_ = np.ascontiguousarray(Vt, dtype=dtype)
        backend.record("components_", self.components_)

        X_new = None
        if transform or G is None:
            X_new = project(backend, X, self.components_)
            backend.record("transform", X_new)
        with np.errstate(divide="ignore", invalid="ignore"):
            if G is not None:
                V = self.components_.astype(np.float64)
                if backend.exact_host:  # the canonical products: BLAS's differ between CPUs
                    GV = _solvers.host_matmul(G, V.T, True)
                    Vm = _solvers.host_matmul(V, mean[:, None], True)[:, 0]
                else:
                    GV, Vm = G @ V.T, V @ mean
                quad = np.sum(V.T * GV, axis=0)
                exp_var = np.maximum(quad / n - Vm ** 2, 0.0)
            else:
                exp_var = backend.column_stats(X_new)[2] / n
            full_var = (m2 / n).sum()
            self.explained_variance_ = exp_var.astype(dtype)
            self.explained_variance_ratio_ = (exp_var / full_var).astype(dtype)
        self.singular_values_ = np.asarray(S, dtype=dtype)
        with np.errstate(over="ignore"):
            squares = np.square(np.asarray(S, dtype=np.float64)) / n  # the variances are below them
        backend.check_overflow(X, "its singular values or variances overflow", self.components_,
                               self.explained_variance_, self.singular_values_, squares,
                               find_nan=False)
        self._tl_record_fit(device, backend.delivered)
        return backend.result(X_new) if transform else None

    def _exact(self, backend, X, k, G):
        """G: XᵀX when n >= d, else None."""
        if G is not None:
            return (*_leading_from_gram(backend, G, k), G)
        _, S, Vt = _solvers.host_svd(np.asarray(backend.host(X), dtype=np.float64), backend.exact_host,
                                     compute_u=False, owner=backend.tag)
        return Vt[:k].copy(), S[:k], None

    def _randomized(self, backend, X, k, G):
        """G: XᵀX when the solver takes it (the Gram route with n >= d), else None."""
        n, d = X.shape
        seed = _solvers.seed_from(self.random_state)
        p = self.n_oversamples
        if G is not None:
            side = "right"
        elif _solvers.use_gram_route(n, d, k, p, self.n_iter):
            side, G = "left", np.asarray(backend.host(backend.matmul(X, False, X, True, like=np.empty(0))),
                                         dtype=np.float64)
            backend.record("gram", G)
        else:
            side = "tall"
        if side == "right" and backend.eigh_on_device:
            # Fast mode on a GPU: the exact leading eigenpairs of XᵀX from the
            # device's solver (what the power iterations approximate; 1.4 ms
            # on the device against about 4 ms of host iterations for 256 x 256).
            Vt, S = _leading_from_gram(backend, G, k)
            return Vt, S, G
        Vt, S = _solvers.randomized_right(backend, X, G, side, k, p, self.n_iter, seed)
        rank_limit = min(k, n, d)
        if len(S) < rank_limit:
            Vt = _solvers.complete_rows(Vt, rank_limit, seed, offset=(k + p) * max(n, d), exact=backend.exact_host)
            S = np.concatenate([S, np.zeros(rank_limit - len(S))])
        return Vt, S, (G if side == "right" else None)

    def transform(self, X):
        """Reduce X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : array of shape (n_samples, n_components), the caller's array type
        """
        X, backend = apply_input(self, X)
        out = project(backend, X, self.components_)
        backend.record("transform", out)
        return backend.result(out)

    def inverse_transform(self, X):
        """Transform X back to its original space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)

        Returns
        -------
        X_original : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        out, backend = back_project(self, X, np.asarray(self.components_), "n_components",
                                          reject_nonfinite=False)
        return backend.result(out)


def _leading_from_gram(backend, G, k):
    """The k leading right singular vectors (rows) and singular values of X
    from G = XᵀX: its eigenpairs, negative rounding clipped to zero."""
    lam, V = backend.eigh_desc(G, k)
    lam = np.where(lam < 0.0, 0.0, lam)
    return V[:, :k].T.copy(), np.sqrt(lam[:k])
