"""GaussianNB on the CPU and CUDA backends."""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import _check_partial_fit_first_call, unique_labels
from sklearn.utils.validation import (
    _assert_all_finite,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from .. import identity
from .._io import check_no_overflow, check_sample_weight, check_X, np_float_dtype, to_host
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin, TwinlearnEstimatorMixin


def _labels_1d(est, y):
    """y as a 1-D NumPy array, with scikit-learn's checks and warnings."""
    if y is None:
        raise ValueError(f"This {type(est).__name__} estimator requires y to be passed, but the target y is None.")
    y = column_or_1d(to_host(y), warn=True)
    if y.dtype.kind == "f":
        _assert_all_finite(y, input_name="y")
    return y


def _stacked(stats):
    """class_column_stats' result as one (4, n_classes, n_features) array (weight, mean, m2, count)."""
    return np.stack([np.asarray(a) for a in (stats.weight, stats.mean, stats.m2, stats.count)])


class GaussianNB(DeviceScoreMixin, TwinlearnEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Gaussian Naive Bayes.

    scikit-learn's :class:`sklearn.naive_bayes.GaussianNB`, on the CPU
    backend or a GPU. The per-class means and variances come from the
    canonical column reduction, cut into chunks within each class (the same
    bits as ``column_stats`` over each class's rows), and the data-dependent
    part of the joint log likelihood, ``sum_j (x_ij - theta_cj)^2 / var_cj``,
    is summed in one fixed order on both backends; so every numeric mode
    delivers ``identical``. The per-class constants ``log(prior)`` and
    ``-0.5 * sum(log(2 pi var))`` and the normalisation of probabilities
    (``logsumexp``) are computed with NumPy on the host for every backend.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes. If specified, the priors are not
        adjusted according to the data.
    var_smoothing : float, default=1e-9
        Portion of the largest variance of all features that is added to
        variances for calculation stability.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where to compute; None follows :func:`twinlearn.get_device`.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        The numeric contract asked for; None follows
        :func:`twinlearn.get_numeric_mode`.

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Number of training samples (or their summed weights) of each class.
    class_prior_ : ndarray of shape (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    epsilon_ : float
        Absolute additive value to variances.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    var_ : ndarray of shape (n_classes, n_features)
    theta_ : ndarray of shape (n_classes, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn import GaussianNB
    >>> X = np.array([[-1, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> Y = np.array([1, 1, 1, 2, 2, 2])
    >>> clf = GaussianNB(device="cpu").fit(X, Y)
    >>> clf.predict([[-0.8, -1]])
    array([1])
    >>> clf_pf = GaussianNB(device="cpu").partial_fit(X, Y, np.unique(Y))
    >>> clf_pf.predict([[-0.8, -1]])
    array([1])
    """

    _parameter_constraints: dict = {
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, *, priors=None, var_smoothing=1e-9, device=None, numeric_mode=None):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit Gaussian Naive Bayes according to X, y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch / DLPack device arrays.
        y : array-like of shape (n_samples,)
            Target values (any labels NumPy can sort: integers, strings, ...).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        y = _labels_1d(self, y)
        return self._partial_fit(X, y, np.unique(y), _refit=True, sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Incremental fit on a batch of samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            All the classes that can appear in y; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        return self._partial_fit(X, y, classes, _refit=False, sample_weight=sample_weight)

    def _partial_fit(self, X, y, classes=None, _refit=False, sample_weight=None):
        self._tl_validate_params()
        if _refit:
            self.classes_ = None
        first_call = _check_partial_fit_first_call(self, classes)
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=first_call, for_fit=True, allow_nan=False)
        y = _labels_1d(self, y)
        check_consistent_length(X, y)
        dt = np_float_dtype(X)
        sw = check_sample_weight(sample_weight, X)
        mod, ctx = self._tl_context(device, X)

        # epsilon_: var_smoothing times the largest (biased) feature variance of this batch.
        # (One class holding every row: the canonical column_stats of X.)
        one_class = np.zeros(X.shape[0], dtype=np.int64)
        total = mod.class_column_stats(ctx, X, one_class, 1, None)
        w_all, m2_all = np.asarray(total.weight)[0], np.asarray(total.m2)[0]
        if identity.enabled():
            identity.record("GaussianNB.partial_fit.column_stats", _stacked(total)[:, 0, :])
        var_all = (m2_all / w_all).astype(dt)
        self.epsilon_ = self.var_smoothing * np.max(var_all)

        n_classes = self.classes_.shape[0]
        if first_call:
            n_features = X.shape[1]
            self.theta_ = np.zeros((n_classes, n_features), dtype=dt)
            self.var_ = np.zeros((n_classes, n_features), dtype=dt)
            self.class_count_ = np.zeros(n_classes, dtype=dt)
            if self.priors is not None:
                priors = np.asarray(self.priors, dtype=dt)
                if priors.shape[0] != n_classes:
                    raise ValueError("Number of priors must match number of classes.")
                if not np.isclose(priors.sum(), 1.0):
                    raise ValueError("The sum of the priors should be 1.")
                if (priors < 0).any():
                    raise ValueError("Priors must be non-negative.")
                self.class_prior_ = priors
            else:
                self.class_prior_ = np.zeros(n_classes, dtype=dt)
        else:
            if X.shape[1] != self.theta_.shape[1]:
                msg = "Number of features %d does not match previous data %d."
                raise ValueError(msg % (X.shape[1], self.theta_.shape[1]))
            self.var_[:, :] -= self.epsilon_

        unique_y = np.unique(y)
        in_classes = np.isin(unique_y, self.classes_)
        if not np.all(in_classes):
            raise ValueError(
                "The target label(s) %s in y do not exist in the initial classes %s"
                % (unique_y[~in_classes], self.classes_)
            )
        labels = np.ascontiguousarray(np.searchsorted(self.classes_, y), dtype=np.int64)
        cs = mod.class_column_stats(ctx, X, labels, n_classes, sw)
        if identity.enabled():
            identity.record("GaussianNB.partial_fit.class_column_stats", _stacked(cs))
        w_c, mean_c, m2_c, n_c = (np.asarray(a) for a in (cs.weight, cs.mean, cs.m2, cs.count))
        for i in np.searchsorted(self.classes_, unique_y):
            # scikit-learn's _update_mean_variance, with this batch's class
            # statistics from the canonical reduction.
            n_new = float(w_c[i, 0]) if sw is not None else float(n_c[i, 0])
            n_past = float(self.class_count_[i])
            if sw is None or not np.isclose(n_new, 0.0):
                new_mu = mean_c[i]
                new_var = m2_c[i] / w_c[i, 0]
                if n_past == 0:
                    mu, var = new_mu, new_var
                else:
                    old_mu = self.theta_[i].astype(np.float64)
                    old_var = self.var_[i].astype(np.float64)
                    n_total = float(n_past + n_new)
                    mu = (n_new * new_mu + n_past * old_mu) / n_total
                    total_ssd = n_past * old_var + n_new * new_var + (n_new * n_past / n_total) * (old_mu - new_mu) ** 2
                    var = total_ssd / n_total
                self.theta_[i, :] = mu
                self.var_[i, :] = var
            self.class_count_[i] += n_new
        check_no_overflow("GaussianNB", "the class means or variances overflow", self.theta_, self.var_,
                          self.epsilon_, dtype=dt, power=2, terms=X.shape[0])
        self.var_[:, :] += self.epsilon_
        if self.priors is None:
            self.class_prior_ = self.class_count_ / np.sum(self.class_count_)
        identity.record("GaussianNB.theta_", self.theta_)
        identity.record("GaussianNB.var_", self.var_)
        self._tl_record_fit(device, "identical")
        return self

    # -- prediction ---------------------------------------------------------
    def _joint_log_likelihood(self, X):
        """(jll as NumPy (n_samples, n_classes), the checked X)."""
        check_is_fitted(self)
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=False, allow_nan=False)
        theta = np.ascontiguousarray(self.theta_, dtype=np.float64)
        var = np.ascontiguousarray(self.var_, dtype=np.float64)
        with np.errstate(divide="ignore"):
            joint = np.log(self.class_prior_.astype(np.float64))
        nconst = -0.5 * np.sum(np.log(2.0 * np.pi * var), axis=1)
        mod, ctx = self._tl_context(device, X)
        jll = np.asarray(mod.gaussian_nb_jll(ctx, X, theta, var, joint, nconst))
        identity.record("GaussianNB.joint_log_likelihood", jll)
        return jll.astype(self.theta_.dtype, copy=False)

    def _log_proba(self, X):
        """The normalized log-probabilities, NumPy (n_samples, n_classes)."""
        jll = self._joint_log_likelihood(X)
        return jll - np.atleast_2d(logsumexp(jll, axis=1)).T

    def predict_joint_log_proba(self, X):
        """Joint log probability ``log P(x, y) = log P(y) + log P(x|y)`` of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : array of shape (n_samples, n_classes), the caller's array type
            Columns in the order of ``classes_``.
        """
        return self._joint_log_likelihood(X)

    def predict(self, X):
        """Perform classification on an array of test vectors X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : array of shape (n_samples,)
            Predicted labels (ties go to the first class in ``classes_``), in
            the caller's array type when the classes are numeric.
        """
        jll = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(jll, axis=1)]

    def predict_log_proba(self, X):
        """Log-probability estimates for the test vectors X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : array of shape (n_samples, n_classes), the caller's array type
        """
        return self._log_proba(X)

    def predict_proba(self, X):
        """Probability estimates for the test vectors X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        C : array of shape (n_samples, n_classes), the caller's array type
        """
        return np.exp(self._log_proba(X))
