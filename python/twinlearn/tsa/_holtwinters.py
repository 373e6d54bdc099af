"""Holt-Winters exponential smoothing of one series or a batch of series,
with statsmodels.tsa.holtwinters.ExponentialSmoothing's parameters and
results."""

from __future__ import annotations

import numpy as np

from ._base import as_batch, check_errors, check_int, context, per_series, report_failures

_COMPONENT = {None: 0, "add": 1, "mul": 2}
_ALIASES = {"additive": "add", "multiplicative": "mul"}
_INIT = {"estimated": 0, "heuristic": 1, "known": 2}
_MAX_SEASONAL = 64
_MAX_FREE = 32

_STATUS = {
    1: "all values are NaN",
    2: "too few points for the model and its initialization_method",
    3: "non-positive values with a multiplicative trend or seasonal component",
    4: "NaN inside the series (NaN may only pad its start and its end)",
    5: "the fitted sum of squared errors is not finite",
}


def _check_boxcox(value):
    if value is None or value is False:
        return False
    if value is True or value == "log":
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
        return float(value)
    raise ValueError(f"use_boxcox must be False, True, 'log' or a float, got {value!r}")


def _component(value, name):
    if value is None or value is False:
        return None
    if isinstance(value, str):
        v = _ALIASES.get(value.lower(), value.lower())
        if v in ("add", "mul"):
            return v
    raise ValueError(f"{name} must be None, 'add' or 'mul' ('additive', 'multiplicative'), got {value!r}")


class ExponentialSmoothing:
    """Holt-Winters exponential smoothing of one series or of a batch.

    The model and its fit follow ``statsmodels.tsa.holtwinters.ExponentialSmoothing``
    (``fit(method='L-BFGS-B', use_brute=True)``): the same parameters, bounds,
    starting values, initialisation and sum-of-squared-errors objective. Each
    series is fitted on its own, by one compiled routine shared by the CPU and
    the CUDA backends, so a series' results are the same bits whether it is
    fitted alone or in a batch, at any thread count, on either device.

    Parameters
    ----------
    endog : array_like, shape (n_obs,) or (n_obs, n_series)
        One series, or a batch with **time along axis 0 and one series per
        column** (the layout of a pandas DataFrame of series). Series of
        unequal lengths are NaN-padded before their first and after their last
        value; a NaN inside a series is an error for that series.
    trend : {None, 'add', 'mul'}
    damped_trend : bool
    seasonal : {None, 'add', 'mul'}
    seasonal_periods : int
        At least 2 (at most 64; at most 26 with ``initialization_method='estimated'``,
        whose initial seasonals are optimised with the other parameters).
    initialization_method : {'estimated', 'heuristic', 'known'}
        As statsmodels: 'estimated' optimises the initial states (starting
        from the simple or the heuristic values), 'heuristic' fixes them by
        Hyndman et al.'s rule, 'known' takes ``initial_level``, ``initial_trend``
        and ``initial_seasonal`` (scalars / a (m,) vector for every series, or
        one value / row per series).
    initial_level, initial_trend, initial_seasonal : float or array_like, optional
        Required with 'known', refused otherwise.
    use_boxcox : {False, True, 'log', float}
        Fit the model to the Box-Cox transform of each series (statsmodels):
        True estimates each series' lambda by maximum likelihood
        (``scipy.stats.boxcox``), 'log' is lambda 0, a float is that lambda
        for every series. Fitted values, forecasts, intervals, simulations,
        the SSE and the criteria are on the original scale. Non-positive data
        is an error for that series.
    bounds : None
        Custom parameter bounds are not supported: any other value raises.
    errors : {'raise', 'nan'}
        What a series that cannot be fitted does (too few points, non-positive
        data with a multiplicative component, all NaN, NaN inside): 'raise'
        raises a ValueError naming the series; 'nan' leaves NaN in its results
        (``status`` says why) and fits the rest of the batch.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}
        Every mode delivers 'identical' (see docs/NUMERICS.md).
    """

    def __init__(self, endog, trend=None, damped_trend=False, seasonal=None, *, seasonal_periods=None,
                 initialization_method="estimated", initial_level=None, initial_trend=None,
                 initial_seasonal=None, use_boxcox=False, bounds=None, dates=None, freq=None, missing="none",
                 errors="raise", device=None, numeric_mode=None):
        self.endog, self._was_1d = as_batch(endog)
        self.trend = _component(trend, "trend")
        self.seasonal = _component(seasonal, "seasonal")
        self.damped_trend = bool(damped_trend)
        if self.damped_trend and self.trend is None:
            raise ValueError("Can only dampen the trend component")
        self.has_trend = self.trend is not None
        self.has_seasonal = self.seasonal is not None
        if self.has_seasonal:
            if seasonal_periods is None:
                raise ValueError("seasonal_periods must be given with a seasonal component")
            m = check_int(seasonal_periods, "seasonal_periods")
            if m <= 1:
                raise ValueError("seasonal_periods must be larger than 1.")
            if m > _MAX_SEASONAL:
                raise ValueError(f"seasonal_periods must be at most {_MAX_SEASONAL}, got {m}")
            self.seasonal_periods = m
        else:
            self.seasonal_periods = 0
        if initialization_method not in _INIT:
            raise ValueError("initialization_method must be 'estimated', 'heuristic' or 'known', "
                             f"got {initialization_method!r} ('legacy-heuristic' is not supported)")
        self.initialization_method = initialization_method
        m = self.seasonal_periods
        if initialization_method == "estimated" and 6 + m > _MAX_FREE:
            raise ValueError(f"initialization_method='estimated' supports seasonal_periods up to {_MAX_FREE - 6} "
                             f"(got {m}); use 'heuristic' or 'known'")
        self.use_boxcox = _check_boxcox(use_boxcox)
        if bounds is not None:
            raise ValueError("bounds is not supported: the bounds are statsmodels' defaults")
        if dates is not None or freq is not None:
            raise ValueError("dates and freq are not supported: pass plain arrays")
        if missing != "none":
            raise ValueError(f"missing={missing!r} is not supported: NaN pads unequal lengths")
        self.errors = check_errors(errors)
        self._boxcox_status = None
        self.lamda = None
        if self.use_boxcox is not False:
            self._transform()
        self.device = device
        self.numeric_mode = numeric_mode
        n = self.endog.shape[1]
        self._known = None
        given = {"initial_level": initial_level, "initial_trend": initial_trend, "initial_seasonal": initial_seasonal}
        if initialization_method == "known":
            if initial_level is None:
                raise ValueError("initialization is 'known' but initial_level not given")
            if self.has_trend and initial_trend is None:
                raise ValueError("initialization is 'known' but initial_trend not given")
            if not self.has_trend and initial_trend is not None:
                raise ValueError("initial_trend set but model has no trend component")
            if self.has_seasonal and initial_seasonal is None:
                raise ValueError("initialization is 'known' but initial_seasonal not given")
            if not self.has_seasonal and initial_seasonal is not None:
                raise ValueError("initial_seasonal set but model has no seasonal component")
            known = np.zeros((n, 2 + m))
            known[:, 0:1] = per_series(initial_level, n, 1, "initial_level")
            if self.has_trend:
                known[:, 1:2] = per_series(initial_trend, n, 1, "initial_trend")
            if self.has_seasonal:
                known[:, 2:] = per_series(initial_seasonal, n, m, "initial_seasonal")
            if not np.isfinite(known).all():
                raise ValueError("the known initial values must be finite")
            self._known = np.ascontiguousarray(known)
        else:
            for k, v in given.items():
                if v is not None:
                    raise ValueError(f"initialization method is {initialization_method} but {k} has been set.")

    def _transform(self):
        """Box-Cox transform each series in place of the data the core fits
        (self._y); a series with a non-positive value gets status 3."""
        from scipy.stats import boxcox

        Y = self.endog
        Yt = np.full_like(Y, np.nan)
        n = Y.shape[1]
        lam = np.full(n, np.nan)
        status = np.zeros(n, dtype=np.int32)
        for j in range(n):
            col = Y[:, j]
            ok = ~np.isnan(col)
            if not ok.any():
                continue
            v = col[ok]
            if (v <= 0).any():
                status[j] = 3
                continue
            if self.use_boxcox is True:
                if np.ptp(v) == 0:
                    status[j] = 2
                    continue
                t, lam[j] = boxcox(v)
            else:
                lam[j] = 0.0 if self.use_boxcox == "log" else float(self.use_boxcox)
                t = boxcox(v, lam[j])
            Yt[ok, j] = t
        self._y = np.ascontiguousarray(Yt)
        self.lamda = lam
        self._boxcox_status = status

    @property
    def nobs(self):
        """Points of each series (its length without the NaN padding)."""
        Y = self.endog
        finite = ~np.isnan(Y)
        first = np.argmax(finite, axis=0)
        last = Y.shape[0] - 1 - np.argmax(finite[::-1], axis=0)
        return np.where(finite.any(axis=0), last - first + 1, 0)

    def fit(self, smoothing_level=None, smoothing_trend=None, smoothing_seasonal=None, damping_trend=None, *,
            optimized=True, remove_bias=False, start_params=None, method=None, minimize_kwargs=None,
            use_brute=True, use_boxcox=None, max_iter=1000, tol=1e-12):
        """Fit every series.

        Parameters
        ----------
        smoothing_level, smoothing_trend, smoothing_seasonal, damping_trend : float, optional
            Fix the parameter for every series (else it is estimated).
        optimized : True
            Only True is supported.
        remove_bias : bool
            As statsmodels: add the mean residual to the fitted values and
            the forecasts.
        start_params, minimize_kwargs : None
            Not supported.
        method : {None, 'L-BFGS-B'}
            The bounded quasi-Newton minimiser (projected BFGS with an active
            set, exact gradient) stands in for L-BFGS-B.
        use_brute : bool
            Start the smoothing parameters from the best point of statsmodels'
            grid (default True, as statsmodels).
        max_iter : int
            Optimiser iterations per series.
        tol : float
            Relative decrease of the SSE below which the optimiser stops.

        Returns
        -------
        HoltWintersResults
        """
        if optimized is not True:
            raise ValueError("optimized=False is not supported")
        if start_params is not None or minimize_kwargs is not None:
            raise ValueError("start_params and minimize_kwargs are not supported")
        if method not in (None, "L-BFGS-B"):
            raise ValueError(f"method={method!r} is not supported (only None or 'L-BFGS-B')")
        if use_boxcox is not None and _check_boxcox(use_boxcox) != self.use_boxcox:
            raise ValueError("use_boxcox is set on the model (ExponentialSmoothing(use_boxcox=...)), "
                             "not changed by fit")
        max_iter = check_int(max_iter, "max_iter", 0)
        if not (isinstance(tol, (int, float)) and np.isfinite(tol) and tol >= 0):
            raise ValueError(f"tol must be a non-negative number, got {tol!r}")
        fixed = {}
        for name, v, lo, hi in (("smoothing_level", smoothing_level, 0.0, 1.0),
                                ("smoothing_trend", smoothing_trend, 0.0, 1.0),
                                ("smoothing_seasonal", smoothing_seasonal, 0.0, 1.0),
                                ("damping_trend", damping_trend, 0.0, 1.0)):
            if v is None:
                fixed[name] = np.nan
                continue
            v = float(v)
            if not (lo <= v <= hi):
                raise ValueError(f"{name} must be in [{lo}, {hi}], got {v}")
            fixed[name] = v
        if not self.has_trend and not np.isnan(fixed["smoothing_trend"]):
            raise ValueError("smoothing_trend given but the model has no trend")
        if not self.has_seasonal and not np.isnan(fixed["smoothing_seasonal"]):
            raise ValueError("smoothing_seasonal given but the model has no seasonal component")
        if not self.damped_trend and not np.isnan(fixed["damping_trend"]):
            raise ValueError("damping_trend given but the trend is not damped")
        mod, ctx, dev, mode = context(self.device, self.numeric_mode)
        spec = mod.HoltWintersSpec()
        spec.trend = _COMPONENT[self.trend]
        spec.seasonal = _COMPONENT[self.seasonal]
        spec.damped = int(self.damped_trend)
        spec.m = self.seasonal_periods
        spec.init = _INIT[self.initialization_method]
        spec.alpha = fixed["smoothing_level"]
        spec.beta = fixed["smoothing_trend"]
        spec.gamma = fixed["smoothing_seasonal"]
        spec.phi = fixed["damping_trend"]
        spec.use_brute = int(bool(use_brute))
        spec.max_iter = max_iter
        spec.ftol = float(tol)
        spec.pgtol = 1e-10
        r = mod.holt_winters_fit(ctx, self.endog if self.use_boxcox is False else self._y, spec, self._known)
        status = np.asarray(r.status)
        if self._boxcox_status is not None:
            status = np.where(self._boxcox_status != 0, self._boxcox_status, status).astype(np.int32)
        report_failures(status, _STATUS, self.errors)
        return HoltWintersResults(self, r, status, bool(remove_bias), dev, mode)


class HoltWintersResults:
    """Results of :meth:`ExponentialSmoothing.fit`, one entry per series.

    Attributes
    ----------
    params : dict
        'smoothing_level', 'smoothing_trend', 'smoothing_seasonal',
        'damping_trend', 'initial_level', 'initial_trend': arrays (n_series,)
        (a float for a 1-D input); 'initial_seasons': (n_series, m). NaN where
        the model has no such component.
    sse, aic, aicc, bic : ndarray (n_series,)
        statsmodels' definitions: k = m [seasonal] + 2 [trend] + 2 + 1 [damped],
        aic = n log(sse / n) + 2 k, bic = n log(sse / n) + k log(n),
        aicc = aic + 2 (k + 2)(k + 3) / (n - k - 3) (inf when n - k - 3 <= 0).
    sigma2 : ndarray (n_series,)
        sse / n, the maximum-likelihood variance of Gaussian additive errors.
    llf : ndarray (n_series,)
        The Gaussian log-likelihood at sigma2: -n/2 (log(2 pi sigma2) + 1).
    fittedvalues, resid : ndarray, the shape of endog
        One-step-ahead fitted values and endog - fittedvalues (NaN in the padding).
    nobs, status, converged, iterations : ndarray (n_series,)
        status 0 is fitted; otherwise the series' results are NaN.
    """

    def __init__(self, model, raw, status, remove_bias, device, mode):
        self.model = model
        m = model.seasonal_periods
        self._m = m
        self._remove_bias = remove_bias
        self._lam = None if model.use_boxcox is False else model.lamda
        self.device_used = device
        self.numeric_mode_used = mode
        P = np.asarray(raw.params)
        self._P = P
        self._state = np.asarray(raw.state)
        self.status = np.asarray(status)
        self.converged = np.asarray(raw.converged).astype(bool) & (self.status == 0)
        self.iterations = np.asarray(raw.iterations)
        self.nobs = np.asarray(raw.nobs)
        self._start = np.asarray(raw.start)
        self.sse = np.asarray(raw.sse)
        with np.errstate(divide="ignore", invalid="ignore"):
            self._sigma2_model = self.sse / self.nobs  # the fitted scale's (Box-Cox's) error variance
        if model.use_boxcox is not False:  # statsmodels: the SSE of the back-transformed fit
            with np.errstate(invalid="ignore"):
                err = self._inv(np.asarray(raw.fitted)) - model.endog
                self.sse = np.where(self.status == 0, np.nansum(err * err, axis=0), np.nan)
        n = self.nobs.astype(np.float64)
        k = m * model.has_seasonal + 2 * model.has_trend + 2 + 1 * model.damped_trend
        self.k = k
        with np.errstate(divide="ignore", invalid="ignore"):
            lsse = n * np.log(self.sse / n)
            self.aic = lsse + 2 * k
            dof = n - k - 3
            self.aicc = self.aic + np.where(dof > 0, 2 * (k + 2) * (k + 3) / np.where(dof > 0, dof, 1), np.inf)
            self.bic = lsse + k * np.log(n)
            self.sigma2 = self.sse / n
            self.llf = -0.5 * n * (np.log(2 * np.pi * self.sigma2) + 1.0)
        fitted = self._inv(np.asarray(raw.fitted))
        resid = model.endog - fitted
        if remove_bias:
            with np.errstate(invalid="ignore"):
                self._bias = np.nanmean(resid, axis=0) if resid.shape[0] else np.zeros(resid.shape[1])
            fitted = fitted + self._bias
            resid = model.endog - fitted
        else:
            self._bias = np.zeros(fitted.shape[1])
        self._fitted = fitted
        self._resid = resid
        names = ("smoothing_level", "smoothing_trend", "smoothing_seasonal", "initial_level", "initial_trend",
                 "damping_trend")
        self.params = {name: self._squeeze(P[:, i]) for i, name in enumerate(names)}
        self.params["initial_seasons"] = P[0, 6:] if model._was_1d else P[:, 6:]
        self.params["use_boxcox"] = model.use_boxcox
        self.params["lamda"] = None if self._lam is None else self._squeeze(self._lam)
        self.params["remove_bias"] = remove_bias
        for attr in ("sse", "aic", "aicc", "bic", "sigma2", "llf", "nobs", "status", "converged", "iterations"):
            setattr(self, attr, self._squeeze(getattr(self, attr)))

    def _inv(self, a):
        """Back from the Box-Cox scale; a's axis 1 is the series."""
        if self._lam is None:
            return a
        from scipy.special import inv_boxcox

        lam = self._lam.reshape((1, -1) + (1,) * (a.ndim - 2))
        return inv_boxcox(a, lam)

    def _out(self, a):
        """Transformed-scale values (series on axis 1) as reported."""
        b = self._inv(a)
        return b + self._bias.reshape((1, -1) + (1,) * (b.ndim - 2))

    def _squeeze(self, a):
        return a[0] if self.model._was_1d else a

    def _shape(self, a):
        """(h, n_series) -> (h,) for a 1-D input."""
        return a[:, 0] if self.model._was_1d else a

    @property
    def fittedvalues(self):
        return self._shape(self._fitted)

    @property
    def resid(self):
        return self._shape(self._resid)

    def _phi(self):
        return self._P[:, 5] if self.model.damped_trend else np.ones(self._P.shape[0])

    def _forecast(self, steps):
        """(steps, n_series) forecasts after each series' last point."""
        mdl = self.model
        h = np.arange(1, steps + 1, dtype=np.float64)[:, None]
        lvl, b = self._state[:, 0], self._state[:, 1]
        phi = self._phi()
        if mdl.damped_trend:
            phi_h = np.cumsum(phi[None, :] ** h, axis=0)
        else:
            phi_h = np.broadcast_to(h, (steps, lvl.shape[0]))
        if mdl.trend == "add":
            tr = lvl + phi_h * b
        elif mdl.trend == "mul":
            tr = lvl * b ** phi_h
        else:
            tr = np.broadcast_to(lvl, (steps, lvl.shape[0]))
        if mdl.has_seasonal:
            S = self._state[:, 2:]
            s = S[:, (np.arange(1, steps + 1) % self._m)].T
            out = tr + s if mdl.seasonal == "add" else tr * s
        else:
            out = np.array(tr, dtype=np.float64)
        return out

    def forecast(self, steps=1):
        """Forecasts of the next `steps` points after each series' last value:
        (steps,) for one series, (steps, n_series) for a batch."""
        steps = check_int(steps, "steps", 1)
        return self._shape(self._out(self._forecast(steps)))

    def predict(self, start=None, end=None):
        """In-sample fitted values and forecasts at positions start..end
        (inclusive) of the time axis of endog; positions past the last row
        are forecasts (every series then ends at the last row: a padded
        series' forecasts follow its own last point, see forecast)."""
        rows = self.model.endog.shape[0]
        start = 0 if start is None else check_int(start, "start", 0)
        end = rows - 1 if end is None else check_int(end, "end", 0)
        if end < start:
            raise ValueError(f"end ({end}) must not be before start ({start})")
        parts = []
        if start < rows:
            parts.append(self._fitted[start:min(end, rows - 1) + 1])
        if end >= rows:
            fc = self._out(self._forecast(end - rows + 1))
            parts.append(fc[max(start - rows, 0):])
        return self._shape(np.concatenate(parts, axis=0))

    def _c_coefficients(self, steps):
        """c_j, j = 1..steps - 1, of the additive models' h-step variance
        sigma2 (1 + sum c_j^2) (Hyndman et al., class 1)."""
        mdl = self.model
        P = self._P
        alpha = P[:, 0]
        j = np.arange(1, steps, dtype=np.float64)[:, None]
        c = np.broadcast_to(alpha, (steps - 1, alpha.shape[0])).copy()
        if mdl.has_trend:
            phi = self._phi()
            phi_j = np.cumsum(phi[None, :] ** j, axis=0) if mdl.damped_trend else j
            c = c + alpha * P[:, 1] * phi_j
        if mdl.has_seasonal:
            c = c + P[:, 2] * ((j.astype(int) % self._m) == 0)
        return c

    def forecast_interval(self, steps=1, alpha=0.05, repetitions=2000, random_state=0):
        """(forecast, lower, upper) at coverage 1 - alpha.

        Additive models (no multiplicative component): the exact Gaussian
        intervals of the additive-error state-space model,
        sigma2 (1 + sum_{j<h} c_j^2). Otherwise: the alpha/2 and 1 - alpha/2
        quantiles of `repetitions` simulated paths (:meth:`simulate`)."""
        from scipy.stats import norm

        steps = check_int(steps, "steps", 1)
        if not (0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        fc = self._forecast(steps)
        mdl = self.model
        if mdl.trend != "mul" and mdl.seasonal != "mul":
            c = self._c_coefficients(steps)
            cum = np.concatenate([np.zeros((1, fc.shape[1])), np.cumsum(c * c, axis=0)], axis=0)
            sd = np.sqrt(self._P_sigma2() * (1.0 + cum))
            q = norm.ppf(1 - alpha / 2)
            lo, hi = fc - q * sd, fc + q * sd
        else:
            sims = self._simulate(steps, repetitions, random_state)
            lo = np.quantile(sims, alpha / 2, axis=2)
            hi = np.quantile(sims, 1 - alpha / 2, axis=2)
        return self._shape(self._out(fc)), self._shape(self._out(lo)), self._shape(self._out(hi))

    def _P_sigma2(self):
        return self._sigma2_model

    def _simulate(self, steps, repetitions, random_state):
        mdl = self.model
        rng = np.random.default_rng(random_state)
        ns = self._P.shape[0]
        sd = np.sqrt(self._P_sigma2())[:, None]
        alpha, beta, gamma = self._P[:, 0:1], self._P[:, 1:2], self._P[:, 2:3]
        phi = self._phi()[:, None]
        lvl = np.repeat(self._state[:, 0:1], repetitions, axis=1)
        b = np.repeat(self._state[:, 1:2], repetitions, axis=1)
        m = self._m
        ring = np.repeat(self._state[:, 2:, None], repetitions, axis=2) if m else None
        out = np.empty((steps, ns, repetitions))
        for t in range(steps):
            if mdl.trend == "add":
                db = phi * b
                tb = lvl + db
            elif mdl.trend == "mul":
                db = b ** phi
                tb = lvl * db
            else:
                db, tb = b, lvl
            slot = (t + 1) % m if m else 0
            s = ring[:, slot, :] if m else 0.0
            yhat = tb + s if mdl.seasonal == "add" else (tb * s if mdl.seasonal == "mul" else tb)
            y = yhat + sd * rng.standard_normal((ns, repetitions))
            out[t] = y
            if mdl.seasonal == "add":
                ln = alpha * y - alpha * s + (1 - alpha) * tb
            elif mdl.seasonal == "mul":
                ln = alpha * y / s + (1 - alpha) * tb
            else:
                ln = alpha * y + (1 - alpha) * tb
            if mdl.trend == "add":
                b = beta * (ln - lvl) + (1 - beta) * db
            elif mdl.trend == "mul":
                b = beta * (ln / lvl) + (1 - beta) * db
            if m:
                ring[:, slot, :] = (gamma * y - gamma * tb + (1 - gamma) * s if mdl.seasonal == "add"
                                    else gamma * y / tb + (1 - gamma) * s)
            lvl = ln
        return out

    def simulate(self, nsimulations, repetitions=1, error="add", random_state=None):
        """Simulated future paths of the additive-error state-space form of
        each fitted model, from its end: (nsimulations, repetitions) for one
        series, (nsimulations, n_series, repetitions) for a batch. The errors
        are N(0, sigma2) of the series."""
        nsimulations = check_int(nsimulations, "nsimulations", 1)
        repetitions = check_int(repetitions, "repetitions", 1)
        if error not in ("add", "additive"):
            raise ValueError(f"error={error!r} is not supported (only 'add')")
        sims = self._out(self._simulate(nsimulations, repetitions, random_state))
        return sims[:, 0, :] if self.model._was_1d else sims
