"""Ridge and RidgeClassifier on the CPU and CUDA backends.

Every solver name of scikit-learn is accepted; all solve the same penalised
normal equations ``(XᵀX + alpha I) w = Xᵀy`` from the Gram matrix, exactly
(docs/NUMERICS.md, "Linear solves"):

==========================================  ==========================================
solver                                      what runs
==========================================  ==========================================
'auto', 'cholesky', 'lsqr', 'sparse_cg',    Cholesky of the equilibrated system; the
'sag', 'saga'                               eigendecomposition of XᵀX when it is not
                                            numerically positive definite
'svd'                                       the eigendecomposition of XᵀX (the SVD
                                            solution: ``s / (s² + alpha)``)
'lbfgs' (with positive=True; 'auto' too)    non-negative least squares on the Gram
                                            matrix (Lawson-Hanson), exact
==========================================  ==========================================

The iterative solvers of scikit-learn stop at ``tol``; the direct solve is
at least as accurate, so ``max_iter``, ``tol`` and ``random_state`` have no
effect, and ``n_iter_`` is None. ``solver_`` names the path taken:
'cholesky', 'svd' or 'lbfgs'.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, _fit_context
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils import compute_sample_weight
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .. import _native as native
from .._io import (
    check_X_y,
    from_numpy_like,
    host_weights_or_ones,
    is_device_array,
    np_float_dtype,
    to_host,
)
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin
from ._base import (
    GRAM_DERIVED,
    GRAM_PYTHON_ONLY,
    LinearFitMixin,
    LinearRegressorMixin,
    _as_2d_targets,
    scores_to_labels,
)

_SOLVERS = {"auto", "svd", "cholesky", "lsqr", "sparse_cg", "sag", "saga", "lbfgs"}


class _RidgeFit(LinearFitMixin):
    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "fit_intercept": ["boolean"],
        "copy_X": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions(_SOLVERS)],
        "positive": ["boolean"],
        "random_state": ["random_state"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    _tl_native = (
        native.Spec(
            "NormalEquationsOptions",
            fields={"solver": "method", "positive": "method"},
            python_only={**GRAM_PYTHON_ONLY,
                         "alpha": "the penalties: an array argument of the solve, one per target",
                         "max_iter": "no effect: the solve is direct",
                         "tol": "no effect: the solve is direct",
                         "random_state": "no effect: no solver draws random numbers"},
            derived={"tol": "0: no cut-off for ridge systems", **GRAM_DERIVED},
        ),
    )

    def _tl_method(self):
        if self.solver == "lbfgs" and not self.positive:
            raise ValueError("'lbfgs' solver can be used only when positive=True. Please use another solver.")
        if self.positive:
            if self.solver not in ("auto", "lbfgs"):
                raise ValueError(
                    f"solver='{self.solver}' does not support positive fitting. Please"
                    " set the solver to 'auto' or 'lbfgs', or set `positive=False`"
                )
            return "nnls"
        return "eigen" if self.solver == "svd" else "auto"

    def _tl_alpha(self, t, dtype):
        alpha = np.asarray(self.alpha, dtype=np.float64).ravel()
        if alpha.shape[0] not in (1, t):
            raise ValueError(
                "Number of targets and number of penalties do not correspond: %d != %d" % (alpha.shape[0], t)
            )
        if not np.all(np.isfinite(alpha)) or np.any(alpha < 0):
            raise ValueError(f"The 'alpha' parameter must be finite and >= 0; got {self.alpha!r}")
        # scikit-learn rounds alpha to X's dtype.
        return np.broadcast_to(alpha.astype(dtype).astype(np.float64), (t,)).copy()

    def _tl_fit_ridge(self, X, Y, sw, device, on_device, single):
        method = self._tl_method()
        dtype = np_float_dtype(X)
        d = X.shape[1]
        alpha = self._tl_alpha(Y.shape[1], dtype)
        G, x_off, y_off, delivered = self._tl_gram(X, Y, sw, device, on_device)
        coef, _, cholesky, _ = self._tl_solve(G, d, alpha, tol=0.0, dtype=dtype, method=method)
        self._tl_set_coef(coef, x_off, y_off, single, dtype, ravel_single_column=True)
        self.n_iter_ = None
        if method == "nnls":
            self.solver_ = "lbfgs"
        else:
            self.solver_ = "cholesky" if (method == "auto" and cholesky) else "svd"
        self._tl_record_fit(device, delivered)


class Ridge(DeviceScoreMixin, _RidgeFit, LinearRegressorMixin, MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Linear least squares with l2 regularization.

    scikit-learn's :class:`sklearn.linear_model.Ridge` on the CPU backend or a
    GPU: minimizes ``||y - Xw||² + alpha * ||w||²`` from the Gram matrix of the
    centred data (one canonical pass, docs/NUMERICS.md), solved on the host in
    double. See the module documentation for how each ``solver`` maps.

    Parameters
    ----------
    alpha : float or array-like of shape (n_targets,), default=1.0
    fit_intercept : bool, default=True
    copy_X : bool, default=True
        Accepted for compatibility: X is never modified.
    max_iter : int, default=None
        No effect (the solve is direct).
    tol : float, default=1e-4
        No effect (the solve is direct).
    solver : {'auto', 'svd', 'cholesky', 'lsqr', 'sparse_cg', 'sag', 'saga', 'lbfgs'}, default='auto'
    positive : bool, default=False
        Non-negative coefficients, solved exactly by NNLS on the Gram matrix.
    random_state : int, RandomState instance, default=None
        No effect (no solver here draws random numbers).
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    n_iter_ : None
    solver_ : str
        'cholesky', 'svd' or 'lbfgs': the path taken.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.3
    >>> reg = Ridge(alpha=1e-8, device="cpu").fit(X, y)
    >>> np.round(reg.coef_, 4)
    array([ 1. , -2. ,  0.5])
    >>> reg.solver_
    'cholesky'
    """

    def __init__(self, alpha=1.0, *, fit_intercept=True, copy_X=True, max_iter=None, tol=1e-4, solver="auto",
                 positive=False, random_state=None, device=None, numeric_mode=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.positive = positive
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the Ridge regression model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : float or array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        self._tl_method()
        device = self._tl_device(X)
        X, y, sw, on_device = self._tl_check_Xy(X, y, sample_weight, device)
        Y, single = _as_2d_targets(y)
        self._tl_fit_ridge(X, Y, sw, device, on_device, single)
        return self



class RidgeClassifier(DeviceScoreMixin, _RidgeFit, LinearClassifierMixin, BaseEstimator):
    """Classifier using Ridge regression.

    scikit-learn's :class:`sklearn.linear_model.RidgeClassifier`: the targets
    are binarized to {-1, 1} and fitted as a multi-target :class:`Ridge`
    problem (one Gram pass for all classes).

    Parameters
    ----------
    alpha : float or array-like of shape (n_classes,), default=1.0
    fit_intercept : bool, default=True
    copy_X : bool, default=True
    max_iter : int, default=None
        No effect (the solve is direct).
    tol : float, default=1e-4
        No effect (the solve is direct).
    class_weight : dict or 'balanced', default=None
    solver : {'auto', 'svd', 'cholesky', 'lsqr', 'sparse_cg', 'sag', 'saga', 'lbfgs'}, default='auto'
    positive : bool, default=False
    random_state : int, RandomState instance, default=None
        No effect.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) for two classes, else (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : None
    classes_ : ndarray of shape (n_classes,)
    solver_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linear_model import RidgeClassifier
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.1, 0.9], [0.9, 0.2]])
    >>> clf = RidgeClassifier(device="cpu").fit(X, ["a", "b", "a", "b"])
    >>> clf.predict([[0.0, 0.8], [0.8, 0.0]]).tolist()
    ['a', 'b']
    """

    _parameter_constraints: dict = {
        **_RidgeFit._parameter_constraints,
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }
    _tl_native = (
        native.Spec(
            "NormalEquationsOptions",
            fields=_RidgeFit._tl_native[0].fields,
            python_only={**_RidgeFit._tl_native[0].python_only,
                         "class_weight": "multiplies the sample weights (an array argument of the Gram product)"},
            derived=_RidgeFit._tl_native[0].derived,
        ),
    )

    def __init__(self, alpha=1.0, *, fit_intercept=True, copy_X=True, max_iter=None, tol=1e-4, class_weight=None,
                 solver="auto", positive=False, random_state=None, device=None, numeric_mode=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.class_weight = class_weight
        self.solver = solver
        self.positive = positive
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the Ridge classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs) for multi-label
        sample_weight : float or array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        self._tl_method()
        device = self._tl_device(X)
        # Device arrays: NaN and infinities are found by the column statistics (_tl_gram).
        X, y = check_X_y(self, X, y, device, labels=True, find_nonfinite=False)
        on_device = is_device_array(X)
        n = X.shape[0]
        dtype = np_float_dtype(X)
        self._label_binarizer = LabelBinarizer(pos_label=1, neg_label=-1)
        Y = self._label_binarizer.fit_transform(y)
        self.classes_ = self._label_binarizer.classes_
        if not self._label_binarizer.y_type_.startswith("multilabel"):
            y = column_or_1d(y, warn=True)
        sw = host_weights_or_ones(sample_weight, n, dtype, ensure_non_negative=True)
        if self.class_weight:
            sw = sw * compute_sample_weight(self.class_weight, y)
        sw = np.ascontiguousarray(sw, dtype=dtype)
        Y = np.ascontiguousarray(np.asarray(Y, dtype=dtype).reshape(n, -1))
        Y, sw = from_numpy_like(X, Y), from_numpy_like(X, sw)
        self._tl_fit_ridge(X, Y, sw, device, on_device, single=False)
        return self

    def decision_function(self, X):
        """Confidence scores, (n_samples,) for two classes else (n_samples, n_classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : array, the caller's array type
        """
        out = self._tl_decision(X)
        return out.reshape(-1) if out.shape[1] == 1 else out


    def predict(self, X):
        """Class labels for the samples in X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        check_is_fitted(self, attributes=["_label_binarizer"])
        scores = np.asarray(to_host(self.decision_function(X)))
        if self._label_binarizer.y_type_.startswith("multilabel"):
            signs = 2.0 * (scores > 0).astype(scores.dtype) - 1.0
            return self._label_binarizer.inverse_transform(signs)
        return scores_to_labels(self.classes_, scores)
