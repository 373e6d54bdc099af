"""SVC and SVR: libsvm's C-SVC and epsilon-SVR."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import _ovr_decision_function, check_classification_targets
from sklearn.utils.validation import column_or_1d

from .._io import to_host
from ..base import DeviceScoreMixin
from ._base import BaseSVM, pairwise_coupling, sigmoid_predict, sigmoid_train

_DEVICE_DOC = """    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where to compute; None follows :func:`twinlearn.get_device`. The
        solver has a CPU backend only: 'auto' runs on the CPU and a GPU
        device is refused (device arrays are accepted and copied to the host).
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        The numeric contract asked for; every mode delivers ``identical``
        (one CPU solver whose bits do not depend on the thread count)."""


def _group(codes, n_classes):
    """libsvm's svm_group_classes: (start, count, perm) with the samples of
    each class together, classes in sorted order, each in order of appearance."""
    count = np.bincount(codes, minlength=n_classes)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    perm = np.argsort(codes, kind="stable")
    return start, count, perm


class SVC(DeviceScoreMixin, BaseSVM, ClassifierMixin, BaseEstimator):
    __doc__ = """C-Support Vector Classification.

    scikit-learn's :class:`sklearn.svm.SVC` on twinlearn's SMO solver:
    libsvm's algorithm (second order working set selection of Fan, Chen &
    Lin 2005, shrinking, the same stopping rule ``tol`` and bias), one-vs-one
    for several classes with libsvm's layout of ``dual_coef_`` and the
    support vectors. Kernel values are float64 (float32 input is widened
    exactly) and are not rounded to float32 as libsvm's cache does, so the
    solver's path may differ from scikit-learn's by a few steps; decision
    values agree to about 1e-4 relative or better at the default ``tol``
    (docs/NUMERICS.md, "Support vector machines").

    Parameters
    ----------
    C : float, default=1.0
        Regularization parameter (> 0); the bound of sample i is
        ``C * class_weight[y_i] * sample_weight[i]``.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'}, default='rbf'
        A callable kernel is not supported (compute the Gram matrix and pass
        kernel='precomputed').
    degree : int, default=3
        Degree of the 'poly' kernel (>= 0).
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid': 'scale' is
        ``1 / (n_features * X.var())``, 'auto' is ``1 / n_features``.
    coef0 : float, default=0.0
        Independent term of 'poly' and 'sigmoid'.
    shrinking : bool, default=True
        libsvm's shrinking heuristic. It changes the path (and possibly
        ``n_iter_`` and the last bits of the solution), not the optimum.
    probability : bool, default=False
        Fit libsvm's Platt scaling (5-fold cross-validation inside fit) for
        :meth:`predict_proba`. The folds come from ``random_state``, so the
        values are not scikit-learn's bits.
    tol : float, default=1e-3
        Stop when the maximal violating pair's gap is below tol.
    cache_size : float, default=200
        MB of kernel rows kept by the solver.
    class_weight : dict or 'balanced', default=None
        Multiplies C for the samples of each class.
    verbose : bool, default=False
        Print the solver's summary of each problem.
    max_iter : int, default=-1
        Solver steps per problem at most; -1 for no limit.
    decision_function_shape : {'ovo', 'ovr'}, default='ovr'
    break_ties : bool, default=False
        With 'ovr' and more than two classes, predict takes the argmax of
        :meth:`decision_function` instead of the one-vs-one votes.
    random_state : int, RandomState instance or None, default=None
        The cross-validation folds of ``probability=True``.
{device}

    Attributes
    ----------
    class_weight_ : ndarray of shape (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes * (n_classes - 1) / 2, n_features)
        kernel='linear' only.
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
    fit_status_ : int
        0 if the solver converged, 1 if it stopped at max_iter (with a warning).
    intercept_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_iter_ : ndarray of shape (n_classes * (n_classes - 1) // 2,)
        Solver steps of each one-vs-one problem.
    support_ : ndarray of shape (n_SV,)
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Empty for kernel='precomputed'.
    n_support_ : ndarray of shape (n_classes,), dtype=int32
    probA_, probB_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        The Platt parameters (empty unless probability=True).
    shape_fit_ : tuple of int

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.svm import SVC
    >>> X = np.array([[-1, -1], [-2, -1], [1, 1], [2, 1]])
    >>> y = np.array([1, 1, 2, 2])
    >>> SVC(device="cpu").fit(X, y).predict([[-0.8, -1]])
    array([1])
    """.replace("{device}", _DEVICE_DOC)

    _parameter_constraints: dict = {
        **BaseSVM._parameter_constraints,
        "probability": ["boolean", StrOptions({"deprecated"})],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "random_state": ["random_state"],
    }

    _tl_native = BaseSVM._native_spec({
        "class_weight": "scales the per-sample bounds",
        "decision_function_shape": "how the one-vs-one values are returned",
        "break_ties": "how predict breaks vote ties",
        "probability": "Platt scaling, fitted in Python over the solver's cross-validated values",
        "random_state": "the folds of the Platt scaling",
    })

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=False, tol=1e-3, cache_size=200, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, device=None,
                 numeric_mode=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    def _probability(self):
        return self.probability is True or (self.probability is not False and self.probability != "deprecated"
                                            and bool(self.probability))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the SVM model according to the given training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training vectors; the Gram matrix for kernel='precomputed'.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Rescales C per sample; samples of weight <= 0 are left out.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        self._tl_forget("probA_", "probB_")
        X, device = self._check_fit_X(X)
        if y is None:
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, but the target y is None.")
        y_ = column_or_1d(to_host(y), warn=True)
        check_classification_targets(y_)
        if y_.shape[0] != X.shape[0]:
            raise ValueError(
                "X and y have incompatible shapes.\n" + "X has %s samples, but y has %s." % (X.shape[0], y_.shape[0])
            )
        classes, codes = np.unique(y_, return_inverse=True)
        self.class_weight_ = compute_class_weight(self.class_weight, classes=classes, y=y_)
        if len(classes) < 2:
            raise ValueError("The number of classes has to be greater than one; got %d class" % len(classes))
        self.classes_ = classes
        sw = self._host_weights(sample_weight, X)
        self._set_gamma(X)
        mod, ctx = self._tl_context(device, X)

        k = len(classes)
        Ccls = float(self.C) * np.asarray(self.class_weight_, dtype=np.float64)
        Cs = Ccls[codes] if sw is None else sw * Ccls[codes]
        keep = np.flatnonzero(Cs > 0)
        if keep.size == 0:
            raise ValueError("Invalid input - all samples have zero or negative weights.")
        kept_classes = np.unique(codes[keep])
        if kept_classes.size < 2:
            raise ValueError("Invalid input - all samples with positive weights belong to the same class.")
        codes_k = codes[keep]
        start, count, perm = _group(codes_k, k)
        order = keep[perm]                      # original index of each grouped sample
        Cg = Cs[order]

        n_pairs = k * (k - 1) // 2
        nonzero = np.zeros(order.shape[0], dtype=bool)
        alphas, rhos, iters, status = [], np.empty(n_pairs), np.zeros(n_pairs, dtype=np.int32), 0
        probA, probB = np.empty(n_pairs), np.empty(n_pairs)
        want_proba = self._probability()
        rng = check_random_state(self.random_state) if want_proba else None
        p = 0
        for i in range(k):
            for j in range(i + 1, k):
                si, sj, ci, cj = start[i], start[j], count[i], count[j]
                sub = np.concatenate([np.arange(si, si + ci), np.arange(sj, sj + cj)])
                ysub = np.concatenate([np.ones(ci, np.int8), -np.ones(cj, np.int8)])
                if want_proba:
                    probA[p], probB[p] = self._platt(mod, ctx, X, order[sub], ysub, Cg[sub], rng)
                if ci == 0 or cj == 0:
                    # a class left empty by zero weights: libsvm's trivial problem
                    a = np.zeros(ci + cj)
                    rho, it, st = 0.0, 0, 0
                else:
                    a, rho, it, st = self._solve(mod, ctx, X, order[sub], np.arange(ci + cj), ysub,
                                                 -np.ones(ci + cj), Cg[sub])
                a = a * ysub
                nonzero[sub] |= np.abs(a) > 0
                alphas.append(a)
                rhos[p], iters[p] = rho, it
                status = max(status, st)
                p += 1

        n_sv = np.array([np.count_nonzero(nonzero[start[c]:start[c] + count[c]]) for c in range(k)], dtype=np.int32)
        sv_start = np.concatenate([[0], np.cumsum(n_sv)[:-1]]).astype(np.int64)
        total = int(n_sv.sum())
        sv_coef = np.zeros((k - 1, total))
        p = 0
        for i in range(k):
            for j in range(i + 1, k):
                si, sj, ci, cj = start[i], start[j], count[i], count[j]
                a = alphas[p]
                nz_i = nonzero[si:si + ci]
                nz_j = nonzero[sj:sj + cj]
                sv_coef[j - 1, sv_start[i]:sv_start[i] + n_sv[i]] = a[:ci][nz_i]
                sv_coef[i, sv_start[j]:sv_start[j] + n_sv[j]] = a[ci:][nz_j]
                p += 1

        self.support_ = order[nonzero].astype(np.int32)
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0), dtype=np.float64)
        else:
            self.support_vectors_ = np.asarray(X, dtype=np.float64)[self.support_]
        self._n_support = n_sv
        self._sv_start = sv_start
        self._dual_coef_ = sv_coef
        self._intercept_ = -rhos
        self.fit_status_ = int(status)
        self.n_iter_ = iters
        self.shape_fit_ = X.shape
        if want_proba:
            self.probA_, self.probB_ = probA, probB
        else:
            self.probA_, self.probB_ = np.empty(0), np.empty(0)
        if k == 2:
            self.intercept_ = -self._intercept_
            self.dual_coef_ = -self._dual_coef_
        else:
            self.intercept_ = self._intercept_.copy()
            self.dual_coef_ = self._dual_coef_
        if not (np.isfinite(self._intercept_).all() and np.isfinite(self._dual_coef_).all()):
            raise ValueError(
                "The dual coefficients or intercepts are not finite."
                " The input data may contain large values and need to be preprocessed."
            )
        self._warn_status()
        self._tl_record_fit(device, "identical")
        return self

    def _platt(self, mod, ctx, X, rows, ysub, Csub, rng):
        """libsvm's svm_binary_svc_probability: decision values of 5-fold
        cross-validation (folds drawn from rng), then sigmoid_train."""
        l = rows.shape[0]
        nr_fold = 5
        perm = rng.permutation(l)
        dec = np.zeros(l)
        for f in range(nr_fold):
            begin, end = f * l // nr_fold, (f + 1) * l // nr_fold
            test = perm[begin:end]
            train = np.concatenate([perm[:begin], perm[end:]])
            ytr = ysub[train]
            pos, neg = np.count_nonzero(ytr > 0), np.count_nonzero(ytr < 0)
            if pos == 0 and neg == 0:
                dec[test] = 0
            elif pos > 0 and neg == 0:
                dec[test] = 1
            elif pos == 0 and neg > 0:
                dec[test] = -1
            else:
                # the positive class first, as libsvm groups the training fold
                tr = np.concatenate([train[ytr > 0], train[ytr < 0]])
                a, rho, _, _ = self._solve(mod, ctx, X, rows[tr], np.arange(tr.shape[0]), ysub[tr],
                                           -np.ones(tr.shape[0]), Csub[tr])
                coef = a * ysub[tr]
                nz = np.flatnonzero(coef != 0)
                if self.kernel == "precomputed":
                    Xt = np.ascontiguousarray(np.asarray(X)[np.ix_(rows[test], rows[tr][nz])])
                    SV = Xt[:0]
                else:
                    Xt = np.ascontiguousarray(np.asarray(X)[rows[test]])
                    SV = np.ascontiguousarray(np.asarray(X)[rows[tr][nz]])
                ranges = np.array([[0, nz.shape[0], nz.shape[0], nz.shape[0]]], dtype=np.int64)
                d = mod.svm_decision(ctx, Xt, SV, np.ascontiguousarray(coef[nz][None, :]), ranges,
                                     np.array([rho]), self._params(mod))
                dec[test] = np.asarray(d)[:, 0]
        return sigmoid_train(dec, ysub)

    def _ovo_ranges(self):
        k = len(self.classes_)
        n_sv, st = self._n_support, self._sv_start
        coef = np.zeros((k * (k - 1) // 2, int(n_sv.sum())))
        ranges = np.zeros((k * (k - 1) // 2, 4), dtype=np.int64)
        p = 0
        for i in range(k):
            for j in range(i + 1, k):
                coef[p, st[i]:st[i] + n_sv[i]] = self._dual_coef_[j - 1, st[i]:st[i] + n_sv[i]]
                coef[p, st[j]:st[j] + n_sv[j]] = self._dual_coef_[i, st[j]:st[j] + n_sv[j]]
                ranges[p] = (st[i], st[i] + n_sv[i], st[j], st[j] + n_sv[j])
                p += 1
        return coef, ranges

    def _libsvm_decision(self, X):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        coef, ranges = self._ovo_ranges()
        return self._raw_decision(X, coef, ranges, -self._intercept_)

    def decision_function(self, X):
        """Evaluate the decision function for the samples in X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X : ndarray of shape (n_samples, n_classes * (n_classes-1) / 2)
            The one-vs-one values (positive: the first class of the pair); of
            shape (n_samples, n_classes) with decision_function_shape='ovr',
            and (n_samples,) for two classes.
        """
        dec = self._libsvm_decision(X)
        k = len(self.classes_)
        if k == 2:
            return -dec.ravel()
        if self.decision_function_shape == "ovr":
            return _ovr_decision_function(dec < 0, -dec, k)
        return dec

    def predict(self, X):
        """Perform classification on samples in X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples_test, n_samples_train)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        k = len(self.classes_)
        if self.break_ties and self.decision_function_shape == "ovr" and k > 2:
            return self.classes_.take(np.argmax(self.decision_function(X), axis=1))
        dec = self._libsvm_decision(X)
        votes = np.zeros((dec.shape[0], k), dtype=np.int64)
        p = 0
        for i in range(k):
            for j in range(i + 1, k):
                pos = dec[:, p] > 0
                votes[:, i] += pos
                votes[:, j] += ~pos
                p += 1
        return self.classes_.take(np.argmax(votes, axis=1))

    def _check_proba(self):
        if not self._probability():
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Probabilities of the classes for the samples in X (libsvm's Platt
        scaling and pairwise coupling).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        T : ndarray of shape (n_samples, n_classes)
        """
        from sklearn.exceptions import NotFittedError

        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        if self.probA_.size == 0:
            raise NotFittedError("predict_proba is not available when fitted with probability=False")
        dec = self._libsvm_decision(X)
        k = len(self.classes_)
        min_prob = 1e-7
        r = np.zeros((dec.shape[0], k, k))
        p = 0
        for i in range(k):
            for j in range(i + 1, k):
                v = np.clip(sigmoid_predict(dec[:, p], self.probA_[p], self.probB_[p]), min_prob, 1 - min_prob)
                r[:, i, j], r[:, j, i] = v, 1 - v
                p += 1
        if k == 2:
            return np.stack([r[:, 0, 1], r[:, 1, 0]], axis=1)
        return pairwise_coupling(r)

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        T : ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))


class SVR(DeviceScoreMixin, BaseSVM, RegressorMixin, BaseEstimator):
    __doc__ = """Epsilon-Support Vector Regression.

    scikit-learn's :class:`sklearn.svm.SVR` on twinlearn's SMO solver:
    libsvm's 2n-variable formulation of the epsilon-insensitive dual, solved
    by the same solver as :class:`SVC` (docs/NUMERICS.md, "Support vector
    machines").

    Parameters
    ----------
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'}, default='rbf'
    degree : int, default=3
    gamma : {'scale', 'auto'} or float, default='scale'
    coef0 : float, default=0.0
    tol : float, default=1e-3
    C : float, default=1.0
        Regularization parameter (> 0), scaled per sample by sample_weight.
    epsilon : float, default=0.1
        Width of the tube in which errors cost nothing (>= 0).
    shrinking : bool, default=True
    cache_size : float, default=200
    verbose : bool, default=False
    max_iter : int, default=-1
{device}

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        kernel='linear' only.
    dual_coef_ : ndarray of shape (1, n_SV)
    fit_status_ : int
    intercept_ : ndarray of shape (1,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_iter_ : int
    n_support_ : ndarray of shape (1,), dtype=int32
    shape_fit_ : tuple of int
    support_ : ndarray of shape (n_SV,)
    support_vectors_ : ndarray of shape (n_SV, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.svm import SVR
    >>> X = np.arange(10, dtype=float).reshape(-1, 1)
    >>> y = 0.5 * X.ravel()
    >>> float(np.round(SVR(kernel="linear", device="cpu").fit(X, y).predict([[4.0]])[0], 1))
    2.0
    """.replace("{device}", _DEVICE_DOC)

    _parameter_constraints: dict = {
        **BaseSVM._parameter_constraints,
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
    }

    _tl_native = BaseSVM._native_spec({"epsilon": "the solver's linear term (eps - y, eps + y)"})

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0, epsilon=0.1,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, device=None, numeric_mode=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the SVR model according to the given training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Rescales C per sample; samples of weight <= 0 are left out.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        X, device = self._check_fit_X(X)
        if y is None:
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, but the target y is None.")
        y_ = column_or_1d(to_host(y), warn=True)
        if y_.dtype.kind not in "biuf":
            try:
                y_ = y_.astype(np.float64)
            except (TypeError, ValueError) as e:
                raise ValueError(f"y: expected numeric targets ({e})") from None
        y_ = np.asarray(y_, dtype=np.float64)
        if not np.isfinite(y_).all():
            raise ValueError("Input y contains NaN or infinity.")
        if y_.shape[0] != X.shape[0]:
            raise ValueError(
                "X and y have incompatible shapes.\n" + "X has %s samples, but y has %s." % (X.shape[0], y_.shape[0])
            )
        sw = self._host_weights(sample_weight, X)
        self._set_gamma(X)
        mod, ctx = self._tl_context(device, X)

        n = X.shape[0]
        Cs = np.full(n, float(self.C)) if sw is None else sw * float(self.C)
        keep = np.flatnonzero(Cs > 0)
        if keep.size == 0:
            raise ValueError("Invalid input - all samples have zero or negative weights.")
        m = keep.shape[0]
        z = y_[keep]
        eps = float(self.epsilon)
        sample = np.concatenate([np.arange(m), np.arange(m)])
        ysg = np.concatenate([np.ones(m, np.int8), -np.ones(m, np.int8)])
        p = np.concatenate([eps - z, eps + z])
        C2 = np.concatenate([Cs[keep], Cs[keep]])
        a, rho, it, st = self._solve(mod, ctx, X, keep, sample, ysg, p, C2)
        coef = a[:m] - a[m:]
        nz = np.abs(coef) > 0
        self.support_ = keep[nz].astype(np.int32)
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0), dtype=np.float64)
        else:
            self.support_vectors_ = np.asarray(X, dtype=np.float64)[self.support_]
        self._n_support = np.array([self.support_.shape[0]], dtype=np.int32)
        self._dual_coef_ = coef[nz][None, :]
        self.dual_coef_ = self._dual_coef_
        self._intercept_ = np.array([-rho])
        self.intercept_ = self._intercept_.copy()
        self.fit_status_ = int(st)
        self.n_iter_ = int(it)
        self.shape_fit_ = X.shape
        if not (np.isfinite(self._intercept_).all() and np.isfinite(self._dual_coef_).all()):
            raise ValueError(
                "The dual coefficients or intercepts are not finite."
                " The input data may contain large values and need to be preprocessed."
            )
        self._warn_status()
        self._tl_record_fit(device, "identical")
        return self

    def predict(self, X):
        """Predict the targets of the samples in X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples_test, n_samples_train)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        nsv = self._dual_coef_.shape[1]
        ranges = np.array([[0, nsv, nsv, nsv]], dtype=np.int64)
        return self._raw_decision(X, self._dual_coef_, ranges, -self._intercept_)[:, 0]
