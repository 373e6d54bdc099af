"""StandardScaler on the CPU and CUDA backends."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from .. import identity
from .._io import INF_MESSAGE, check_no_overflow, check_sample_weight, check_X, np_float_dtype, transform_elementwise
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin


def _merge_stats(w_a, mean_a, m2_a, w_b, mean_b, m2_b):
    """Chan et al.'s merge of two (weight, mean, M2) summaries, in the same
    operand order as the backends' canonical tree (a = earlier data)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        w = w_a + w_b
        delta = mean_b - mean_a
        mean = mean_a + delta * (w_b / w)
        m2 = (m2_a + m2_b) + (delta * delta) * ((w_a * w_b) / w)
    mean = np.where(w_a == 0, mean_b, np.where(w_b == 0, mean_a, mean))
    m2 = np.where(w_a == 0, m2_b, np.where(w_b == 0, m2_a, m2))
    return w, mean, m2


def _constant_features(var, mean, n_samples):
    """Features whose variance is indistinguishable from zero at float64 precision."""
    eps = np.finfo(np.float64).eps
    upper = n_samples * eps * var + (n_samples * mean * eps) ** 2
    return var <= upper


class _ScalerTagsMixin:
    """Tags of the column scalers: NaN is ignored by fit and kept by
    transform, and float32 data stays float32."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class StandardScaler(TwinlearnEstimatorMixin, _ScalerTagsMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardize features by removing the mean and scaling to unit variance.

    scikit-learn's :class:`sklearn.preprocessing.StandardScaler`, on the CPU
    backend or a GPU. The statistics use the canonical column reduction
    (docs/NUMERICS.md), so every numeric mode delivers ``identical``: the same
    bits on the CPU and on any GPU, for any thread count. NaN entries are
    ignored when fitting and kept by transform, as in scikit-learn.

    Parameters
    ----------
    copy : bool, default=True
        If False, transform NumPy input in place where possible.
    with_mean : bool, default=True
        Center the data before scaling.
    with_std : bool, default=True
        Scale the data to unit variance.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where to compute; None follows :func:`twinlearn.get_device`.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        The numeric contract asked for; None follows
        :func:`twinlearn.get_numeric_mode`.

    Attributes
    ----------
    scale_ : ndarray of shape (n_features,) or None
    mean_ : ndarray of shape (n_features,) or None
    var_ : ndarray of shape (n_features,) or None
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_samples_seen_ : int or ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn import StandardScaler
    >>> X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    >>> scaler = StandardScaler(device="cpu").fit(X)
    >>> scaler.mean_
    array([0.5, 0.5])
    >>> scaler.transform([[2.0, 2.0]])
    array([[3., 3.]])
    """

    _parameter_constraints: dict = {
        "copy": ["boolean"],
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, *, copy=True, with_mean=True, with_std=True, device=None, numeric_mode=None):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std
        self.device = device
        self.numeric_mode = numeric_mode


    def fit(self, X, y=None, sample_weight=None):
        """Compute the mean and standard deviation of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch / DLPack device arrays.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._tl_forget("scale_", "n_samples_seen_", "mean_", "var_", "_tl_w", "_tl_mean", "_tl_m2")
        return self.partial_fit(X, y, sample_weight)

    def _check_input(self, X, device, *, reset):
        # Infinities are counted by the kernels in the pass that does the work.
        return check_X(self, X, device, reset=reset, for_fit=True, find_inf=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """Update the mean and standard deviation with a batch X (Chan et al.'s merge).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        first_call = not hasattr(self, "n_samples_seen_")
        device = self._tl_device(X)
        X = self._check_input(X, device, reset=first_call)
        sw = check_sample_weight(sample_weight, X)
        mod, ctx = self._tl_context(device, X)
        stats = np.asarray(mod.column_stats(ctx, X, sw))
        identity.record("StandardScaler.partial_fit.column_stats", stats)
        w_b, mean_b, m2_b, n_b, ninf = stats
        if ninf.any():
            raise ValueError(INF_MESSAGE)
        # As scikit-learn >= 1.6: a float64 count of the non-NaN entries, or
        # their summed weights; when nothing is computed, the plain count of
        # non-NaN entries (weights ignored) in int64, or in X's dtype when
        # weights were given.
        stats_needed = self.with_mean or self.with_std
        if stats_needed:
            count_b = w_b if sample_weight is not None else n_b
        else:
            count_b = n_b.astype(X.dtype if sample_weight is not None else np.int64)

        if first_call:
            w, mean, m2 = w_b, mean_b, m2_b
            seen = count_b
        else:
            prev_seen = np.broadcast_to(np.asarray(self.n_samples_seen_), w_b.shape)
            w, mean, m2 = _merge_stats(self._tl_w, self._tl_mean, self._tl_m2, w_b, mean_b, m2_b)
            seen = prev_seen.astype(count_b.dtype) + count_b
        # Finite X whose mean or squared deviations overflow: an error, not inf.
        check_no_overflow("StandardScaler", "its mean or variance overflows", mean[w > 0], m2[w > 0],
                          dtype=np.float64, power=2, terms=int(np.max(seen, initial=1)))
        self._tl_w, self._tl_mean, self._tl_m2 = w, mean, m2

        with np.errstate(invalid="ignore", divide="ignore"):
            mean_out = np.where(w > 0, mean, np.nan)
            var_out = np.where(w > 0, m2 / w, np.nan)
        self.n_samples_seen_ = seen[0] if seen.size and np.all(seen == seen[0]) else seen
        if not self.with_mean and not self.with_std:
            self.mean_ = None
            self.var_ = None
        else:
            self.mean_ = mean_out
            self.var_ = var_out if self.with_std else None
        if self.with_std:
            scale = np.sqrt(self.var_)
            scale[_constant_features(self.var_, self.mean_, self.n_samples_seen_)] = 1.0
            self.scale_ = scale
            identity.record("StandardScaler.scale_", self.scale_)
        else:
            self.scale_ = None
        if self.mean_ is not None:
            identity.record("StandardScaler.mean_", self.mean_)
        self._tl_record_fit(device, "identical")
        return self

    def _apply(self, X, copy, inverse):
        def run(mod, ctx, X, out):
            # scikit-learn works in X's dtype: `X -= mean_.astype(X.dtype)`.
            dt = np_float_dtype(X)
            mean = self.mean_.astype(dt).astype(np.float64) if self.with_mean else None
            scale = self.scale_.astype(dt).astype(np.float64) if self.with_std else None
            if inverse:
                n_inf = mod.column_affine_apply(ctx, X, out, mul=scale, add=mean)
            else:
                n_inf = mod.column_affine_apply(ctx, X, out, sub=mean, div=scale)
            identity.record("StandardScaler.inverse_transform" if inverse else "StandardScaler.transform", out)
            return n_inf

        return transform_elementwise(self, X, copy, run, counts_inf=True)

    def transform(self, X, copy=None):
        """Perform standardization by centering and scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        copy : bool, default=None
            Copy the input X or not; None uses the ``copy`` parameter.

        Returns
        -------
        X_tr : array of shape (n_samples, n_features), the caller's array type
        """
        return self._apply(X, copy, inverse=False)

    def inverse_transform(self, X, copy=None):
        """Scale back the data to the original representation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        copy : bool, default=None

        Returns
        -------
        X_original : array of shape (n_samples, n_features), the caller's array type
        """
        return self._apply(X, copy, inverse=True)
