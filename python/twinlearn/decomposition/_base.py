"""Behaviour shared by PCA, IncrementalPCA and TruncatedSVD: input checks,
projection and back-projection on the backend, and the probabilistic PCA
model (covariance, precision, log-likelihood) on the host."""

from __future__ import annotations

from math import log

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.extmath import fast_logdet
from sklearn.utils.validation import check_is_fitted

from .. import _hostmath
from .._io import FLOAT_DTYPES, check_matrix, check_X, np_float_dtype, to_host, validate_host
from ..base import TwinlearnEstimatorMixin
from ._solvers import Backend, host_matmul


def fit_input(est, X, *, min_features=1, stage=True, finite_by_stats=False):
    """(X, backend, device) for a fit: X checked (finite, float32/float64,
    C-contiguous), kept on its device when the fit runs there; NumPy input of
    a GPU fit is copied to the device once (unless stage is False).
    finite_by_stats: X is not searched for NaN and infinities here; the
    fit's first pass, ``backend.column_stats(X, require_finite=True)``, finds
    them (one pass over the data fewer)."""
    est._tl_validate_params()
    device = est._tl_device(X)
    X = check_X(est, X, device, reset=True, for_fit=True, allow_nan=False, find_nonfinite=not finite_by_stats)
    n, d = X.shape
    if d < min_features:
        raise ValueError(
            f"Found array with {d} feature(s) (shape={tuple(X.shape)}) while a minimum of "
            f"{min_features} is required by {type(est).__name__}."
        )
    mod, ctx = est._tl_context(device, X)
    backend = Backend(mod, ctx, type(est).__name__)
    return (backend.stage(X) if stage else X), backend, device


def apply_input(est, X):
    """(X checked against the fitted features, backend) for transform."""
    check_is_fitted(est)
    device = est._tl_device(X)
    X = check_X(est, X, device, reset=False, for_fit=True, allow_nan=False)
    mod, ctx = est._tl_context(device, X)
    backend = Backend(mod, ctx, type(est).__name__)
    return backend.stage(X), backend


def back_project(est, X, components, n_components_name, *, reject_nonfinite):
    """(X @ components, backend) for inverse_transform: X of
    shape (n_samples, n_components) checked (device arrays for NaN and
    infinity only when `reject_nonfinite`), the product on the backend."""
    device = est._tl_device(X)
    X = check_matrix(X, device, find_nonfinite=reject_nonfinite)
    if X.shape[1] != components.shape[0]:
        raise ValueError(
            f"X has {X.shape[1]} features, but inverse_transform expects {components.shape[0]} ({n_components_name})"
        )
    mod, ctx = est._tl_context(device, X)
    backend = Backend(mod, ctx, type(est).__name__)
    comps = np.ascontiguousarray(components, dtype=np_float_dtype(X))
    return backend.matmul(X, False, comps, False, like=X), backend


def project(backend, X, components, mean=None, scale=None):
    """(X - mean) @ componentsᵀ / scale on the backend: the product of X with
    the components first, then the projected mean subtracted and the scale
    divided by columns (as scikit-learn, which never centres a copy of X)."""
    dt = np_float_dtype(X)
    comps = np.ascontiguousarray(components, dtype=dt)
    out = backend.matmul(X, False, comps, True, like=X)
    sub = None
    if mean is not None:
        m64, c64 = np.asarray(mean, dtype=dt).astype(np.float64), comps.astype(np.float64)
        # In identical mode the canonical product: BLAS's differs between CPUs.
        sub = host_matmul(c64, m64[:, None], True)[:, 0] if backend.exact_host else m64 @ c64.T
    if sub is not None or scale is not None:
        backend.affine(out, sub=sub, div=scale)
    return out


class BaseProjection(TwinlearnEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """A transformer onto the rows of components_ (PCA, IncrementalPCA,
    TruncatedSVD): float32 data stays float32; one output feature a component."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    @property
    def _n_features_out(self):
        return np.asarray(self.components_).shape[0]


class BasePCA(BaseProjection):
    """Projection on components_ after centring by mean_ (whitened on request)."""

    def _whiten_scale(self):
        scale = np.sqrt(np.asarray(self.explained_variance_))
        min_scale = np.finfo(scale.dtype).eps
        scale = np.where(scale < min_scale, min_scale, scale)
        return scale.astype(np.float64)

    def _transform_checked(self, backend, X):
        scale = self._whiten_scale() if self.whiten else None
        out = project(backend, X, self.components_, self.mean_, scale)
        backend.record("transform", out)
        return out

    def transform(self, X):
        """Apply the dimensionality reduction to X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch CUDA arrays (kept on their device).

        Returns
        -------
        X_new : array of shape (n_samples, n_components), the caller's array type
        """
        X, backend = apply_input(self, X)
        return backend.result(self._transform_checked(backend, X))

    def inverse_transform(self, X):
        """Transform data back to its original space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)

        Returns
        -------
        X_original : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        comps = np.asarray(self.components_)
        if self.whiten:
            comps = np.sqrt(np.asarray(self.explained_variance_))[:, None] * comps
        out, backend = back_project(self, X, comps, "n_components_", reject_nonfinite=True)
        backend.affine(out, add=np.asarray(self.mean_, dtype=np.float64))
        backend.record("inverse_transform", out)
        return backend.result(out)

    # -- the probabilistic PCA model (Tipping and Bishop), on the host --------

    def _scaled_components(self):
        comps = np.asarray(self.components_, dtype=np.float64)
        exp_var = np.asarray(self.explained_variance_, dtype=np.float64)
        if self.whiten:
            comps = comps * np.sqrt(exp_var[:, None])
        diff = np.where(exp_var > self.noise_variance_, exp_var - self.noise_variance_, 0.0)
        return comps, diff

    def get_covariance(self):
        """Data covariance under the generative model:
        ``components_ᵀ diag(explained_variance_ - noise_variance_) components_ + noise_variance_ I``.

        Returns
        -------
        cov : ndarray of shape (n_features, n_features)
        """
        check_is_fitted(self)
        comps, diff = self._scaled_components()
        mm = _hostmath.matmul if self._tl_host_exact() else np.matmul
        cov = mm(comps.T * diff, comps)
        cov.flat[:: cov.shape[0] + 1] += self.noise_variance_
        return cov.astype(np.asarray(self.components_).dtype, copy=False)

    def get_precision(self):
        """Data precision matrix under the generative model (the inverse of
        get_covariance, through the matrix inversion lemma).

        Returns
        -------
        precision : ndarray of shape (n_features, n_features)
        """
        check_is_fitted(self)
        n_features = np.asarray(self.components_).shape[1]
        dt = np.asarray(self.components_).dtype
        if self.n_components_ == 0:
            return (np.eye(n_features) / self.noise_variance_).astype(dt, copy=False)
        if self.noise_variance_ == 0.0:
            return linalg.inv(self.get_covariance())
        comps, diff = self._scaled_components()
        exact = self._tl_host_exact()
        mm = _hostmath.matmul if exact else np.matmul
        precision = mm(comps, comps.T) / self.noise_variance_
        with np.errstate(divide="ignore"):
            precision.flat[:: precision.shape[0] + 1] += 1.0 / diff
        L = _hostmath.cholesky(precision) if exact else None
        inner = _hostmath.spd_inverse(L) if L is not None else linalg.inv(precision)
        precision = mm(mm(comps.T, inner), comps)
        precision /= -(self.noise_variance_**2)
        precision.flat[:: precision.shape[0] + 1] += 1.0 / self.noise_variance_
        return precision.astype(dt, copy=False)

    def _tl_host_exact(self):
        """True when the host-side model arithmetic must give the same bits on
        any CPU (identical mode, _hostmath) rather than go through BLAS/LAPACK."""
        return self._tl_requested_mode() == "identical"

    def _score_samples(self, X):
        """score_samples as NumPy (computed on the host; in identical mode
        without BLAS/LAPACK, so the bits are the same on every machine)."""
        check_is_fitted(self)
        # Host arrays go to validate_host as given, so a DataFrame's column names are checked.
        X = validate_host(self, to_host(X), dtype=FLOAT_DTYPES, reset=False)
        Xr = X - self.mean_
        n_features = X.shape[1]
        precision = self.get_precision()
        if self._tl_host_exact():
            L = _hostmath.cholesky(precision)
            logdet = _hostmath.logdet_from_cholesky(L) if L is not None else fast_logdet(precision)
            log_like = -0.5 * _hostmath.row_sums(Xr * _hostmath.matmul(Xr, precision))
        else:
            logdet = fast_logdet(precision)
            log_like = -0.5 * np.sum(Xr * (Xr @ precision), axis=1)
        log_like -= 0.5 * (n_features * log(2.0 * np.pi) - logdet)
        return log_like

    def score_samples(self, X):
        """Log-likelihood of each sample under the probabilistic PCA model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ll : array of shape (n_samples,), the caller's array type
        """
        return self._score_samples(X)

    def score(self, X, y=None):
        """Average log-likelihood of the samples under the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        ll : float
        """
        return float(np.mean(self._score_samples(X)))
