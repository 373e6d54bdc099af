"""ElasticNet and Lasso on the CPU and CUDA backends.

The Gram matrix of the centred (and weighted) data comes from one canonical
pass on the backend (docs/NUMERICS.md, "Linear solves"); coordinate descent
then runs on the d x d system on the host in double, with scikit-learn's
duality-gap stopping rule (docs/NUMERICS.md, "Coordinate descent"). This is
scikit-learn's ``precompute=True`` path, used whatever ``precompute`` says:
the solution is the same, and for tall data it is the fast one.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .. import _backend, identity
from .. import _native as native
from .._io import kind, np_float_dtype, to_numpy
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin
from ._base import GRAM_PYTHON_ONLY, LinearFitMixin, LinearRegressorMixin, _as_2d_targets

_MESSAGE_CONV = (
    "Objective did not converge. You might want to increase the number of iterations, check the scale of the "
    "features or consider increasing regularisation."
)
_MESSAGE_NONFINITE = (
    "Coordinate descent iterations resulted in non-finite parameter values. The input data may contain large "
    "values and need to be preprocessed."
)


class ElasticNet(DeviceScoreMixin, LinearFitMixin, LinearRegressorMixin, MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Linear regression with combined L1 and L2 priors as regularizer.

    scikit-learn's :class:`sklearn.linear_model.ElasticNet` on the CPU backend
    or a GPU. Minimizes::

        1 / (2 * n_samples) * ||y - Xw||²_2 + alpha * l1_ratio * ||w||_1
        + 0.5 * alpha * (1 - l1_ratio) * ||w||²_2

    by coordinate descent on the Gram matrix, stopping on scikit-learn's
    duality-gap rule. Every numeric mode delivers ``identical`` on the CPU;
    on a GPU ``fast`` mode forms the Gram matrix with cuBLAS.

    Parameters
    ----------
    alpha : float, default=1.0
    l1_ratio : float, default=0.5
    fit_intercept : bool, default=True
    precompute : bool, default=False
        Accepted for compatibility: the Gram matrix is always used (an array
        of a precomputed Gram matrix is refused).
    max_iter : int, default=1000
    copy_X : bool, default=True
        Accepted for compatibility: X is never modified.
    tol : float, default=1e-4
    warm_start : bool, default=False
    positive : bool, default=False
    random_state : int, RandomState instance, default=None
        Seeds the counter-based generator of ``selection='random'``.
    selection : {'cyclic', 'random'}, default='cyclic'
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    sparse_coef_ : sparse matrix of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    n_iter_ : int or list of int
    dual_gap_ : float or ndarray of shape (n_targets,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linear_model import ElasticNet
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = X @ np.array([2.0, 0.0, -1.0, 0.0]) + 1.0
    >>> reg = ElasticNet(alpha=0.1, device="cpu").fit(X, y)
    >>> np.round(reg.coef_, 2)
    array([ 1.84,  0.  , -0.9 ,  0.  ])
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "fit_intercept": ["boolean"],
        "precompute": ["boolean", "array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "copy_X": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "positive": ["boolean"],
        "random_state": ["random_state"],
        "selection": [StrOptions({"cyclic", "random"})],
        **TL_PARAMETER_CONSTRAINTS,
    }

    _tl_native = (
        native.Spec(
            "EnetParams",
            fields={"alpha": ("l1", "l2"), "l1_ratio": ("l1", "l2"), "max_iter": "max_iter", "tol": "tol",
                    "positive": "positive", "selection": "random", "random_state": "seed"},
            python_only={**GRAM_PYTHON_ONLY, "precompute": "the Gram matrix is always used",
                         "warm_start": "the starting coefficients: an array argument of the solve"},
        ),
    )

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, fit_intercept=True, precompute=False, max_iter=1000, copy_X=True,
                 tol=1e-4, warm_start=False, positive=False, random_state=None, selection="cyclic", device=None,
                 numeric_mode=None):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.copy_X = copy_X
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.device = device
        self.numeric_mode = numeric_mode

    def _l1_ratio(self):
        return self.l1_ratio

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, check_input=True):
        """Fit the model by coordinate descent.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch device arrays (used zero-copy).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : float or array-like of shape (n_samples,), default=None
            Rescaled internally to sum to n_samples, as scikit-learn.
        check_input : bool, default=True
            Accepted for compatibility; input is always checked.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        if self.alpha == 0:
            warnings.warn(
                "With alpha=0, this algorithm does not converge well. You are advised to use the "
                "LinearRegression estimator", stacklevel=2,
            )
        if not isinstance(self.precompute, (bool, np.bool_)):
            raise ValueError(
                f"{type(self).__name__}: precompute as a precomputed Gram matrix is not supported; the Gram "
                "matrix is always computed from X (precompute=True or False give the same result)."
            )
        if isinstance(sample_weight, Real):
            sample_weight = None
        device = self._tl_device(X)
        X, y, sw, on_device = self._tl_check_Xy(X, y, sample_weight, device)
        Y, single = _as_2d_targets(y)
        dtype = np_float_dtype(X)
        n, d = X.shape
        t = Y.shape[1]
        if sw is not None:
            total = float(to_numpy(sw).astype(np.float64).sum())
            if not total > 0:
                raise ValueError("The sample weights sum to zero: nothing to fit.")
            sw = sw * dtype.type(n / total) if kind(sw) != "torch" else sw * (n / total)
        G, x_off, y_off, delivered = self._tl_gram(X, Y, sw, device, on_device)
        if not np.all(np.isfinite(G)):  # finite data whose cross-products overflow float64
            raise ValueError(_MESSAGE_NONFINITE + " (the cross-products X^T X overflow float64)")
        l1_ratio = self._l1_ratio()
        l1 = self.alpha * l1_ratio * n
        l2 = self.alpha * (1.0 - l1_ratio) * n
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        coef = np.zeros((t, d), dtype=np.float64)
        if self.warm_start and hasattr(self, "coef_"):
            coef[:] = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))
        mod = _backend.core()
        params = native.params(mod.EnetParams, l1=float(l1), l2=float(l2), max_iter=int(self.max_iter),
                               tol=float(self.tol), positive=bool(self.positive), random=self.selection == "random",
                               seed=seed)
        n_iters, gaps = [], np.zeros(t)
        for k in range(t):
            w = np.ascontiguousarray(coef[k])
            r = mod.enet_cd_gram(G, d, k, params, w)
            if not r.converged:
                msg = f"{_MESSAGE_CONV} Duality gap: {r.gap:.6e}, tolerance: {r.tol:.3e}"
                warnings.warn(msg, ConvergenceWarning)
            coef[k] = w
            n_iters.append(int(r.n_iter))
            gaps[k] = r.gap / n
        self._tl_set_coef(coef, x_off, y_off, single, dtype, ravel_single_column=True)
        self.n_iter_ = n_iters[0] if t == 1 else n_iters
        self.dual_gap_ = gaps[0].astype(dtype) if t == 1 else gaps.astype(dtype)
        identity.record(f"{type(self).__name__}.coef_", self.coef_)
        if not (np.all(np.isfinite(self.coef_)) and np.all(np.isfinite(self.intercept_))):
            raise ValueError(_MESSAGE_NONFINITE)
        self._tl_record_fit(device, delivered)
        return self

    @property
    def sparse_coef_(self):
        """Sparse representation of the fitted ``coef_``."""
        return sp.csr_matrix(self.coef_)



class Lasso(ElasticNet):
    """Linear model trained with an L1 prior as regularizer (the Lasso).

    scikit-learn's :class:`sklearn.linear_model.Lasso` on the CPU backend or a
    GPU: :class:`ElasticNet` with ``l1_ratio=1``. Minimizes::

        (1 / (2 * n_samples)) * ||y - Xw||²_2 + alpha * ||w||_1

    Parameters
    ----------
    alpha : float, default=1.0
    fit_intercept : bool, default=True
    precompute : bool, default=False
    copy_X : bool, default=True
    max_iter : int, default=1000
    tol : float, default=1e-4
    warm_start : bool, default=False
    positive : bool, default=False
    random_state : int, RandomState instance, default=None
    selection : {'cyclic', 'random'}, default='cyclic'
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    sparse_coef_ : sparse matrix
    intercept_ : float or ndarray of shape (n_targets,)
    n_iter_ : int or list of int
    dual_gap_ : float or ndarray of shape (n_targets,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.linear_model import Lasso
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> reg = Lasso(alpha=0.1, device="cpu").fit(X, [0.0, 1.0, 2.0])
    >>> np.round(reg.coef_, 2), round(float(reg.intercept_), 2)
    (array([0.85, 0.  ]), 0.15)
    """

    _parameter_constraints: dict = {k: v for k, v in ElasticNet._parameter_constraints.items() if k != "l1_ratio"}
    _tl_native = (
        native.Spec(
            "EnetParams",
            fields={k: v for k, v in ElasticNet._tl_native[0].fields.items() if k != "l1_ratio"},
            python_only=ElasticNet._tl_native[0].python_only,
        ),
    )

    def __init__(self, alpha=1.0, *, fit_intercept=True, precompute=False, copy_X=True, max_iter=1000, tol=1e-4,
                 warm_start=False, positive=False, random_state=None, selection="cyclic", device=None,
                 numeric_mode=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.device = device
        self.numeric_mode = numeric_mode

    def _l1_ratio(self):
        return 1.0
