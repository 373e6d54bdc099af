"""Gaussian-process regression (scikit-learn's GaussianProcessRegressor) on
twinlearn's backends."""

from __future__ import annotations

import warnings
from operator import itemgetter

import numpy as np
import scipy.optimize
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, clone
from sklearn.gaussian_process import GaussianProcessRegressor as _SkGPR
from sklearn.gaussian_process.kernels import RBF, ConstantKernel as C
from sklearn.preprocessing._data import _handle_zeros_in_scale
from sklearn.utils import check_random_state
from sklearn.utils.optimize import _check_optimize_result

from .. import _io
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin, TwinlearnEstimatorMixin
from ._evaluate import LOG_2PI, Ops, Solver, diag, evaluate, foreign_kernel


def _default_kernel(fit=False):
    # scikit-learn's defaults: its fit optimizes C() * RBF() (bounds
    # (1e-5, 1e5)); its prior (predict before fit) has both fixed.
    if fit:
        return C() * RBF()
    return C(1.0, constant_value_bounds="fixed") * RBF(1.0, length_scale_bounds="fixed")


def check_kernel_bounds(kernel):
    """ValueError naming the hyperparameter whose bounds are inverted."""
    for hp in kernel.hyperparameters:
        if hp.fixed:
            continue
        b = np.atleast_2d(np.asarray(hp.bounds, dtype=float))
        bad = b[:, 0] > b[:, 1]
        if np.any(bad):
            lo, hi = b[bad][0]
            raise ValueError(
                f"The bounds of hyperparameter '{hp.name}' of the kernel {kernel} are inverted: "
                f"the lower bound {lo!r} is greater than the upper bound {hi!r}."
            )


class GaussianProcessRegressor(TwinlearnEstimatorMixin, DeviceScoreMixin, MultiOutputMixin, RegressorMixin,
                               BaseEstimator):
    """Gaussian process regression (scikit-learn's GaussianProcessRegressor).

    The implementation follows Algorithm 2.1 of Rasmussen and Williams, as
    scikit-learn does, with the same parameters, attributes and results
    (within 1e-5 relative for predictions, 1e-6 for the log-marginal
    likelihood and its gradient). The kernel matrices of the kernels of
    :mod:`twinlearn.gaussian_process.kernels` are computed on the
    estimator's device; the Cholesky factorization of K + alpha I and the
    solves run the fixed-order host routines in deterministic and identical
    mode (so a GPU gives the CPU's bits), LAPACK in fast mode on the CPU and
    cuSOLVER in fast mode on a GPU. See docs/NUMERICS.md, "Gaussian processes".

    Parameters
    ----------
    kernel : kernel instance, default=None
        The covariance function (a scikit-learn kernel). None, as in
        scikit-learn: ``ConstantKernel(1.0, constant_value_bounds="fixed") *
        RBF(1.0, length_scale_bounds="fixed")`` for the prior (predict
        before fit), ``ConstantKernel() * RBF()`` for fit. Its hyperparameters are optimized
        during fit unless their bounds are "fixed". Kernels twinlearn does not
        compute (Matern with another nu, user subclasses) are evaluated by
        their own ``__call__``; numeric_mode='identical' refuses them.
    alpha : float or ndarray of shape (n_samples,), default=1e-10
        Added to the diagonal of the kernel matrix during fit.
    optimizer : "fmin_l_bfgs_b", callable or None, default="fmin_l_bfgs_b"
        Maximizes the log-marginal likelihood over log-hyperparameters with
        SciPy's L-BFGS-B, or calls ``optimizer(obj_func, initial_theta,
        bounds)`` which returns ``(theta_opt, func_min)``; None keeps the
        kernel's hyperparameters.
    n_restarts_optimizer : int, default=0
        Further runs of the optimizer from log-uniform draws of
        `random_state` within the bounds (scikit-learn's draws).
    normalize_y : bool, default=False
        Center and scale y to unit variance before fitting.
    copy_X_train : bool, default=True
        Store a copy of the training data.
    n_targets : int, default=None
        The number of target dimensions (used by predict and sample_y before fit).
    random_state : int, RandomState instance or None, default=None
        The generator of the optimizer's restarts.
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Attributes
    ----------
    X_train_ : ndarray of shape (n_samples, n_features)
    y_train_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Training targets (normalized with ``normalize_y``).
    kernel_ : kernel instance
        The kernel with the optimized hyperparameters.
    L_ : ndarray of shape (n_samples, n_samples)
        Lower Cholesky factor of ``kernel_(X_train_) + alpha I``.
    alpha_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Dual coefficients of the training points.
    log_marginal_likelihood_value_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.gaussian_process import GaussianProcessRegressor
    >>> from twinlearn.gaussian_process.kernels import RBF
    >>> X = np.array([[0.0], [1.0], [2.0]]); y = np.array([0.0, 1.0, 0.0])
    >>> gpr = GaussianProcessRegressor(RBF(1.0), optimizer=None, device="cpu").fit(X, y)
    >>> gpr.predict(np.array([[1.0]])).round(6)
    array([1.])
    """

    _parameter_constraints: dict = {**_SkGPR._parameter_constraints, **TL_PARAMETER_CONSTRAINTS}

    def __init__(self, kernel=None, *, alpha=1e-10, optimizer="fmin_l_bfgs_b", n_restarts_optimizer=0,
                 normalize_y=False, copy_X_train=True, n_targets=None, random_state=None, device=None,
                 numeric_mode=None):
        self.kernel = kernel
        self.alpha = alpha
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.normalize_y = normalize_y
        self.copy_X_train = copy_X_train
        self.n_targets = n_targets
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags

    # -- the backend ----------------------------------------------------------
    def _tl_backend(self, kernel, device=None):
        """(ops, solver, delivered mode) for computing with `kernel`."""
        device = device or self._tl_device()
        mode = self._tl_requested_mode()
        foreign = foreign_kernel(kernel)
        if foreign is not None and mode == "identical":
            raise ValueError(
                f"numeric_mode='identical' needs a kernel twinlearn computes, but {foreign!r} is evaluated by "
                "its own __call__ on NumPy (see twinlearn.gaussian_process.kernels); use "
                "numeric_mode='deterministic' or 'fast'"
            )
        mod, ctx = self._tl_context(device)
        return Ops(mod, ctx), Solver(mod, ctx, mode, device), mode

    def _tl_vector_X(self, X, kernel, reset):
        if kernel.requires_vector_input:
            X = _io.validate_host(self, _io.to_host(X), dtype=_io.FLOAT_DTYPES, ensure_2d=True, reset=reset)
            return X, np.ascontiguousarray(X, dtype=np.float64)
        X = _io.validate_host(self, _io.to_host(X), dtype=None, ensure_2d=False, reset=reset)
        return X, X

    # -- fit ------------------------------------------------------------------------
    def fit(self, X, y):
        """Fit the Gaussian process regression model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of object
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self : object
        """
        self._validate_params()
        self._tl_validate_params()
        self.kernel_ = _default_kernel(fit=True) if self.kernel is None else clone(self.kernel)
        check_kernel_bounds(self.kernel_)
        self._rng = check_random_state(self.random_state)
        vector = self.kernel_.requires_vector_input
        X, y = _io.validate_host(self, _io.to_host(X), _io.to_host(y), multi_output=True, y_numeric=True,
                                 ensure_2d=vector, dtype=_io.FLOAT_DTYPES if vector else None)
        y = np.asarray(y, dtype=np.float64)
        n_targets_seen = y.shape[1] if y.ndim > 1 else 1
        if self.n_targets is not None and n_targets_seen != self.n_targets:
            raise ValueError(
                "The number of targets seen in `y` is different from the parameter "
                f"`n_targets`. Got {n_targets_seen} != {self.n_targets}."
            )
        if self.normalize_y:
            self._y_train_mean = np.mean(y, axis=0)
            self._y_train_std = _handle_zeros_in_scale(np.std(y, axis=0), copy=False)
            y = (y - self._y_train_mean) / self._y_train_std
        else:
            shape_y_stats = (y.shape[1],) if y.ndim == 2 else 1
            self._y_train_mean = np.zeros(shape=shape_y_stats)
            self._y_train_std = np.ones(shape=shape_y_stats)
        alpha = self.alpha
        if np.iterable(alpha) and alpha.shape[0] != y.shape[0]:
            if alpha.shape[0] == 1:
                alpha = alpha[0]
            else:
                raise ValueError(
                    "alpha must be a scalar or an array with same number of "
                    f"entries as y. ({alpha.shape[0]} != {y.shape[0]})"
                )
        self._tl_alpha = alpha
        self.X_train_ = np.copy(X) if self.copy_X_train else X
        self.y_train_ = np.copy(y) if self.copy_X_train else y

        device = self._tl_device()
        ops, solver, delivered = self._tl_backend(self.kernel_, device)
        Xc = np.ascontiguousarray(X, dtype=np.float64) if vector else X
        y2 = np.ascontiguousarray(y.reshape(y.shape[0], -1))

        if self.optimizer is not None and self.kernel_.n_dims > 0:
            def obj_func(theta, eval_gradient=True):
                self.kernel_.theta = theta
                if eval_gradient:
                    lml, grad = self._lml(self.kernel_, Xc, y2, alpha, True, ops, solver)
                    return -lml, -grad
                return -self._lml(self.kernel_, Xc, y2, alpha, False, ops, solver)

            optima = [self._constrained_optimization(obj_func, self.kernel_.theta, self.kernel_.bounds)]
            if self.n_restarts_optimizer > 0:
                if not np.isfinite(self.kernel_.bounds).all():
                    raise ValueError(
                        "Multiple optimizer restarts (n_restarts_optimizer>0) requires that all bounds are finite."
                    )
                bounds = self.kernel_.bounds
                for _ in range(self.n_restarts_optimizer):
                    theta_initial = self._rng.uniform(bounds[:, 0], bounds[:, 1])
                    optima.append(self._constrained_optimization(obj_func, theta_initial, bounds))
            lml_values = list(map(itemgetter(1), optima))
            self.kernel_.theta = optima[np.argmin(lml_values)][0]
            self.kernel_._check_bounds_params()
            self.log_marginal_likelihood_value_ = -np.min(lml_values)
        else:
            self.log_marginal_likelihood_value_ = self._lml(self.kernel_, Xc, y2, alpha, False, ops, solver)

        K = np.array(evaluate(self.kernel_, Xc, None, False, ops), dtype=np.float64, order="C", copy=True)
        K[np.diag_indices_from(K)] += alpha
        U = solver.factor(K)
        if U is None:
            raise np.linalg.LinAlgError(
                f"The kernel, {self.kernel_}, is not returning a positive definite matrix. Try gradually "
                "increasing the 'alpha' parameter of your GaussianProcessRegressor estimator."
            )
        self.L_ = np.ascontiguousarray(U.T)
        self.alpha_ = solver.cho_solve(U, self.y_train_)
        self._tl_record_fit(device, delivered)
        return self

    def _constrained_optimization(self, obj_func, initial_theta, bounds):
        if self.optimizer == "fmin_l_bfgs_b":
            opt_res = scipy.optimize.minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds)
            _check_optimize_result("lbfgs", opt_res)
            return opt_res.x, opt_res.fun
        if callable(self.optimizer):
            return self.optimizer(obj_func, initial_theta, bounds=bounds)
        raise ValueError(f"Unknown optimizer {self.optimizer}.")

    # -- the likelihood ---------------------------------------------------------------
    def _lml(self, kernel, X, y2, alpha, eval_gradient, ops, solver):
        """The log-marginal likelihood of `kernel` on (X, y2) (and its gradient)."""
        theta = kernel.theta
        if eval_gradient:
            K, G = evaluate(kernel, X, None, True, ops)
        else:
            K, G = evaluate(kernel, X, None, False, ops), None
        K = np.array(K, dtype=np.float64, order="C", copy=True)
        K[np.diag_indices_from(K)] += alpha
        U = solver.factor(K)
        if U is None:
            return (-np.inf, np.zeros_like(theta)) if eval_gradient else -np.inf
        A = solver.cho_solve(U, y2).reshape(y2.shape)
        n, t = y2.shape
        log_diag = solver.total(ops.fn("log", np.ascontiguousarray(np.diag(U))))
        const = n / 2 * LOG_2PI
        dims = [(-0.5 * solver.dot(y2[:, k], A[:, k]) - log_diag) - const for k in range(t)]
        lml = dims[0]
        for v in dims[1:]:
            lml = lml + v
        if not eval_gradient:
            return lml
        K_inv = solver.inverse(U)
        grad = np.zeros(G.shape[2])
        columns = [np.ascontiguousarray(G[:, :, k].T) for k in range(G.shape[2])]
        for target in range(t):
            inner = np.multiply.outer(A[:, target], A[:, target]) - K_inv
            grad = grad + np.array([0.5 * solver.dot(inner, col) for col in columns])
        return lml, grad

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, clone_kernel=True):
        """The log-marginal likelihood of theta for the training data.

        Parameters
        ----------
        theta : array-like of shape (n_kernel_params,), default=None
            Log-transformed kernel hyperparameters; None: the value of the fit.
        eval_gradient : bool, default=False
            Also return the gradient with respect to theta (theta must not be None).
        clone_kernel : bool, default=True
            Evaluate on a copy of ``kernel_`` (False: ``kernel_.theta`` is set).

        Returns
        -------
        log_likelihood : float
        log_likelihood_gradient : ndarray of shape (n_kernel_params,), optional
        """
        if theta is None:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated for theta!=None")
            return self.log_marginal_likelihood_value_
        kernel = self.kernel_.clone_with_theta(theta) if clone_kernel else self.kernel_
        kernel.theta = theta
        ops, solver, _ = self._tl_backend(kernel, self._tl_fit_info["device"] if hasattr(self, "_tl_fit_info")
                                          else None)
        X = self.X_train_
        if kernel.requires_vector_input:
            X = np.ascontiguousarray(X, dtype=np.float64)
        y2 = np.ascontiguousarray(np.asarray(self.y_train_, dtype=np.float64).reshape(self.y_train_.shape[0], -1))
        alpha = getattr(self, "_tl_alpha", self.alpha)
        return self._lml(kernel, X, y2, alpha, eval_gradient, ops, solver)

    # -- predictions ------------------------------------------------------------------
    def predict(self, X, return_std=False, return_cov=False):
        """Predict with the Gaussian process (the prior before fit).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of object
        return_std : bool, default=False
            Also return the standard deviation of the predictive distribution.
        return_cov : bool, default=False
            Also return the covariance of the joint predictive distribution
            (at most one of return_std and return_cov).

        Returns
        -------
        y_mean : ndarray of shape (n_samples,) or (n_samples, n_targets)
        y_std : ndarray of shape (n_samples,) or (n_samples, n_targets), optional
        y_cov : ndarray of shape (n_samples, n_samples) or (n_samples, n_samples, n_targets), optional
        """
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        self._tl_validate_params()
        fitted = hasattr(self, "X_train_")
        kernel = self.kernel_ if fitted else (_default_kernel() if self.kernel is None else self.kernel)
        X, Xc = self._tl_vector_X(X, kernel, reset=False)
        device = self._tl_fit_info["device"] if fitted and hasattr(self, "_tl_fit_info") else self._tl_device()
        ops, solver, _ = self._tl_backend(kernel, device)
        if not fitted:
            n_targets = self.n_targets if self.n_targets is not None else 1
            y_mean = np.zeros(shape=(X.shape[0], n_targets)).squeeze()
            if return_cov:
                y_cov = evaluate(kernel, Xc, None, False, ops)
                if n_targets > 1:
                    y_cov = np.repeat(np.expand_dims(y_cov, -1), repeats=n_targets, axis=-1)
                return y_mean, y_cov
            if return_std:
                y_var = diag(kernel, Xc, ops)
                if n_targets > 1:
                    y_var = np.repeat(np.expand_dims(y_var, -1), repeats=n_targets, axis=-1)
                return y_mean, np.sqrt(y_var)
            return y_mean
        Xt = np.ascontiguousarray(self.X_train_, dtype=np.float64) if kernel.requires_vector_input else self.X_train_
        K_trans = np.asarray(evaluate(kernel, Xc, Xt, False, ops), dtype=np.float64)
        y_mean = solver.matmul(K_trans, np.asarray(self.alpha_, dtype=np.float64), ops)
        y_mean = self._y_train_std * y_mean + self._y_train_mean
        if y_mean.ndim > 1 and y_mean.shape[1] == 1:
            y_mean = np.squeeze(y_mean, axis=1)
        if not return_cov and not return_std:
            return y_mean
        U = np.ascontiguousarray(np.asarray(self.L_, dtype=np.float64).T)
        V = solver.solve_lower(U, np.ascontiguousarray(K_trans.T))
        if return_cov:
            y_cov = np.asarray(evaluate(kernel, Xc, None, False, ops), dtype=np.float64) - solver.gram_t(V, ops)
            y_cov = np.outer(y_cov, self._y_train_std**2).reshape(*y_cov.shape, -1)
            if y_cov.shape[2] == 1:
                y_cov = np.squeeze(y_cov, axis=2)
            return y_mean, y_cov
        y_var = np.array(diag(kernel, Xc, ops), dtype=np.float64, copy=True)
        y_var -= solver.column_sums(V * V)
        y_var_negative = y_var < 0
        if np.any(y_var_negative):
            warnings.warn("Predicted variances smaller than 0. Setting those variances to 0.")
            y_var[y_var_negative] = 0.0
        y_var = np.outer(y_var, self._y_train_std**2).reshape(*y_var.shape, -1)
        if y_var.shape[1] == 1:
            y_var = np.squeeze(y_var, axis=1)
        return y_mean, np.sqrt(y_var)

    def sample_y(self, X, n_samples=1, random_state=0):
        """Draw samples from the Gaussian process at X (scikit-learn's draws
        from the predicted mean and covariance).

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features) or list of object
        n_samples : int, default=1
        random_state : int, RandomState instance or None, default=0

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples) or (n_samples_X, n_targets, n_samples)
        """
        rng = check_random_state(random_state)
        y_mean, y_cov = self.predict(X, return_cov=True)
        y_mean, y_cov = _io.to_host(y_mean), _io.to_host(y_cov)
        if y_mean.ndim == 1:
            return rng.multivariate_normal(y_mean, y_cov, n_samples).T
        y_samples = [
            rng.multivariate_normal(y_mean[:, target], y_cov[..., target], n_samples).T[:, np.newaxis]
            for target in range(y_mean.shape[1])
        ]
        return np.hstack(y_samples)
