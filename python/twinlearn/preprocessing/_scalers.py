"""MinMaxScaler, MaxAbsScaler, RobustScaler and Normalizer on the CPU and CUDA backends.

Fitting reduces columns with exact, order-free kernels (minimum, maximum,
order statistics), so every numeric mode delivers ``identical``: the same bits
on the CPU backend and on any GPU, for any thread count. Everything after the
column reduction (ranges, scales, quantile interpolation) is a handful of
NumPy operations on per-feature vectors, the same on every backend.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from scipy import stats
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import identity
from .._io import INF_MESSAGE, check_no_overflow, check_X, np_float_dtype, transform_elementwise, zeros_to_one
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ._data import _ScalerTagsMixin


def _f64(a):
    return None if a is None else np.ascontiguousarray(a, dtype=np.float64)


def _minimum(a, b):
    """np.minimum with the extrema rule of the core (-0 below +0); NaN propagates."""
    r = np.where((b < a) | ((b == a) & np.signbit(b)), b, a)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r).astype(a.dtype)


def _maximum(a, b):
    """np.maximum with the extrema rule of the core (+0 above -0); NaN propagates."""
    r = np.where((b > a) | ((b == a) & ~np.signbit(b)), b, a)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r).astype(a.dtype)


def _column_extrema(est, X, device, tag):
    """(min, max, max_abs, n_valid) of each column of X, the values in X's dtype."""
    mod, ctx = est._tl_context(device, X)
    r = mod.column_extrema(ctx, X)
    mn, mx, mabs, n_valid = (np.asarray(a) for a in (r.min, r.max, r.max_abs, r.n_valid))
    if identity.enabled():
        identity.record(tag, np.stack([mn, mx, mabs, n_valid]))
    if np.isinf(mn).any() or np.isinf(mx).any():
        raise ValueError(INF_MESSAGE)
    if (n_valid == 0).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    dt = np_float_dtype(X)
    return mn.astype(dt), mx.astype(dt), mabs.astype(dt), n_valid.astype(np.int64)


class _ColumnScalerMixin(_ScalerTagsMixin):
    """transform/inverse_transform through the core's column-affine kernel."""

    def _partial_fit_extrema(self, X, tag):
        """Check a partial_fit batch X, count its rows in n_samples_seen_, and
        return (first_pass, device, (min, max, max_abs, n_valid) of its columns)."""
        first_pass = not hasattr(self, "n_samples_seen_")
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=first_pass, for_fit=True)
        extrema = _column_extrema(self, X, device, tag)
        self.n_samples_seen_ = X.shape[0] if first_pass else self.n_samples_seen_ + X.shape[0]
        return first_pass, device, extrema

    def _affine(self, X, copy, *, sub=None, div=None, mul=None, add=None, clip=None, tag):
        def run(mod, ctx, X, out):
            n_inf = mod.column_affine_apply(ctx, X, out, _f64(sub), _f64(div), _f64(mul), _f64(add), clip)
            identity.record(tag, out)
            return n_inf

        return transform_elementwise(self, X, copy, run, counts_inf=True)


class MinMaxScaler(TwinlearnEstimatorMixin, _ColumnScalerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Transform features by scaling each feature to a given range.

    scikit-learn's :class:`sklearn.preprocessing.MinMaxScaler`, on the CPU
    backend or a GPU. The column minima and maxima are exact (NaN ignored,
    -0 below +0), so every numeric mode delivers ``identical``. NaN entries
    are ignored when fitting and kept by transform, as in scikit-learn.

    Parameters
    ----------
    feature_range : tuple (min, max), default=(0, 1)
        Desired range of transformed data.
    copy : bool, default=True
        If False, transform NumPy input in place where possible.
    clip : bool, default=False
        Clip transformed values of held-out data to ``feature_range``.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where to compute; None follows :func:`twinlearn.get_device`.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        The numeric contract asked for; None follows
        :func:`twinlearn.get_numeric_mode`.

    Attributes
    ----------
    min_ : ndarray of shape (n_features,)
        Per feature adjustment for minimum: ``min - data_min_ * scale_``.
    scale_ : ndarray of shape (n_features,)
        Per feature relative scaling of the data.
    data_min_ : ndarray of shape (n_features,)
    data_max_ : ndarray of shape (n_features,)
    data_range_ : ndarray of shape (n_features,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_samples_seen_ : int

    Examples
    --------
    >>> from twinlearn import MinMaxScaler
    >>> data = [[-1, 2], [-0.5, 6], [0, 10], [1, 18]]
    >>> scaler = MinMaxScaler(device="cpu").fit(data)
    >>> scaler.data_max_
    array([ 1., 18.])
    >>> scaler.transform([[2, 2]])
    array([[1.5, 0. ]])
    """

    _parameter_constraints: dict = {
        "feature_range": [tuple],
        "copy": ["boolean"],
        "clip": ["boolean"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, feature_range=(0, 1), *, copy=True, clip=False, device=None, numeric_mode=None):
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip
        self.device = device
        self.numeric_mode = numeric_mode

    def fit(self, X, y=None):
        """Compute the minimum and maximum to be used for later scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch / DLPack device arrays.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._tl_forget("scale_", "min_", "n_samples_seen_", "data_min_", "data_max_", "data_range_")
        return self.partial_fit(X, y)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Online computation of min and max on X for later scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        feature_range = self.feature_range
        if len(feature_range) != 2 or not all(isinstance(v, Real) for v in feature_range):
            raise ValueError(f"The 'feature_range' parameter of MinMaxScaler must be a tuple of two numbers; "
                             f"got {feature_range!r}.")
        if feature_range[0] >= feature_range[1]:
            raise ValueError(
                "Minimum of desired feature range must be smaller than maximum. Got %s." % str(feature_range)
            )
        first_pass, device, (data_min, data_max, _, _) = self._partial_fit_extrema(
            X, "MinMaxScaler.partial_fit.column_extrema"
        )
        if not first_pass:
            # As np.minimum / np.maximum: the wider of the two dtypes.
            dt = np.result_type(self.data_min_, data_min)
            data_min = _minimum(self.data_min_.astype(dt), data_min.astype(dt))
            data_max = _maximum(self.data_max_.astype(dt), data_max.astype(dt))
        dt = data_min.dtype
        lo, hi = np.asarray(feature_range[0], dtype=dt), np.asarray(feature_range[1], dtype=dt)
        with np.errstate(over="ignore"):
            data_range = data_max - data_min
        check_no_overflow("MinMaxScaler", "the range (max - min) of a column overflows", data_range, dtype=dt,
                          find_nan=False)
        self.scale_ = (hi - lo) / zeros_to_one(data_range)
        self.min_ = lo - data_min * self.scale_
        self.data_min_ = data_min
        self.data_max_ = data_max
        self.data_range_ = data_range
        identity.record("MinMaxScaler.scale_", self.scale_)
        identity.record("MinMaxScaler.min_", self.min_)
        self._tl_record_fit(device, "identical")
        return self

    def transform(self, X):
        """Scale features of X according to feature_range.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Xt : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        clip = (float(self.feature_range[0]), float(self.feature_range[1])) if self.clip else None
        return self._affine(X, None, mul=self.scale_, add=self.min_, clip=clip, tag="MinMaxScaler.transform")

    def inverse_transform(self, X):
        """Undo the scaling of X according to feature_range.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        return self._affine(X, None, sub=self.min_, div=self.scale_, tag="MinMaxScaler.inverse_transform")


class MaxAbsScaler(TwinlearnEstimatorMixin, _ColumnScalerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature by its maximum absolute value.

    scikit-learn's :class:`sklearn.preprocessing.MaxAbsScaler` for dense
    data, on the CPU backend or a GPU. The maxima are exact, so every numeric
    mode delivers ``identical``. NaN entries are ignored when fitting and kept
    by transform. Sparse input is not supported.

    Parameters
    ----------
    copy : bool, default=True
        If False, transform NumPy input in place where possible.
    clip : bool, default=False
        Clip transformed values of held-out data to [-1, 1].
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    scale_ : ndarray of shape (n_features,)
    max_abs_ : ndarray of shape (n_features,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_samples_seen_ : int

    Examples
    --------
    >>> from twinlearn import MaxAbsScaler
    >>> X = [[1., -1., 2.], [2., 0., 0.], [0., 1., -1.]]
    >>> MaxAbsScaler(device="cpu").fit_transform(X)
    array([[ 0.5, -1. ,  1. ],
           [ 1. ,  0. ,  0. ],
           [ 0. ,  1. , -0.5]])
    """

    _parameter_constraints: dict = {
        "copy": ["boolean"],
        "clip": ["boolean"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, *, copy=True, clip=False, device=None, numeric_mode=None):
        self.copy = copy
        self.clip = clip
        self.device = device
        self.numeric_mode = numeric_mode

    def fit(self, X, y=None):
        """Compute the maximum absolute value to be used for later scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._tl_forget("scale_", "n_samples_seen_", "max_abs_")
        return self.partial_fit(X, y)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Online computation of the maximum absolute value of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        first_pass, device, (_, _, max_abs, _) = self._partial_fit_extrema(
            X, "MaxAbsScaler.partial_fit.column_extrema"
        )
        if not first_pass:
            dt = np.result_type(self.max_abs_, max_abs)
            max_abs = _maximum(self.max_abs_.astype(dt), max_abs.astype(dt))
        self.max_abs_ = max_abs
        self.scale_ = zeros_to_one(max_abs)
        identity.record("MaxAbsScaler.scale_", self.scale_)
        self._tl_record_fit(device, "identical")
        return self

    def transform(self, X):
        """Scale the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_tr : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        clip = (-1.0, 1.0) if self.clip else None
        return self._affine(X, None, div=self.scale_, clip=clip, tag="MaxAbsScaler.transform")

    def inverse_transform(self, X):
        """Scale back the data to the original representation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        return self._affine(X, None, mul=self.scale_, tag="MaxAbsScaler.inverse_transform")


def _median_and_quantiles(est, X, device, n_valid, quantiles, with_median):
    """NumPy's ``nanmedian`` and ``nanpercentile(..., method='linear')`` of
    each column, bit for bit, from exact order statistics.

    quantiles: the percentiles asked for (a tuple, as scikit-learn passes it).
    Returns (median or None, q of shape (len(quantiles), n_features) float64).
    """
    dt = np_float_dtype(X)
    n = n_valid
    empty = n == 0
    rank_rows, median = [], None
    if with_median:
        rank_rows += [np.where(empty, -1, (n - 1) // 2), np.where(empty, -1, n // 2)]
    # numpy's 'linear' method: virtual index (n - 1) * q in float64; at or past
    # the last element both neighbours are the last element and gamma is
    # taken against numpy's sentinel index -1.
    q = np.true_divide(np.asarray(quantiles), 100)
    qn = q.size
    if qn:
        v = (n[None, :] - 1) * q[:, None]
        prev = np.floor(v)
        above = v >= (n - 1)[None, :]
        gamma = v - np.where(above, -1.0, prev)
        last = (n - 1)[None, :]
        prev_rank = np.where(above, last, prev).astype(np.int64)
        next_rank = np.where(above, last, prev + 1).astype(np.int64)
        prev_rank[:, empty] = -1
        next_rank[:, empty] = -1
        rank_rows += list(prev_rank) + list(next_rank)
    if not rank_rows:
        return None, np.empty((0, n.size))
    ranks = np.ascontiguousarray(np.stack(rank_rows), dtype=np.int64)
    mod, ctx = est._tl_context(device, X)
    sel = np.asarray(mod.column_select(ctx, X, ranks)).astype(dt, copy=False)
    identity.record(f"{type(est).__name__}.fit.column_select", sel)
    k = 0
    if with_median:
        lo, hi = sel[0], sel[1]
        # numpy: the mean of the middle element(s) in the input dtype.
        median = np.where(n % 2 == 1, lo, (lo + hi) / dt.type(2))
        median = median.astype(dt)
        k = 2
    out = np.empty((0, n.size))
    if qn:
        a, b = sel[k : k + qn], sel[k + qn : k + 2 * qn]
        diff = b - a
        with np.errstate(invalid="ignore"):
            lerp = a + diff * gamma
            lerp = np.where(gamma >= 0.5, b - diff * (1 - gamma), lerp)
        lerp[:, empty] = np.nan
        out = lerp
    return median, out


class RobustScaler(TwinlearnEstimatorMixin, _ColumnScalerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale features using statistics that are robust to outliers.

    scikit-learn's :class:`sklearn.preprocessing.RobustScaler` for dense
    data, on the CPU backend or a GPU. The median and the quantiles are exact:
    order statistics found by selection (CPU) or a per-column radix sort
    (GPU), interpolated as ``numpy.nanpercentile`` does, so every numeric mode
    delivers ``identical`` and the attributes are NumPy's bits. NaN entries
    are ignored when fitting and kept by transform.

    Parameters
    ----------
    with_centering : bool, default=True
        Center the data before scaling (by the median).
    with_scaling : bool, default=True
        Scale the data to the interquantile range.
    quantile_range : tuple (q_min, q_max), 0.0 <= q_min <= q_max <= 100.0, default=(25.0, 75.0)
        Quantile range used to calculate ``scale_``.
    copy : bool, default=True
        If False, transform NumPy input in place where possible.
    unit_variance : bool, default=False
        Scale so that normally distributed features have a variance of 1.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    center_ : ndarray of shape (n_features,) or None
    scale_ : ndarray of shape (n_features,) or None
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> from twinlearn import RobustScaler
    >>> X = [[ 1., -2.,  2.], [ -2.,  1.,  3.], [ 4.,  1., -2.]]
    >>> RobustScaler(device="cpu").fit_transform(X)
    array([[ 0. , -2. ,  0. ],
           [-1. ,  0. ,  0.4],
           [ 1. ,  0. , -1.6]])
    """

    _parameter_constraints: dict = {
        "with_centering": ["boolean"],
        "with_scaling": ["boolean"],
        "quantile_range": [tuple],
        "copy": ["boolean"],
        "unit_variance": ["boolean"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        with_centering=True,
        with_scaling=True,
        quantile_range=(25.0, 75.0),
        copy=True,
        unit_variance=False,
        device=None,
        numeric_mode=None,
    ):
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.unit_variance = unit_variance
        self.copy = copy
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Compute the median and quantiles to be used for scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch / DLPack device arrays.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=True, for_fit=True)
        if len(self.quantile_range) != 2:
            raise ValueError("Invalid quantile range: %s" % str(self.quantile_range))
        q_min, q_max = self.quantile_range
        if not 0 <= q_min <= q_max <= 100:
            raise ValueError("Invalid quantile range: %s" % str(self.quantile_range))
        _, _, _, n_valid = _column_extrema(self, X, device, "RobustScaler.fit.column_extrema")
        quantiles = self.quantile_range if self.with_scaling else ()
        center, q = _median_and_quantiles(self, X, device, n_valid, quantiles, self.with_centering)
        self.center_ = center
        if self.with_scaling:
            scale = zeros_to_one(q[1] - q[0])
            if self.unit_variance:
                adjust = stats.norm.ppf(q_max / 100.0) - stats.norm.ppf(q_min / 100.0)
                scale = scale / adjust
            self.scale_ = scale
            identity.record("RobustScaler.scale_", self.scale_)
        else:
            self.scale_ = None
        if center is not None:
            identity.record("RobustScaler.center_", self.center_)
        self._tl_record_fit(device, "identical")
        return self

    def transform(self, X):
        """Center and scale the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_tr : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        return self._affine(
            X,
            None,
            sub=self.center_ if self.with_centering else None,
            div=self.scale_ if self.with_scaling else None,
            tag="RobustScaler.transform",
        )

    def inverse_transform(self, X):
        """Scale back the data to the original representation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : array of shape (n_samples, n_features), the caller's array type
        """
        check_is_fitted(self)
        return self._affine(
            X,
            None,
            mul=self.scale_ if self.with_scaling else None,
            add=self.center_ if self.with_centering else None,
            tag="RobustScaler.inverse_transform",
        )


class Normalizer(TwinlearnEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Normalize samples individually to unit norm.

    scikit-learn's :class:`sklearn.preprocessing.Normalizer` for dense data,
    on the CPU backend or a GPU. Each row's norm is accumulated in double in
    one fixed order (32 interleaved lane sums combined by a fixed tree; the
    GPU runs it as one warp per row), so every numeric mode delivers
    ``identical``. The transform is stateless; ``fit`` only checks X.

    Parameters
    ----------
    norm : {'l1', 'l2', 'max'}, default='l2'
        The norm to use to normalize each non zero sample.
    copy : bool, default=True
        If False, transform NumPy input in place where possible.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> from twinlearn import Normalizer
    >>> X = [[4, 1, 2, 2], [1, 3, 9, 3], [5, 7, 5, 1]]
    >>> Normalizer(device="cpu").fit_transform(X)
    array([[0.8, 0.2, 0.4, 0.4],
           [0.1, 0.3, 0.9, 0.3],
           [0.5, 0.7, 0.5, 0.1]])
    """

    _parameter_constraints: dict = {
        "norm": [StrOptions({"l1", "l2", "max"})],
        "copy": ["boolean"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, norm="l2", *, copy=True, device=None, numeric_mode=None):
        self.norm = norm
        self.copy = copy
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Only validates the parameters and X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        check_X(self, X, device, reset=True, for_fit=True, allow_nan=False)
        self._tl_record_fit(device, "identical")
        return self

    def transform(self, X, copy=None):
        """Scale each row of X to unit norm.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        copy : bool, default=None
            Copy the input X or not; None uses the ``copy`` parameter.

        Returns
        -------
        X_tr : array of shape (n_samples, n_features), the caller's array type
        """
        self._tl_validate_params()
        if self.norm not in ("l1", "l2", "max"):
            raise ValueError(f"The 'norm' parameter of Normalizer must be a str among {{'l1', 'l2', 'max'}}. "
                             f"Got {self.norm!r} instead.")

        def run(mod, ctx, X, out):
            mod.normalizer_apply(ctx, X, self.norm, out)
            identity.record("Normalizer.transform", out)
            self._tl_record_fit(ctx.device, "identical")

        return transform_elementwise(self, X, copy, run, allow_nan=False, fitted=False)

    def numeric_mode_used(self) -> str:
        """The numeric mode the last fit or transform delivered."""
        info = getattr(self, "_tl_fit_info", None)
        if info is None:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This Normalizer has neither been fitted nor used to transform data yet.")
        return info["delivered"]
