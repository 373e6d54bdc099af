"""LogisticRegression on the CPU and CUDA backends.

The objective is scikit-learn's (docs/NUMERICS.md, "Logistic regression"):
``sum_i s_i loss_i + (1 - l1_ratio) / (2 C) ||w||² + l1_ratio / C ||w||₁``
(normalised by the sum of the sample weights), binary or multinomial. It is
minimised by L-BFGS (strong Wolfe line search, 10 correction pairs), or by
its orthant-wise variant OWL-QN when there is an l1 part. On a GPU the whole
optimisation loop runs on the device.

Solver names map as follows:

==============================================  ===================================
solver                                          what runs
==============================================  ===================================
'lbfgs', 'newton-cg', 'newton-cholesky', 'sag'  L-BFGS (penalty l2 or none, as in
                                                scikit-learn)
'saga'                                          OWL-QN for l1 / elasticnet, L-BFGS
                                                for l2 / none
'liblinear'                                     refused: it penalises the intercept,
                                                a different objective
==============================================  ===================================

Stopping: the largest absolute (pseudo-)gradient entry at most ``tol / 4``
(scikit-learn's lbfgs stops at ``tol``; the tighter rule leaves the objective
at least as low as scikit-learn's, at the price of a few more iterations), a
relative decrease of the objective below ``64 * eps`` (as scikit-learn), or
``max_iter`` iterations, with a ConvergenceWarning unless scikit-learn's rule
(``tol``) holds at that point.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils import compute_class_weight
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _native as native
from .. import identity
from .._io import check_X_y, empty_like_kind, from_numpy_like, host_weights_or_ones, np_float_dtype, to_host
from .._labels import encode_classes
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin
from ._base import LinearFitMixin, scores_to_labels

# The run continues until the largest (pseudo-)gradient entry is at most
# tol / 4, so that the objective ends at least as low as scikit-learn's (which
# stops at tol); a run cut by max_iter counts as converged (no warning) when
# scikit-learn's own rule, tol, holds.
_GTOL_FACTOR = 0.25
#: The optimizer's fixed rules: a relative decrease of the objective below
#: 64 * eps stops it (as scikit-learn), 10 correction pairs, 50 evaluations
#: per line search.
_FTOL = 64 * float(np.finfo(np.float64).eps)
_MEMORY = 10
_MAX_LINESEARCH = 50

_STATUS_MESSAGES = {
    1: "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT",
    2: "ABNORMAL: the line search found no acceptable step",
    3: "ABNORMAL: the objective is not finite",
}


class LogisticRegression(DeviceScoreMixin, LinearFitMixin, LinearClassifierMixin, BaseEstimator):
    """Logistic regression (binary or multinomial) by L-BFGS / OWL-QN.

    scikit-learn's :class:`sklearn.linear_model.LogisticRegression` on the
    CPU backend or a GPU, with the same parameters, defaults, fitted
    attributes and objective; see the module documentation for how each
    ``solver`` maps. The loss, gradient and optimizer steps follow one
    canonical order, so every numeric mode delivers ``identical``: the CPU and
    the GPU compute the same iterates, bit for bit.

    Parameters
    ----------
    penalty : {'l1', 'l2', 'elasticnet', None}, default='deprecated'
        Deprecated in scikit-learn 1.8: use ``l1_ratio`` and ``C``.
    C : float, default=1.0
        Inverse regularization strength; ``np.inf`` means no penalty.
    l1_ratio : float, default=0.0
    dual : bool, default=False
        Only False.
    tol : float, default=1e-4
    fit_intercept : bool, default=True
    intercept_scaling : float, default=1
        Used by 'liblinear' only (which is refused).
    class_weight : dict or 'balanced', default=None
    random_state : int, RandomState instance or None, default=None
        No effect (the solvers here draw no random numbers).
    solver : {'lbfgs', 'liblinear', 'newton-cg', 'newton-cholesky', 'sag', 'saga'}, default='lbfgs'
    max_iter : int, default=100
    verbose : int, default=0
        No effect.
    warm_start : bool, default=False
    n_jobs : int, default=None
        No effect (as in scikit-learn >= 1.8).
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_iter_ : ndarray of shape (1,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linear_model import LogisticRegression
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> clf = LogisticRegression(device="cpu").fit(X, [0, 0, 1, 1])
    >>> clf.predict([[-3.0], [3.0]]).tolist()
    [0, 1]
    """

    _parameter_constraints: dict = {
        "penalty": [StrOptions({"l1", "l2", "elasticnet"}), None, Hidden(StrOptions({"deprecated"}))],
        "C": [Interval(Real, 0, None, closed="right")],
        "l1_ratio": [Interval(Real, 0, 1, closed="both"), None],
        "dual": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "random_state": ["random_state"],
        "solver": [StrOptions({"lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga"})],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "n_jobs": [None, Integral],
        **TL_PARAMETER_CONSTRAINTS,
    }

    _tl_native = (
        native.Spec(
            "LogisticOptions",
            fields={"penalty": ("l2", "l1"), "C": ("l2", "l1"), "l1_ratio": ("l2", "l1"),
                    "fit_intercept": "fit_intercept", "max_iter": "max_iter", "tol": ("gtol", "gtol_converged")},
            python_only={"dual": "only False",
                         "intercept_scaling": "used by 'liblinear' only, which is refused",
                         "class_weight": "multiplies the sample weights (an array argument, and their sum)",
                         "random_state": "no effect: the solvers draw no random numbers",
                         "solver": "checked against the penalty; L-BFGS, or OWL-QN with an l1 part",
                         "verbose": "no effect",
                         "warm_start": "the starting coefficients: an array argument",
                         "n_jobs": "no effect"},
            derived={"n_classes": "the classes of y",
                     "sum_weights": "the sum of the (class-weighted) sample weights, n without weights",
                     "ftol": "64 * eps, as scikit-learn", "memory": "10 correction pairs",
                     "max_linesearch": "50 evaluations per line search"},
        ),
    )

    def __init__(self, penalty="deprecated", *, C=1.0, l1_ratio=0.0, dual=False, tol=1e-4, fit_intercept=True,
                 intercept_scaling=1, class_weight=None, random_state=None, solver="lbfgs", max_iter=100,
                 verbose=0, warm_start=False, n_jobs=None, device=None, numeric_mode=None):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    # -- parameters --------------------------------------------------------------
    def _resolve_penalty(self):
        """(penalty, C, l1_ratio) as scikit-learn 1.9 resolves them, with its warnings."""
        if self.penalty == "deprecated":
            if self.l1_ratio == 0 or self.l1_ratio is None:
                penalty = "l2"
                if self.l1_ratio is None:
                    warnings.warn(
                        "'l1_ratio=None' was deprecated in version 1.8 and will trigger an error in 1.10. "
                        "Use 0<=l1_ratio<=1 instead.", FutureWarning,
                    )
            elif self.l1_ratio == 1:
                penalty = "l1"
            else:
                penalty = "elasticnet"
            if self.C == np.inf:
                penalty = None
        else:
            penalty = self.penalty
            warnings.warn(
                "'penalty' was deprecated in version 1.8 and will be removed in 1.10. To avoid this warning, "
                "leave 'penalty' set to its default value and use 'l1_ratio' or 'C' instead.", FutureWarning,
            )
        solver = self.solver
        if solver not in ("liblinear", "saga") and penalty not in ("l2", None):
            raise ValueError(f"Solver {solver} supports only 'l2' or None penalties, got {penalty} penalty.")
        if solver != "liblinear" and self.dual:
            raise ValueError(f"Solver {solver} supports only dual=False, got dual={self.dual}")
        if penalty == "elasticnet" and solver != "saga":
            raise ValueError(f"Only 'saga' solver supports elasticnet penalty, got solver={solver}.")
        if solver == "liblinear":
            raise ValueError(
                "solver='liblinear' is not supported by twinlearn's LogisticRegression: it penalizes the "
                "intercept (a different objective). Use solver='lbfgs' (l2 or no penalty) or 'saga' "
                "(l1, l2 or elasticnet)."
            )
        if penalty == "elasticnet" and self.l1_ratio is None:
            raise ValueError("l1_ratio must be specified when penalty is elasticnet.")
        if penalty != "elasticnet" and self.l1_ratio is not None and 0 < self.l1_ratio < 1:
            warnings.warn(f"l1_ratio parameter is only used when penalty is 'elasticnet'. Got (penalty={penalty})")
        if self.n_jobs is not None:
            warnings.warn(
                f"'n_jobs' has no effect since 1.8 and will be removed in 1.10. You provided "
                f"'n_jobs={self.n_jobs}', please leave it unspecified.", FutureWarning,
            )
        C = self.C
        if self.penalty is None:
            if self.C != 1.0:
                warnings.warn("Setting penalty=None will ignore the C and l1_ratio parameters")
            penalty, C = None, np.inf
        if penalty is None or C == np.inf:
            return 0.0, 0.0
        rho = {"l2": 0.0, "l1": 1.0}.get(penalty, self.l1_ratio)
        return (1.0 - rho) / C, rho / C

    # -- fit -----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch device arrays (used zero-copy).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        l2_total, l1_total = self._resolve_penalty()
        device = self._tl_device(X)
        X, y = check_X_y(self, X, y, device, labels=True, multi_output=False)
        n, d = X.shape
        dtype = np_float_dtype(X)
        classes, y_idx = encode_classes(np.ravel(y))
        self.classes_ = classes
        n_classes = classes.shape[0]
        if n_classes < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data contains only "
                "one class: %r" % classes[0]
            )
        sample_weight = to_host(sample_weight)
        sw = None
        if sample_weight is not None or self.class_weight is not None:
            sw = host_weights_or_ones(sample_weight, n, dtype)
            if self.class_weight is not None:
                cw = compute_class_weight(self.class_weight, classes=classes, y=y, sample_weight=sample_weight)
                sw = (sw * cw[y_idx].astype(dtype)).astype(dtype)
            sw = np.ascontiguousarray(sw)
            sum_w = math.fsum(sw.astype(np.float64))
        else:
            sum_w = float(n)
        if not sum_w > 0:
            raise ValueError("The sample weights sum to zero: nothing to fit.")
        labels = (y_idx == 1).astype(np.int32) if n_classes == 2 else y_idx.astype(np.int32)
        labels = np.ascontiguousarray(labels)
        rows = 1 if n_classes == 2 else n_classes
        cols = d + (1 if self.fit_intercept else 0)
        W = np.zeros((rows, cols), dtype=np.float64)
        if self.warm_start and hasattr(self, "coef_"):
            coef = np.asarray(self.coef_, dtype=np.float64)
            if coef.shape != (rows, d):
                raise ValueError(f"Initialization coef is of shape {coef.shape}, expected shape {(rows, cols)}")
            W[:, :d] = coef
            if self.fit_intercept:
                W[:, d] = np.asarray(self.intercept_, dtype=np.float64)
        labels = from_numpy_like(X, labels)
        sw = None if sw is None else from_numpy_like(X, sw)
        mod, ctx = self._tl_context(device, X)
        options = native.params(
            mod.LogisticOptions, n_classes=int(n_classes), fit_intercept=bool(self.fit_intercept), sum_weights=sum_w,
            l2=l2_total / sum_w, l1=l1_total / sum_w, max_iter=int(self.max_iter),
            gtol=_GTOL_FACTOR * float(self.tol), gtol_converged=float(self.tol), ftol=_FTOL, memory=_MEMORY,
            max_linesearch=_MAX_LINESEARCH,
        )
        r = mod.logistic_lbfgs(ctx, X, labels, sw, W, options)
        n_iter, status = r.n_iter, r.status
        identity.record("LogisticRegression.W", W)
        if status != 0:
            msg = (f"lbfgs failed to converge after {n_iter} iteration(s) (status={status}):\n"
                   f"{_STATUS_MESSAGES.get(status, '')}\n")
            if status == 1:
                msg += (f"\nIncrease the number of iterations to improve the convergence "
                        f"(max_iter={self.max_iter}).\nYou might also want to scale the data.")
            warnings.warn(msg, ConvergenceWarning, stacklevel=2)
        self.coef_ = np.ascontiguousarray(W[:, :d]).astype(dtype)
        self.intercept_ = (W[:, d] if self.fit_intercept else np.zeros(rows)).astype(dtype)
        self.n_iter_ = np.asarray([n_iter], dtype=np.int32)
        self._tl_record_fit(device, "identical")
        return self

    # -- prediction ------------------------------------------------------------------
    def decision_function(self, X):
        """Confidence scores: (n_samples,) for two classes, else (n_samples, n_classes).

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
        y_pred : ndarray of shape (n_samples,)
        """
        scores = np.asarray(to_host(self.decision_function(X)))
        return scores_to_labels(self.classes_, scores)

    def _proba(self, X, log):
        check_is_fitted(self)
        scores = self._tl_decision(X)
        ncls = 2 if scores.shape[1] == 1 else scores.shape[1]
        device = self._tl_device(scores)
        out = empty_like_kind(scores, (scores.shape[0], ncls), scores.dtype)
        mod, ctx = self._tl_context(device, scores)
        mod.logistic_proba(ctx, scores, bool(log), out)
        return out

    def predict_proba(self, X):
        """Probability estimates, columns in the order of ``classes_``.

        Two classes: ``[1 - sigmoid(s), sigmoid(s)]``; more: the softmax of
        the scores (the project's own exp and log: the same bits on every backend).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        T : array of shape (n_samples, n_classes), the caller's array type
        """
        return self._proba(X, False)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        T : array of shape (n_samples, n_classes), the caller's array type
        """
        return self._proba(X, True)
