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
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .. import _array, identity
from .._labels import labels_like
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin, TwinlearnEstimatorMixin

_FLOAT_DTYPES = (np.float64, np.float32)


def _nonfinite_message(name, has_nan):
    if has_nan:
        return f"Input {name} contains NaN."
    return f"Input {name} contains infinity or a value too large for dtype('float64')."


def _raise_nonfinite(stats, name, n):
    """scikit-learn's error when the column statistics count a NaN or an
    infinity among the n entries of each column."""
    if stats[4].any() or (stats[3] < n).any():
        raise ValueError(_nonfinite_message(name, bool((stats[3] + stats[4] < n).any())))


def gram_eps(dtype) -> float:
    """Relative accuracy assumed of the Gram entries (docs/NUMERICS.md): they
    are accumulated in double for float32 and float64 data alike."""
    return 64.0 * float(np.finfo(np.float64).eps)


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
    def _tl_check_Xy(self, X, y, sample_weight, device, *, y_numeric=True, multi_output=True):
        """(X, y, sample_weight) ready for the backend of `device`.

        NumPy input is validated by scikit-learn (finite values included);
        device arrays are taken zero-copy and checked for NaN and infinity by
        the column-statistics pass (see _tl_gram)."""
        on_device = _array.is_device_array(X) and device != "cpu"
        if not on_device:
            if _array.is_device_array(X):
                X = _array.to_numpy(X)
            if _array.is_device_array(y):
                y = _array.to_numpy(y)
            X, y = validate_data(
                self, X, y, dtype=_FLOAT_DTYPES, y_numeric=y_numeric, multi_output=multi_output, order="C",
            )
            y = np.ascontiguousarray(y, dtype=X.dtype)
            if sample_weight is not None:
                if _array.is_device_array(sample_weight):
                    sample_weight = _array.to_numpy(sample_weight)
                sample_weight = np.ascontiguousarray(
                    _check_sample_weight(sample_weight, X, dtype=X.dtype, ensure_non_negative=True)
                )
            return X, y, sample_weight, False
        X = _array.as_device_matrix(X, "X")
        n, d = X.shape
        if n < 1 or d < 1:
            what = "sample" if n < 1 else "feature"
            raise ValueError(
                f"Found array with 0 {what}(s) (shape={tuple(X.shape)}) while a minimum of 1 is "
                f"required by {type(self).__name__}."
            )
        self.n_features_in_ = d
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        if not _array.is_device_array(y):
            y = _array.from_numpy_like(X, np.asarray(y, dtype=X.dtype))
        y = _array.as_device_matrix(y, "y", ensure_2d=False)
        if y.dtype != X.dtype:
            y = y.astype(X.dtype) if _array.kind(y) != "torch" else y.to(X.dtype)
        if y.shape[0] != n:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]")
        if sample_weight is not None:
            if _array.is_device_array(sample_weight):
                sw = _array.as_device_matrix(sample_weight, "sample_weight", ensure_2d=False)
                if sw.dtype != X.dtype:
                    sw = sw.astype(X.dtype) if _array.kind(sw) != "torch" else sw.to(X.dtype)
                if sw.ndim != 1 or sw.shape[0] != n:
                    raise ValueError(f"sample_weight.shape == {tuple(sw.shape)}, expected ({n},)!")
                if bool((sw < 0).any()):
                    raise ValueError("Negative values in data passed to `sample_weight`")
                sample_weight = sw
            else:
                sw = _check_sample_weight(
                    _array.to_numpy(sample_weight), np.empty((n, 0)), dtype=X.dtype, ensure_non_negative=True
                )
                sample_weight = _array.from_numpy_like(X, np.ascontiguousarray(sw))
        return X, y, sample_weight, True

    # -- the Gram pass ---------------------------------------------------------
    def _tl_gram(self, X, Y, sample_weight, device, on_device):
        """Centre (when fitting an intercept) and form the augmented Gram matrix.

        Returns (G, x_offset, y_offset, delivered_mode); the offsets are in X's
        dtype, zero without an intercept."""
        mod, ctx = self._tl_context(device, X)
        dtype = np.dtype(str(X.dtype).split(".")[-1])
        n, d = X.shape
        t = Y.shape[1]
        G = stats_x = stats_y = None
        if sample_weight is None and (self.fit_intercept or on_device):
            # Statistics and Gram matrix in one call (in fast mode on a GPU,
            # one pass over X: see twinlearn/core/gram.hpp, gram_moments).
            G, stats, delivered = mod.gram_moments(ctx, X, Y, bool(self.fit_intercept))
            stats = np.asarray(stats)
            stats_x, stats_y = stats[:, :d], stats[:, d:]
        elif self.fit_intercept or on_device:
            stats_y = np.asarray(mod.column_stats(ctx, Y, sample_weight))
            stats_x = np.asarray(mod.column_stats(ctx, X, sample_weight))
        if on_device:
            _raise_nonfinite(stats_y, "y", n)
            _raise_nonfinite(stats_x, "X", n)
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
            G, delivered = mod.gram(ctx, X, Y, sample_weight, offset)
        G = np.asarray(G)
        identity.record(f"{type(self).__name__}.gram", G)
        return G, x_off, y_off, delivered

    def _tl_solve(self, G, d, alpha, *, tol, dtype, method):
        from .. import _backend

        coef, rank, cholesky, n_iter = _backend.core().solve_normal_equations(
            G, d, np.ascontiguousarray(alpha, dtype=np.float64), float(tol), gram_eps(dtype), method
        )
        return np.asarray(coef), int(rank), bool(cholesky), int(n_iter)

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
        if _array.is_device_array(X) and device != "cpu":
            X = _array.as_device_matrix(X, "X")
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
        else:
            if _array.is_device_array(X):
                X = _array.to_numpy(X)
            X = validate_data(self, X, dtype=_FLOAT_DTYPES, reset=False, order="C", ensure_all_finite=False)
        dtype = np.dtype(str(X.dtype).split(".")[-1])
        coef = np.atleast_2d(np.asarray(self.coef_)).astype(dtype)
        coef = np.ascontiguousarray(coef)
        intercept = np.ascontiguousarray(
            np.broadcast_to(np.asarray(self.intercept_, dtype=dtype), (coef.shape[0],)), dtype=dtype
        )
        out = _array.empty_like_kind(X, (X.shape[0], coef.shape[0]), dtype)
        mod, ctx = self._tl_context(device, X)
        if mod.linear_decision(ctx, X, coef, intercept, out):
            has_nan = _array.device_any(X, "nan") if _array.is_device_array(X) else bool(np.isnan(X).any())
            raise ValueError(_nonfinite_message("X", has_nan))
        return out


def _ravel_single(out, single):
    if not single:
        return out
    return out.reshape(-1)


def scores_to_labels(X, classes, scores):
    """The classes of the decision scores (n_samples,) or (n_samples, n_classes)
    of a linear classifier: on X's device when X is a device array and the
    labels are numeric."""
    idx = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
    return labels_like(X, classes[idx])


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
        dtype = np.dtype(str(X.dtype).split(".")[-1])
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

            lam, _ = _backend.core().symmetric_eigh(self._tl_xtx, False)
            s = np.sqrt(np.maximum(np.asarray(lam)[::-1], 0.0))
            self._tl_singular = s[: min(self._tl_n_samples, s.shape[0])].astype(self._tl_dtype)
        return self._tl_singular
