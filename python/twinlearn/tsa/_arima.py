"""Batched seasonal ARIMA on the CPU and CUDA backends.

Each series is fitted on its own by one host/device function of the core
(twinlearn/tsa/arima.hpp): differencing, a conditional-sum-of-squares start,
then the exact Gaussian likelihood (a Kalman filter on statsmodels' SARIMAX
state-space form with the stationary initial state covariance) maximised by
a bounded quasi-Newton minimiser with a central-difference gradient. A
series' results depend on that series alone: the same bits fitted alone or
in any batch, at any thread count, on the CPU or a GPU.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _native as native
from .. import identity
from .._io import check_X, to_host
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin

__all__ = ["ARIMA"]

#: status_ codes of the core (ArimaStatus) and what they mean.
STATUS = {
    0: "ok",
    1: "all values are NaN",
    2: "too few values for the order",
    3: "a NaN between the first and the last value",
    4: "an infinite value",
    5: "the optimiser did not converge",
}
_TRENDS = {"n": (False, False), "c": (True, False), "t": (False, True), "ct": (True, True)}


def _order(value, n, name):
    if not (isinstance(value, (tuple, list)) and len(value) == n and all(isinstance(v, Integral) and v >= 0
                                                                         for v in value)):
        raise ValueError(f"ARIMA: {name} must be a tuple of {n} non-negative integers, got {value!r}")
    return tuple(int(v) for v in value)


def _check_steps(value, method, name="steps"):
    if isinstance(value, bool) or not (isinstance(value, Integral) and value >= 1):
        raise ValueError(f"ARIMA.{method}: {name} must be an integer >= 1, got {value!r}")
    return int(value)


def _batch_convolve(a, b):
    """Row-wise products of polynomials (ascending coefficients): a (n, la), b (n, lb)."""
    out = np.zeros((a.shape[0], a.shape[1] + b.shape[1] - 1))
    for j in range(b.shape[1]):
        out[:, j:j + a.shape[1]] += a * b[:, j:j + 1]
    return out


class ARIMA(TwinlearnEstimatorMixin, BaseEstimator):
    """Seasonal ARIMA fitted to many series at once (statsmodels' ARIMA).

    The model of one series is statsmodels' ``ARIMA(y, order, seasonal_order,
    trend)``: a regression on a polynomial time trend whose errors follow a
    SARIMA(p, d, q)(P, D, Q, s) process, fitted by maximum likelihood with
    stationarity and invertibility enforced (statsmodels' parameter
    transforms).

    Input layout: ``Y`` of shape (n_obs, n_series), one series per column
    (one series: ``y.reshape(-1, 1)``). Series of unequal lengths are NaN-padded:
    a series is its column's values from its first to its last non-NaN
    entry (NaN inside that range is an error), and its trend time counts
    from its first value.

    Numerics: a series' fit is a function of that series alone, computed
    with the project's spelled-out arithmetic and its own log: every numeric
    mode delivers ``identical`` (the same bits alone or in any batch, at any
    thread count, on the CPU or a GPU). See docs/NUMERICS.md.

    Parameters
    ----------
    order : tuple of int (p, d, q), default=(1, 0, 0)
    seasonal_order : tuple of int (P, D, Q, s), default=(0, 0, 0, 0)
    trend : {'n', 'c', 't', 'ct'} or None, default=None
        Trend regression: constant, linear time, both. None: 'c' without
        differencing, else 'n' (statsmodels' default). Trend terms the
        differencing removes raise a ValueError.
    errors : {'raise', 'nan'}, default='raise'
        What a series that cannot be fitted (all NaN, too short, inner NaN,
        infinite values) does: raise a ValueError naming its index, or get
        NaN results (``status_`` says why) while the rest of the batch fits.
    max_iter : int, default=500
        Minimiser iterations per stage (CSS, then exact likelihood).
    tol : float, default=1e-9
        Projected-gradient tolerance on -llf / n_eff.
    css_start : bool, default=True
        Start the exact-likelihood fit from the conditional-sum-of-squares
        fit (else from zero ARMA coefficients).
    device, numeric_mode
        See :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Attributes
    ----------
    params_ : ndarray of shape (n_series, n_params + 1)
        In statsmodels' order: trend, ar, ma, seasonal ar, seasonal ma,
        sigma2 (one row per series).
    param_names_ : list of str
    sigma2_, llf_, aic_, aicc_, bic_ : ndarray of shape (n_series,)
    nobs_ : ndarray of shape (n_series,)
        The series' lengths (non-padded values).
    nobs_effective_ : ndarray of shape (n_series,)
        Values in the likelihood: the length less d + s D.
    converged_ : ndarray of bool, shape (n_series,)
    status_ : ndarray of int, shape (n_series,)
        0 fitted; else a key of :data:`STATUS`.
    fittedvalues_, resid_ : ndarray of shape (n_obs, n_series)
        One-step-ahead predictions and their errors; NaN outside a series'
        values and at its first d + s D values (consumed by the differencing).
    n_iter_ : ndarray of shape (n_series,)
        Minimiser iterations (both stages).
    """

    _parameter_constraints = {
        "order": ["array-like"],
        "seasonal_order": ["array-like"],
        "trend": [StrOptions(set(_TRENDS)), None],
        "errors": [StrOptions({"raise", "nan"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "css_start": ["boolean"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, order=(1, 0, 0), seasonal_order=(0, 0, 0, 0), trend=None, *, errors="raise", max_iter=500,
                 tol=1e-9, css_start=True, device=None, numeric_mode=None):
        self.order = order
        self.seasonal_order = seasonal_order
        self.trend = trend
        self.errors = errors
        self.max_iter = max_iter
        self.tol = tol
        self.css_start = css_start
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.requires_fit = True
        return tags

    # -- the model ------------------------------------------------------------------
    def _tl_spec(self, mod):
        p, d, q = _order(self.order, 3, "order")
        P, D, Q, s = _order(self.seasonal_order, 4, "seasonal_order")
        trend = self.trend if self.trend is not None else ("c" if d + D == 0 else "n")
        tc, tt = _TRENDS[trend]
        spec = native.params(mod.ArimaSpec, p=p, d=d, q=q, P=P, D=D, Q=Q, s=s, trend_c=tc, trend_t=tt,
                             max_iter=int(self.max_iter), pgtol=float(self.tol), ftol=1e-13,
                             css_start=bool(self.css_start))
        mod.arima_check_spec(spec)
        names = (["const"] if tc else []) + (["x1"] if tt else [])
        names += [f"ar.L{i}" for i in range(1, p + 1)] + [f"ma.L{i}" for i in range(1, q + 1)]
        names += [f"ar.S.L{s * i}" for i in range(1, P + 1)] + [f"ma.S.L{s * i}" for i in range(1, Q + 1)]
        return spec, names + ["sigma2"]

    def _tl_series(self, Y, device, reset):
        Y = check_X(self, Y, device, reset=reset, for_fit=reset, allow_nan=True)
        # the core takes one series per row, contiguous in time
        return np.ascontiguousarray(np.asarray(to_host(Y), dtype=np.float64).T)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Y, y=None):
        """Fit every series of Y.

        Parameters
        ----------
        Y : array-like of shape (n_obs, n_series)
            One series per column, NaN-padded to a common length.
        y : Ignored

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(Y)
        mod, ctx = self._tl_context(device)
        spec, names = self._tl_spec(mod)
        Yt = self._tl_series(Y, device, reset=True)
        if Yt.shape[1] < 2:
            raise ValueError(f"ARIMA: n_samples={Yt.shape[1]}: a series needs at least 2 values (more for the order)")
        fit = mod.arima_fit(ctx, Yt, spec)
        params = np.asarray(fit.params)
        info = np.asarray(fit.info)
        status = np.asarray(fit.status).astype(np.int64)
        bad = np.flatnonzero((status != 0) & (status != 5))
        if bad.size and self.errors == "raise":
            i = int(bad[0])
            raise ValueError(f"ARIMA: series {i} cannot be fitted: {STATUS[int(status[i])]} (order {spec.p, spec.d, spec.q}"
                             f", seasonal_order {spec.P, spec.D, spec.Q, spec.s}); {bad.size} series in all; "
                             "errors='nan' fits the others")
        identity.record("ARIMA.params", params)
        filt = mod.arima_filter(ctx, Yt, spec, params, 0)
        resid = np.asarray(filt.resid)
        k = params.shape[1]
        n_eff = info[:, 1]
        self._tl_Y = Yt
        self.param_names_ = names
        self.params_ = params
        self.sigma2_ = params[:, -1].copy()
        self.llf_ = info[:, 0].copy()
        self.aic_ = -2.0 * self.llf_ + 2.0 * k
        with np.errstate(divide="ignore", invalid="ignore"):
            self.aicc_ = self.aic_ + 2.0 * k * (k + 1) / (n_eff - k - 1)
            self.bic_ = -2.0 * self.llf_ + k * np.log(n_eff)
        self.nobs_ = info[:, 3].astype(np.int64)
        self.nobs_effective_ = n_eff.astype(np.int64)
        self._tl_first = info[:, 2].astype(np.int64)
        self.status_ = status
        self.converged_ = status == 0
        self.n_iter_ = info[:, 4].astype(np.int64)
        self.resid_ = np.ascontiguousarray(resid.T)
        self.fittedvalues_ = np.ascontiguousarray((Yt - resid).T)
        nc = int(np.count_nonzero(status == 5))
        if nc:
            warnings.warn(f"ARIMA: the optimiser did not converge on {nc} of {status.size} series "
                          f"(first: {int(np.flatnonzero(status == 5)[0])}); see status_", ConvergenceWarning)
        self._tl_record_fit(device, "identical")
        return self

    def fit_predict(self, Y, y=None):
        """Fit every series of Y and return the in-sample one-step-ahead
        predictions (:attr:`fittedvalues_`).

        Parameters
        ----------
        Y : array-like of shape (n_obs, n_series)
        y : Ignored

        Returns
        -------
        fittedvalues : ndarray of shape (n_obs, n_series)
        """
        return self.fit(Y).fittedvalues_

    # -- after the fit ----------------------------------------------------------------
    def _tl_filter(self, h, params=None):
        device = self.device_used()
        mod, ctx = self._tl_context(device)
        spec, _ = self._tl_spec(mod)
        P = self.params_ if params is None else np.asarray(params, dtype=np.float64)
        if P.shape != self.params_.shape:
            raise ValueError(f"ARIMA: params must have shape {self.params_.shape}, got {P.shape}")
        return mod.arima_filter(ctx, self._tl_Y, spec, np.ascontiguousarray(P, dtype=np.float64), int(h))

    def loglike(self, params):
        """Log-likelihood of each training series at `params` (n_series x (n_params + 1))."""
        check_is_fitted(self)
        llf = np.asarray(self._tl_filter(0, params).llf)
        return llf

    def forecast(self, steps=1, alpha=None):
        """Forecasts of each series ``steps`` values past its last value.

        Parameters
        ----------
        steps : int, default=1
        alpha : float in (0, 1) or None, default=None
            With alpha, also the bounds of the (1 - alpha) prediction
            intervals (Gaussian, as statsmodels' conf_int).

        Returns
        -------
        mean : ndarray of shape (steps, n_series)
        lower, upper : same shape, only with alpha
        """
        check_is_fitted(self)
        if not (isinstance(steps, Integral) and steps >= 1):
            raise ValueError(f"ARIMA.forecast: steps must be an integer >= 1, got {steps!r}")
        f = self._tl_filter(steps)
        mean = np.ascontiguousarray(np.asarray(f.forecast_mean).T)
        if alpha is None:
            return mean
        if not 0 < alpha < 1:
            raise ValueError(f"ARIMA.forecast: alpha must lie in (0, 1), got {alpha!r}")
        from scipy.stats import norm

        half = norm.ppf(1 - alpha / 2) * np.sqrt(np.ascontiguousarray(np.asarray(f.forecast_var).T))
        return mean, mean - half, mean + half

    def psi_weights(self, steps):
        """The first `steps` weights psi_0 = 1, psi_1, ... of each series'
        fitted model written as an infinite moving average of its innovations
        (the differencing included): the h-step forecast error is
        ``sum_{j<h} psi_j e_{T+h-j}``, so its variance is
        ``sigma2 * sum_{j<h} psi_j**2``.

        Returns
        -------
        ndarray of shape (steps, n_series)
        """
        check_is_fitted(self)
        steps = _check_steps(steps, "psi_weights")
        p, d, q = _order(self.order, 3, "order")
        P, D, Q, s = _order(self.seasonal_order, 4, "seasonal_order")
        col = {name: i for i, name in enumerate(self.param_names_)}
        C = self.params_  # one row per series: the polynomials are built for the whole batch at once
        n = C.shape[0]

        def poly(names, sign, lag):
            # 1 + sign * c_1 B^lag + sign * c_2 B^(2 lag) + ..., ascending powers of B, one row per series
            out = np.zeros((n, len(names) * lag + 1))
            out[:, 0] = 1.0
            for i, name in enumerate(names, start=1):
                out[:, i * lag] = sign * C[:, col[name]]
            return out

        # AR side phi(B) Phi(B^s) (1 - B)^d (1 - B^s)^D, MA side theta(B) Theta(B^s)
        # (statsmodels' signs: 1 - phi B, 1 + theta B)
        ar = _batch_convolve(poly([f"ar.L{i}" for i in range(1, p + 1)], -1.0, 1),
                             poly([f"ar.S.L{s * i}" for i in range(1, P + 1)], -1.0, s))
        for lag in [1] * d + [s] * D:
            diff = np.zeros((n, lag + 1))
            diff[:, 0], diff[:, lag] = 1.0, -1.0
            ar = _batch_convolve(ar, diff)
        ma = _batch_convolve(poly([f"ma.L{i}" for i in range(1, q + 1)], 1.0, 1),
                             poly([f"ma.S.L{s * i}" for i in range(1, Q + 1)], 1.0, s))
        out = np.zeros((steps, n))
        for k in range(steps):
            acc = ma[:, k].copy() if k < ma.shape[1] else np.zeros(n)
            for i in range(1, min(k, ar.shape[1] - 1) + 1):
                acc -= ar[:, i] * out[k - i]
            out[k] = acc
        return out

    def simulate(self, steps, repetitions=1, random_state=None):
        """Simulated future paths of each fitted series from its end: the
        forecast plus Gaussian innovations N(0, ``sigma2_``) of the series,
        propagated through the model (:meth:`psi_weights`).

        Parameters
        ----------
        steps : int
            Values simulated past each series' last value.
        repetitions : int, default=1
            Paths per series.
        random_state : int, numpy.random.Generator or None, default=None

        Returns
        -------
        ndarray of shape (steps, n_series, repetitions)
            NaN for series that could not be fitted.
        """
        check_is_fitted(self)
        steps = _check_steps(steps, "simulate")
        repetitions = _check_steps(repetitions, "simulate", "repetitions")
        rng = np.random.default_rng(random_state)
        mean = self.forecast(steps)
        psi = self.psi_weights(steps)
        n = mean.shape[1]
        e = rng.standard_normal((steps, n, repetitions)) * np.sqrt(self.sigma2_)[None, :, None]
        paths = np.empty_like(e)
        for t in range(steps):
            # innovations e_{T+1..T+t+1}, newest first, weighted by psi_0..psi_t
            paths[t] = mean[t][:, None] + np.einsum("kj,kjr->jr", psi[t::-1], e[: t + 1])
        return paths

    def forecast_variance(self, steps=1):
        """Variances of :meth:`forecast`'s means, same shape."""
        check_is_fitted(self)
        return np.ascontiguousarray(np.asarray(self._tl_filter(steps).forecast_var).T)

    def predict_range(self, start=0, end=None):
        """In-sample one-step-ahead predictions, then forecasts (statsmodels' predict(start, end)).

        Rows ``start..end`` (inclusive) of the training time axis: a series'
        fitted value where it has values, its forecast ``t - last`` steps
        ahead past its last value ``last``, NaN before its first value.

        Returns
        -------
        ndarray of shape (end - start + 1, n_series)
        """
        check_is_fitted(self)
        n_obs = self._tl_Y.shape[1]
        end = n_obs - 1 if end is None else end
        if not (isinstance(start, Integral) and isinstance(end, Integral) and 0 <= start <= end):
            raise ValueError(f"ARIMA.predict_range: need integers 0 <= start <= end, got start={start!r}, end={end!r}")
        fitted = self.fittedvalues_.T
        first = self._tl_first
        last = first + self.nobs_ - 1
        out = np.full((end - start + 1, fitted.shape[0]), np.nan)
        h = int(end - last.min()) if end > last.min() else 0
        fm = np.asarray(self._tl_filter(h).forecast_mean) if h > 0 else None
        for j, t in enumerate(range(start, end + 1)):
            inside = (t >= first) & (t <= last) & (t < n_obs)
            if t < n_obs:
                out[j, inside] = fitted[inside, t]
            ahead = t > last
            if ahead.any():
                out[j, ahead] = fm[ahead, (t - last[ahead] - 1)]
        return out
