"""Shared machinery of the linear models, and LinearRegression.

Fitting a least-squares model (LinearRegression, Ridge, RidgeClassifier)
takes one pass over the data for the column statistics (the weighted means
that centre X and y, and the NaN / infinity check) and one pass for the Gram
product ``G = [Xc | yc]ᵀ W [Xc | yc]`` (canonical order on the CPU and the
GPU, cuBLAS on the GPU in fast mode); the d x d solve then runs on the host in
double with the project's own Cholesky and eigensolver (docs/NUMERICS.md,
"Linear solves").
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .. import _native as native
from .. import identity
from .._io import (
    check_sample_weight,
    check_X,
    check_X_y,
    contains_nan,
    empty_like_kind,
    is_device_array,
    np_float_dtype,
    raise_nonfinite_stats,
    sklearn_nonfinite_message,
)
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin, TwinlearnEstimatorMixin


def gram_eps(dtype) -> float:
    """Relative accuracy assumed of the Gram entries (docs/NUMERICS.md): they
    are accumulated in double for float32 and float64 data alike."""
    return 64.0 * float(np.finfo(np.float64).eps)


#: How the normal-equation options that no parameter sets are filled (every least-squares estimator).
GRAM_DERIVED = {"gram_eps": "gram_eps(dtype): the relative accuracy of the Gram entries",
                "max_iter": "0: the NNLS rule, 3 * n_features"}
#: The parameters of every Gram-based estimator that act before the core's solve.
GRAM_PYTHON_ONLY = {"fit_intercept": "the column means centre X and y before the Gram product",
                    "copy_X": "X is never modified"}


def _as_2d_targets(y):
    """y as (n, t) and whether it was 1-D."""
    if y.ndim == 1:
        return y.reshape(-1, 1), True
    return y, False


class LinearFitMixin(TwinlearnEstimatorMixin):
    """Input handling, the Gram pass, the host solve and the decision function
    shared by the least-squares estimators."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags

    # -- input -----------------------------------------------------------------
    def _tl_check_Xy(self, X, y, sample_weight, device):
        """(X, y, sample_weight, on_device) ready for the backend of `device`.

        NumPy input is validated by scikit-learn (finite values included);
        device arrays are taken zero-copy and checked for NaN and infinity by
        the column-statistics pass (see _tl_gram)."""
        X, y = check_X_y(self, X, y, device, find_nonfinite=False)
        return X, y, check_sample_weight(sample_weight, X, ensure_non_negative=True), is_device_array(X)

    # -- the Gram pass ---------------------------------------------------------
    def _tl_gram(self, X, Y, sample_weight, device, on_device):
        """Centre (when fitting an intercept) and form the augmented Gram matrix.

        Returns (G, x_offset, y_offset, delivered_mode); the offsets are in X's
        dtype, zero without an intercept."""
        mod, ctx = self._tl_context(device, X)
        dtype = np_float_dtype(X)
        n, d = X.shape
        t = Y.shape[1]
        G = stats_x = stats_y = None
        if sample_weight is None and (self.fit_intercept or on_device):
            # Statistics and Gram matrix in one call (in fast mode on a GPU,
            # one pass over X: see twinlearn/core/gram.hpp, gram_moments).
            r = mod.gram_moments(ctx, X, Y, bool(self.fit_intercept))
            G, stats, delivered = r.gram, np.asarray(r.stats), r.delivered
            stats_x, stats_y = stats[:, :d], stats[:, d:]
        elif self.fit_intercept or on_device:
            stats_y = np.asarray(mod.column_stats(ctx, Y, sample_weight))
            stats_x = np.asarray(mod.column_stats(ctx, X, sample_weight))
        if on_device:
            raise_nonfinite_stats(stats_y, n, "y")
            raise_nonfinite_stats(stats_x, n, "X")
        offset = None
        if self.fit_intercept:
            if sample_weight is not None and not stats_x[0][0] > 0:
                raise ValueError("Weights sum to zero, can't be normalized")
            x_off = stats_x[1].astype(dtype)
            y_off = stats_y[1].astype(dtype)
            offset = np.ascontiguousarray(np.concatenate([x_off, y_off]))
        else:
            x_off = np.zeros(d, dtype=dtype)
            y_off = np.zeros(t, dtype=dtype)
        identity.record(f"{type(self).__name__}.offsets", np.concatenate([x_off, y_off]))
        if G is None:
            r = mod.gram(ctx, X, Y, sample_weight, offset)
            G, delivered = r.gram, r.delivered
        G = np.asarray(G)
        identity.record(f"{type(self).__name__}.gram", G)
        return G, x_off, y_off, delivered

    def _tl_solve(self, G, d, alpha, *, tol, dtype, method):
        from .. import _backend

        core = _backend.core()
        options = native.params(core.NormalEquationsOptions, tol=float(tol), gram_eps=gram_eps(dtype), method=method,
                                max_iter=0)
        r = core.solve_normal_equations(G, d, np.ascontiguousarray(alpha, dtype=np.float64), options)
        return np.asarray(r.coef), int(r.rank), bool(r.cholesky), int(r.n_iter)

    def _tl_set_coef(self, coef, x_off, y_off, single_target, dtype, ravel_single_column=False):
        """coef_ and intercept_ in X's dtype, as scikit-learn's _set_intercept:
        intercept = y_offset - X_offset @ coef_ (one fma chain, then a subtraction).

        single_target: y was 1-D (coef_ 1-D, intercept_ a scalar).
        ravel_single_column: coef_ 1-D whenever there is one target (Ridge)."""
        from .. import _backend

        coef = np.ascontiguousarray(coef, dtype=dtype)
        if self.fit_intercept:
            zero = np.zeros(coef.shape[0], dtype=dtype)
            chain = np.empty((1, coef.shape[0]), dtype=dtype)
            mod = _backend.core()
            ctx = mod.Context("cpu", 1, "identical", 0, 0)
            mod.linear_decision(ctx, np.ascontiguousarray(x_off.reshape(1, -1)), coef, zero, chain)
            intercept = (y_off - chain[0]).astype(dtype)
        else:
            intercept = None
        identity.record(f"{type(self).__name__}.coef_", coef)
        self.coef_ = coef[0].copy() if (single_target or (ravel_single_column and coef.shape[0] == 1)) else coef
        if intercept is None:
            self.intercept_ = 0.0
        else:
            self.intercept_ = intercept[0] if single_target else intercept

    # -- prediction ------------------------------------------------------------
    def _tl_decision(self, X):
        """X @ coef_.T + intercept_ as (n, t), in the caller's array type."""
        check_is_fitted(self)
        device = self._tl_device(X)
        # Non-finite entries are counted by the product itself.
        X = check_X(self, X, device, reset=False, for_fit=True, find_nonfinite=False)
        dtype = np_float_dtype(X)
        coef = np.atleast_2d(np.asarray(self.coef_)).astype(dtype)
        coef = np.ascontiguousarray(coef)
        intercept = np.ascontiguousarray(
            np.broadcast_to(np.asarray(self.intercept_, dtype=dtype), (coef.shape[0],)), dtype=dtype
        )
        out = empty_like_kind(X, (X.shape[0], coef.shape[0]), dtype)
        mod, ctx = self._tl_context(device, X)
        if mod.linear_decision(ctx, X, coef, intercept, out):
            raise ValueError(sklearn_nonfinite_message(None, np.nan if contains_nan(X) else np.inf, np.float64))
        return out


def _ravel_single(out, single):
    if not single:
        return out
    return out.reshape(-1)


def scores_to_labels(classes, scores):
    """The classes of the host decision scores (n_samples,) or (n_samples,
    n_classes) of a linear classifier."""
    idx = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
    return classes[idx]


class LinearRegressorMixin:
    """predict of the linear regressors."""

    def predict(self, X):
        """Predict using the linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : array of shape (n_samples,) or (n_samples, n_targets), the caller's array type
        """
        return _ravel_single(self._tl_decision(X), np.ndim(self.coef_) == 1)


class LinearRegression(DeviceScoreMixin, LinearFitMixin, LinearRegressorMixin, MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Ordinary least squares linear regression.

    scikit-learn's :class:`sklearn.linear_model.LinearRegression` on the CPU
    backend or a GPU. The model is fitted from the Gram matrix of the centred
    (and ``sqrt(sample_weight)``-scaled) data, computed in one canonical pass
    (docs/NUMERICS.md); the normal equations are solved on the host in double
    by Cholesky when well conditioned, and otherwise by the eigendecomposition
    of ``XᵀX``, which gives scikit-learn's minimum-norm solution for
    rank-deficient or ill-conditioned ``X`` (never NaN).

    Parameters
    ----------
    fit_intercept : bool, default=True
    copy_X : bool, default=True
        Accepted for compatibility: X is never modified.
    tol : float, default=1e-6
        As scikit-learn: singular values of the centred X below
        ``tol * s_max`` count as zero (rank deficiency).
    n_jobs : int, default=None
        Accepted for compatibility; CPU threads come from
        :func:`twinlearn.set_n_threads`.
    positive : bool, default=False
        Non-negative coefficients (Lawson-Hanson NNLS on the Gram matrix).
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    rank_ : int
        Numerical rank of the centred X (not set when ``positive=True``).
    singular_ : ndarray of shape (min(n_samples, n_features),)
        Singular values of the centred X, from the eigenvalues of ``XᵀX``
        (computed on first access; not set when ``positive=True``).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linear_model import LinearRegression
    >>> X = np.array([[1.0, 1.0], [1.0, 2.0], [2.0, 2.0], [2.0, 3.0]])
    >>> y = X @ np.array([1.0, 2.0]) + 3.0
    >>> reg = LinearRegression(device="cpu").fit(X, y)
    >>> np.round(reg.coef_, 6), round(float(reg.intercept_), 6)
    (array([1., 2.]), 3.0)
    >>> reg.rank_
    2
    """

    _parameter_constraints: dict = {
        "fit_intercept": ["boolean"],
        "copy_X": ["boolean"],
        "n_jobs": [None, Integral],
        "positive": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        **TL_PARAMETER_CONSTRAINTS,
    }

    _tl_native = (
        native.Spec(
            "NormalEquationsOptions",
            fields={"tol": "tol", "positive": "method"},
            python_only={**GRAM_PYTHON_ONLY, "n_jobs": "CPU threads come from twinlearn.set_n_threads"},
            derived=GRAM_DERIVED,
        ),
    )

    def __init__(self, *, fit_intercept=True, copy_X=True, tol=1e-6, n_jobs=None, positive=False, device=None,
                 numeric_mode=None):
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.tol = tol
        self.n_jobs = n_jobs
        self.positive = positive
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch device arrays (used zero-copy).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        for attr in ("rank_", "_tl_xtx", "_tl_singular", "_tl_n_samples"):
            if attr in self.__dict__:
                delattr(self, attr)
        device = self._tl_device(X)
        X, y, sw, on_device = self._tl_check_Xy(X, y, sample_weight, device)
        Y, single = _as_2d_targets(y)
        dtype = np_float_dtype(X)
        n, d = X.shape
        G, x_off, y_off, delivered = self._tl_gram(X, Y, sw, device, on_device)
        t = Y.shape[1]
        method = "nnls" if self.positive else "auto"
        coef, rank, _, _ = self._tl_solve(G, d, np.zeros(t), tol=self.tol, dtype=dtype, method=method)
        self._tl_set_coef(coef, x_off, y_off, single, dtype)
        if not self.positive:
            self.rank_ = rank
            self._tl_xtx = np.ascontiguousarray(G[:d, :d])
            self._tl_n_samples = n
            self._tl_dtype = dtype
        self._tl_record_fit(device, delivered)
        return self

    @property
    def singular_(self):
        """Singular values of the centred (weighted) X, largest first."""
        if "_tl_singular" not in self.__dict__:
            if "_tl_xtx" not in self.__dict__:
                raise AttributeError("'LinearRegression' object has no attribute 'singular_'")
            from .. import _backend

            lam = _backend.core().symmetric_eigh(self._tl_xtx, False).eigenvalues
            s = np.sqrt(np.maximum(np.asarray(lam)[::-1], 0.0))
            self._tl_singular = s[: min(self._tl_n_samples, s.shape[0])].astype(self._tl_dtype)
        return self._tl_singular
