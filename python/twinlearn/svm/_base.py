"""What SVC and SVR share: parameters, the native solver calls, the kernel
expansion of prediction and libsvm's Platt scaling."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _native as native, identity
from .._config import check_device, get_device
from .._io import check_sample_weight, check_X, to_host
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")


class BaseSVM(TwinlearnEstimatorMixin):
    """libsvm's C-SVC / epsilon-SVR on the twinlearn SMO solver (C++).

    The solver (twinlearn/svm/smo.hpp) is libsvm's, step for step: second
    order working set selection, shrinking, gradient reconstruction, libsvm's
    rho. Kernel values are computed in float64 (float32 input is widened
    exactly, as libsvm widens everything) by one function whose dot products
    and squared distances are summed in the canonical lane order, so the
    solver's path does not depend on the thread count.
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="right")],
        "shrinking": ["boolean"],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
        "max_iter": [Interval(Integral, -1, None, closed="left")],
        **TL_PARAMETER_CONSTRAINTS,
    }

    @staticmethod
    def _native_spec(python_only):
        return (
            native.Spec(
                "SvmParams",
                fields={
                    "kernel": "kernel",
                    "degree": "degree",
                    "gamma": "gamma",
                    "coef0": "coef0",
                    "tol": "tol",
                    "max_iter": "max_iter",
                    "shrinking": "shrinking",
                    "cache_size": "cache_size",
                },
                python_only={
                    "C": "scales each variable's bound (with class_weight and sample_weight): the solver's C array",
                    "verbose": "a line per fitted problem, printed by Python",
                    **python_only,
                },
            ),
        )

    # -- shared pieces --------------------------------------------------------------

    def _check_kernel_param(self):
        if callable(self.kernel):
            raise ValueError(
                f"kernel: a callable kernel is not supported by twinlearn's {type(self).__name__}; "
                "compute the Gram matrix and use kernel='precomputed'"
            )

    def _svm_device(self, X=None):
        """The CPU: the SVM solver has no CUDA backend yet. 'auto' runs on the
        CPU; an explicit GPU device is refused."""
        dev = check_device(self.device if self.device is not None else get_device())
        if dev.startswith("cuda"):
            raise ValueError(
                f"device={dev!r}: twinlearn's {type(self).__name__} has no CUDA backend yet; "
                "use device='cpu' or 'auto'"
            )
        return "cpu"

    def _params(self, mod):
        return native.params(
            mod.SvmParams,
            kernel=self.kernel,
            degree=int(self.degree),
            gamma=float(self._gamma),
            coef0=float(self.coef0),
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            shrinking=bool(self.shrinking),
            cache_size=float(self.cache_size),
        )

    def _check_fit_X(self, X):
        self._check_kernel_param()
        device = self._svm_device(X)
        X = check_X(self, X, device, reset=True, for_fit=True, allow_nan=False)
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(
                "Precomputed matrix must be a square matrix. Input is a {}x{} matrix.".format(X.shape[0], X.shape[1])
            )
        return X, device

    def _set_gamma(self, X):
        if self.kernel == "precomputed":
            self._gamma = 0.0
        elif isinstance(self.gamma, str):
            if self.gamma == "scale":
                X_var = X.var()
                self._gamma = 1.0 / (X.shape[1] * X_var) if X_var != 0 else 1.0
            else:
                self._gamma = 1.0 / X.shape[1]
        else:
            self._gamma = float(self.gamma)

    def _host_weights(self, sample_weight, X):
        sw = check_sample_weight(sample_weight, X)
        return None if sw is None else np.asarray(to_host(sw), dtype=np.float64)

    def _solve(self, mod, ctx, X, rows, sample, y, p, C):
        """One libsvm problem: (alpha, rho, n_iter, status)."""
        l = sample.shape[0]
        r = mod.smo_solve(
            ctx, X, np.ascontiguousarray(rows, dtype=np.int64), np.ascontiguousarray(sample, dtype=np.int64),
            np.ascontiguousarray(y, dtype=np.int8), np.ascontiguousarray(p, dtype=np.float64),
            np.ascontiguousarray(C, dtype=np.float64), self._params(mod), np.zeros(l),
        )
        if self.verbose:
            print(f"optimization finished, #iter = {r.n_iter}\nobj = {r.obj:.6f}, rho = {r.rho:.6f}")
        if identity.enabled():
            identity.record(f"{type(self).__name__}.fit.alpha", np.asarray(r.alpha))
        return np.asarray(r.alpha), r.rho, r.n_iter, r.status

    def _warn_status(self):
        if self.fit_status_ == 1:
            warnings.warn(
                "Solver terminated early (max_iter=%i)."
                "  Consider pre-processing your data with"
                " StandardScaler or MinMaxScaler." % self.max_iter,
                ConvergenceWarning,
            )

    def _check_predict_X(self, X):
        check_is_fitted(self)
        device = self._svm_device(X)
        X = check_X(self, X, device, reset=False, allow_nan=False)
        if self.kernel == "precomputed" and X.shape[1] != self.shape_fit_[0]:
            raise ValueError(
                "X.shape[1] = %d should be equal to %d, the number of samples at training time"
                % (X.shape[1], self.shape_fit_[0])
            )
        return X, device

    def _raw_decision(self, X, coef, ranges, rho):
        """libsvm's decision values: (n, k), classifier c's sum over its
        support vectors minus rho[c], in libsvm's order."""
        X, device = self._check_predict_X(X)
        mod, ctx = self._tl_context(device, X)
        if self.kernel == "precomputed":
            Xk = np.ascontiguousarray(np.asarray(X)[:, self.support_])
            SV = Xk[:0]
        else:
            Xk = X
            SV = np.ascontiguousarray(self.support_vectors_, dtype=np.asarray(X).dtype)
        out = mod.svm_decision(
            ctx, Xk, SV, np.ascontiguousarray(coef, dtype=np.float64), np.ascontiguousarray(ranges, dtype=np.int64),
            np.ascontiguousarray(rho, dtype=np.float64), self._params(mod),
        )
        out = np.asarray(out)
        if identity.enabled():
            identity.record(f"{type(self).__name__}.decision", out)
        return out

    @property
    def coef_(self):
        """Weights of the features, ``dual_coef_ @ support_vectors_``
        (kernel='linear' only): ndarray of shape (n_classes * (n_classes - 1) / 2, n_features)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        if hasattr(self, "classes_") and len(self.classes_) > 2:
            pairs, _ = self._ovo_ranges()  # each one-vs-one classifier's weights over all support vectors
            coef = pairs @ self.support_vectors_
        else:
            coef = self.dual_coef_ @ self.support_vectors_
        coef.flags.writeable = False
        return coef

    @property
    def n_support_(self):
        """Number of support vectors of each class (one entry for SVR)."""
        try:
            check_is_fitted(self)
        except Exception:
            raise AttributeError("n_support_") from None
        return self._n_support

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = False
        return tags


# -- libsvm's Platt scaling ---------------------------------------------------------------


def sigmoid_train(dec, labels):
    """libsvm's sigmoid_train (Lin, Lin & Weng 2007): (A, B) of
    P(y=1 | f) = 1 / (1 + exp(A f + B)), Newton's method with backtracking."""
    dec = np.asarray(dec, dtype=np.float64)
    pos = labels > 0
    prior1 = float(np.count_nonzero(pos))
    prior0 = float(dec.shape[0]) - prior1
    max_iter, min_step, sigma, eps = 100, 1e-10, 1e-12, 1e-5
    hi, lo = (prior1 + 1.0) / (prior1 + 2.0), 1.0 / (prior0 + 2.0)
    t = np.where(pos, hi, lo)
    A, B = 0.0, float(np.log((prior0 + 1.0) / (prior1 + 1.0)))

    def f(a, b):
        fApB = dec * a + b
        return float(np.sum(np.where(fApB >= 0, t * fApB + np.log1p(np.exp(-np.abs(fApB))),
                                     (t - 1) * fApB + np.log1p(np.exp(-np.abs(fApB))))))

    fval = f(A, B)
    for _ in range(max_iter):
        fApB = dec * A + B
        e = np.exp(-np.abs(fApB))
        p = np.where(fApB >= 0, e / (1.0 + e), 1.0 / (1.0 + e))
        q = np.where(fApB >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        d2 = p * q
        h11 = sigma + float(np.sum(dec * dec * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(dec * d2))
        d1 = t - p
        g1, g2 = float(np.sum(dec * d1)), float(np.sum(d1))
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            nA, nB = A + step * dA, B + step * dB
            nf = f(nA, nB)
            if nf < fval + 0.0001 * step * gd:
                A, B, fval = nA, nB, nf
                break
            step /= 2.0
        if step < min_step:
            break
    return A, B


def sigmoid_predict(dec, A, B):
    fApB = dec * A + B
    e = np.exp(-np.abs(fApB))
    return np.where(fApB >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def pairwise_coupling(r):
    """libsvm's multiclass_probability (Wu, Lin & Weng 2004, method 2) for
    every row: r (n, k, k) pairwise probabilities -> (n, k)."""
    n, k, _ = r.shape
    Q = -r.transpose(0, 2, 1) * r
    diag = np.einsum("nij,nij->nj", r, r) - np.einsum("nii->ni", r) ** 2
    idx = np.arange(k)
    Q[:, idx, idx] = diag
    p = np.full((n, k), 1.0 / k)
    eps = 0.005 / k
    active = np.ones(n, dtype=bool)
    for _ in range(max(100, k)):
        a = np.flatnonzero(active)
        if a.size == 0:
            break
        Qa, pa = Q[a], p[a]
        Qp = np.einsum("nij,nj->ni", Qa, pa)
        pQp = np.einsum("ni,ni->n", pa, Qp)
        err = np.max(np.abs(Qp - pQp[:, None]), axis=1)
        done = err < eps
        active[a[done]] = False
        a, Qa, pa, Qp, pQp = a[~done], Qa[~done], pa[~done], Qp[~done], pQp[~done]
        for t in range(k):
            diff = (-Qp[:, t] + pQp) / Qa[:, t, t]
            pa[:, t] += diff
            pQp = (pQp + diff * (diff * Qa[:, t, t] + 2 * Qp[:, t])) / (1 + diff) / (1 + diff)
            Qp = (Qp + diff[:, None] * Qa[:, t, :]) / (1 + diff)[:, None]
            pa /= (1 + diff)[:, None]
        p[a] = pa
    return p


