"""ARIMA against statsmodels' ARIMA, and the rule that a series' fit is a
function of that series alone (the same bits alone, in any batch, at any
thread count, on the CPU or a GPU)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from twinlearn import config_context
from twinlearn.testing import assert_same_bits, assert_separates
from twinlearn.tsa import ARIMA

sm_arima = pytest.importorskip("statsmodels.tsa.arima.model")


def simulate(n, ar=(), ma=(), d=0, sar=(), sma=(), s=0, D=0, seed=0, burn=200, const=0.0):
    """A SARIMA series by the plain recursion (burn-in from zeros)."""
    rng = np.random.default_rng(seed)
    a = np.zeros(1 + len(ar) + s * len(sar))
    a[0] = 1.0
    ar_poly = np.r_[1.0, -np.asarray(ar, float)]
    sar_poly = np.zeros(1 + s * len(sar))
    sar_poly[0] = 1.0
    for j, c in enumerate(sar):
        sar_poly[s * (j + 1)] = -c
    a = np.convolve(ar_poly, sar_poly)
    ma_poly = np.r_[1.0, np.asarray(ma, float)]
    sma_poly = np.zeros(1 + s * len(sma))
    sma_poly[0] = 1.0
    for j, c in enumerate(sma):
        sma_poly[s * (j + 1)] = c
    b = np.convolve(ma_poly, sma_poly)
    m = n + burn
    e = rng.standard_normal(m)
    w = np.zeros(m)
    for t in range(m):
        v = const + e[t]
        for k in range(1, len(a)):
            if t - k >= 0:
                v -= a[k] * w[t - k]
        for k in range(1, len(b)):
            if t - k >= 0:
                v += b[k] * e[t - k]
        w[t] = v
    y = w[burn:]
    for _ in range(D):
        y = np.r_[np.zeros(s), y]
        for t in range(s, len(y)):
            y[t] += y[t - s]
        y = y[s:]
    for _ in range(d):
        y = np.cumsum(y)
    return y


def sm_model(y, order, seasonal_order=(0, 0, 0, 0), trend=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sm_arima.ARIMA(y, order=order, seasonal_order=seasonal_order, trend=trend)


def sm_fit(y, order, seasonal_order=(0, 0, 0, 0), trend=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sm_model(y, order, seasonal_order, trend).fit()


class One:
    """The results of a one-series fit, per-series arrays unwrapped."""

    def __init__(self, model):
        self.model = model

    def __getattr__(self, name):
        v = getattr(self.model, name)
        if callable(v):
            return lambda *a, **k: _unwrap(v(*a, **k))
        return _unwrap(v) if name != "param_names_" else v


def _unwrap(v):
    if isinstance(v, tuple):
        return tuple(_unwrap(x) for x in v)
    v = np.asarray(v)
    return v[0] if v.ndim == 1 or (v.ndim == 2 and v.shape[0] == 1 and v.shape[1] > 1) else (
        v[:, 0] if v.ndim == 2 else v)


# (order, seasonal_order, trend, simulate kwargs)
CASES = [
    ((1, 0, 0), (0, 0, 0, 0), "c", dict(ar=(0.6,), const=1.0)),
    ((1, 1, 1), (0, 0, 0, 0), "n", dict(ar=(0.5,), ma=(0.3,), d=1)),
    ((1, 1, 1), (0, 0, 0, 0), "t", dict(ar=(0.5,), ma=(0.3,), d=1, const=0.2)),
    ((2, 0, 1), (0, 0, 0, 0), "ct", dict(ar=(0.5, -0.3), ma=(0.4,), const=0.5)),
    ((0, 1, 2), (0, 0, 0, 0), "n", dict(ma=(0.4, -0.3), d=1)),
    ((1, 0, 1), (1, 1, 0, 4), "n", dict(ar=(0.5,), ma=(0.2,), sar=(0.4,), s=4, D=1)),
    ((1, 1, 0), (0, 1, 1, 12), "n", dict(ar=(0.4,), sma=(-0.5,), s=12, D=1, d=1)),
]
IDS = [f"{o}{so}{t}" for o, so, t, _ in CASES]


@pytest.mark.parametrize("order, sorder, trend, kw", CASES, ids=IDS)
def test_loglike_matches_statsmodels_at_given_params(order, sorder, trend, kw):
    y = simulate(300, seed=3, **kw)
    m = sm_model(y, order, sorder, trend)
    ours = ARIMA(order, sorder, trend).fit(y[:, None])
    rng = np.random.default_rng(0)
    for _ in range(3):  # near the optimum, and elsewhere
        p = ours.params_ * (1 + 0.1 * rng.standard_normal(ours.params_.shape))
        p[:, -1] = abs(p[:, -1])
        assert ours.loglike(p)[0] == pytest.approx(m.loglike(p[0]), rel=1e-8)


@pytest.mark.parametrize("order, sorder, trend, kw", CASES, ids=IDS)
def test_fit_matches_statsmodels(order, sorder, trend, kw):
    y = simulate(400, seed=5, **kw)
    ref = sm_fit(y, order, sorder, trend)
    ours = One(ARIMA(order, sorder, trend).fit(y[:, None]))
    assert ours.status_ == 0
    assert ours.param_names_ == list(ref.param_names)
    tol = 1e-6 * abs(ref.llf)
    # ours at least as high as statsmodels' own fit; where both reach the
    # same optimum, the same parameters
    assert ours.llf_ >= ref.llf - tol
    if abs(ours.llf_ - ref.llf) <= tol:
        np.testing.assert_allclose(ours.params_, ref.params, rtol=2e-3, atol=2e-3)
    # statsmodels started from our parameters finds nothing higher and stays
    # there (its stop is about 1e-4 from the optimum: its gradient is a finite
    # difference too)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        polished = sm_model(y, order, sorder, trend).fit(start_params=ours.params_)
    assert polished.llf <= ours.llf_ + tol
    assert ours.llf_ == pytest.approx(polished.llf, rel=1e-6)
    np.testing.assert_allclose(ours.params_, polished.params, rtol=2e-3, atol=2e-3)
    k = len(ref.params)
    assert ours.aic_ == pytest.approx(-2 * ours.llf_ + 2 * k, rel=1e-12)
    assert ours.aic_ == pytest.approx(polished.aic, rel=1e-6)
    assert ours.bic_ == pytest.approx(polished.bic, rel=1e-6)
    assert ours.aicc_ == pytest.approx(polished.aicc, rel=1e-6)
    assert ours.nobs_effective_ == polished.nobs_effective


@pytest.mark.parametrize("order, sorder, trend, kw", CASES, ids=IDS)
def test_forecasts_and_residuals_match_statsmodels(order, sorder, trend, kw):
    y = simulate(300, seed=7, **kw)
    ours = One(ARIMA(order, sorder, trend).fit(y[:, None]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm_model(y, order, sorder, trend).smooth(ours.params_)
    fc = res.get_forecast(10)
    mean, lo, hi = ours.forecast(10, alpha=0.1)
    np.testing.assert_allclose(mean, fc.predicted_mean, rtol=1e-6, atol=1e-8 * np.abs(y).max())
    np.testing.assert_allclose(ours.forecast_variance(10), fc.var_pred_mean, rtol=1e-5)
    ci = fc.conf_int(alpha=0.1)
    np.testing.assert_allclose(lo, ci[:, 0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hi, ci[:, 1], rtol=1e-6, atol=1e-6)
    nd = order[1] + sorder[1] * sorder[3]
    np.testing.assert_allclose(ours.resid_[nd:], res.resid[nd:], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours.fittedvalues_[nd:], res.fittedvalues[nd:], rtol=1e-6, atol=1e-5)
    assert np.isnan(ours.resid_[:nd]).all()


def test_forecasts_within_1e3_of_statsmodels_own_fit():
    y = simulate(500, ar=(0.5,), ma=(0.3,), d=1, seed=11)
    ref = sm_fit(y, (1, 1, 1))
    ours = ARIMA((1, 1, 1)).fit(y[:, None])
    np.testing.assert_allclose(ours.forecast(20)[:, 0], ref.forecast(20), rtol=1e-3)


def _batch(n_series, n=200, seed=0):
    cols = [simulate(n, ar=(0.3 + 0.4 * ((seed + j) % 5) / 5,), ma=(0.2,), d=1, seed=seed + j)
            for j in range(n_series)]
    return np.column_stack(cols)


def _fit_bits(model):
    return (model.params_, model.llf_, model.resid_)


def test_a_series_fit_does_not_depend_on_its_batch():
    Y = _batch(60, seed=100)
    alone = One(ARIMA((1, 1, 1)).fit(Y[:, 7:8]))
    for cols in (range(10), range(60)):
        Yb = Y[:, list(cols)]
        batch = ARIMA((1, 1, 1)).fit(Yb)
        assert_same_bits(batch.params_[7], alone.params_, "params")
        assert_same_bits(batch.llf_[7:8], np.atleast_1d(alone.llf_), "llf")
        assert_same_bits(batch.resid_[:, 7], alone.resid_, "resid")
        assert_same_bits(batch.forecast(5)[:, 7], alone.forecast(5), "forecast")


def test_batch_independence_check_separates():
    """The batch check above fails for a fit that couples series through
    their batch (here: scaling by the batch's overall spread first, as a
    batched solver normalising its inputs would)."""
    Y = _batch(10, seed=200)

    def coupled(Yb):
        scale = np.nanstd(Yb)
        m = ARIMA((1, 1, 1)).fit(Yb / scale)
        p = np.atleast_2d(m.params_).copy()
        p[:, -1] *= scale**2
        return p

    def own(Yb):
        return np.atleast_2d(ARIMA((1, 1, 1)).fit(Yb).params_)

    def check(fit):
        assert_same_bits(fit(Y)[3], fit(Y[:, 3:4])[0])

    assert_separates(check, right=own, wrong=coupled, what="batch independence")


def test_same_bits_at_any_thread_count():
    Y = _batch(12, seed=300)
    with config_context(n_threads=1):
        one = ARIMA((1, 1, 1)).fit(Y)
    with config_context(n_threads=3):
        three = ARIMA((1, 1, 1)).fit(Y)
    for a, b in zip(_fit_bits(one), _fit_bits(three)):
        assert_same_bits(a, b)


def test_nan_padding_is_the_trimmed_series():
    y = simulate(150, ar=(0.5,), ma=(0.3,), d=1, seed=9)
    Y = np.full((170, 2), np.nan)
    Y[5:155, 0] = y
    Y[:150, 1] = y
    m = ARIMA((1, 1, 1), trend="t").fit(Y)
    alone = One(ARIMA((1, 1, 1), trend="t").fit(y[:, None]))
    for j in range(2):
        assert_same_bits(m.params_[j], alone.params_)
    assert m.nobs_.tolist() == [150, 150]
    assert_same_bits(m.forecast(3)[:, 0], alone.forecast(3))
    # predict_range: fitted values in-sample, then forecasts past each series' end
    p = m.predict_range(0, 169)
    np.testing.assert_array_equal(p[5:155, 0], m.fittedvalues_[5:155, 0])
    assert np.isnan(p[:5, 0]).all()
    assert_same_bits(p[155:158, 0], alone.forecast(3))
    assert_same_bits(p[150:153, 1], alone.forecast(3))


@pytest.mark.parametrize("bad, why", [
    (lambda y: np.full_like(y, np.nan), "all values are NaN"),
    (lambda y: np.r_[y[:3], np.full(len(y) - 3, np.nan)], "too few values"),
    (lambda y: np.r_[y[:50], np.nan, y[51:]], "a NaN between"),
    (lambda y: np.r_[y[:50], np.inf, y[51:]], "an infinite value"),
])
def test_bad_series_named_and_errors_nan_fits_the_rest(bad, why):
    Y = _batch(4, seed=400)
    Y[:, 2] = bad(Y[:, 2])
    if "infinite" in why:
        with pytest.raises(ValueError):
            ARIMA((1, 1, 1)).fit(Y)
        return
    with pytest.raises(ValueError, match=rf"series 2 cannot be fitted: {why}"):
        ARIMA((1, 1, 1)).fit(Y)
    m = ARIMA((1, 1, 1), errors="nan").fit(Y)
    assert np.isnan(m.params_[2]).all() and np.isnan(m.llf_[2])
    assert m.status_[2] != 0 and (m.status_[[0, 1, 3]] == 0).all()
    alone = One(ARIMA((1, 1, 1)).fit(Y[:, 3:4]))
    assert_same_bits(m.params_[3], alone.params_)
    assert np.isnan(m.forecast(2)[:, 2]).all()


def test_infinite_values_named_by_the_core_with_errors_nan():
    Y = _batch(3, seed=500)
    m = ARIMA((1, 1, 1), errors="nan")
    # the input check refuses infinities before the core sees them
    Y[10, 1] = np.inf
    with pytest.raises(ValueError):
        m.fit(Y)


@pytest.mark.parametrize("kw, match", [
    (dict(order=(1, 1, 0), trend="c"), "constant trend"),
    (dict(order=(1, 2, 0), trend="t"), "linear trend"),
    (dict(order=(1, 0, 0), seasonal_order=(1, 0, 0, 1)), "seasonal period"),
    (dict(order=(1, 0, 0), seasonal_order=(1, 0, 0, 0)), "seasonal period"),
    (dict(order=(1, 0)), "order must be a tuple of 3"),
    (dict(order=(-1, 0, 0)), "order must be a tuple of 3"),
    (dict(order=(1, 0, 0), seasonal_order=(2, 0, 0, 12)), "state dimension"),
])
def test_unsupported_orders_raise(kw, match):
    with pytest.raises(ValueError, match=match):
        ARIMA(**kw).fit(simulate(200, ar=(0.5,))[:, None])


def test_shapes_and_one_dimensional_input():
    y = simulate(120, ar=(0.5,), seed=1)
    with pytest.raises(ValueError, match="2D array"):
        ARIMA((1, 0, 0)).fit(y)
    m = ARIMA((1, 0, 0)).fit(y[:, None])
    assert m.params_.shape == (1, 3) and m.llf_.shape == (1,)
    assert m.fittedvalues_.shape == (120, 1) and m.forecast(4).shape == (4, 1)
    np.testing.assert_array_equal(m.fit_predict(y[:, None]), m.fittedvalues_)


@pytest.mark.gpu
def test_same_bits_on_cpu_and_gpu():
    Y = _batch(64, seed=600)
    cpu = ARIMA((1, 1, 1), numeric_mode="identical", device="cpu").fit(Y)
    gpu = ARIMA((1, 1, 1), numeric_mode="identical", device="cuda").fit(Y)
    assert gpu.device_used() == "cuda:0"
    for a, b in zip(_fit_bits(cpu), _fit_bits(gpu)):
        assert_same_bits(a, b)
    assert_same_bits(cpu.forecast(7), gpu.forecast(7))


@pytest.mark.gpu
def test_gpu_series_fit_does_not_depend_on_its_batch():
    Y = _batch(40, seed=700)
    alone = One(ARIMA((1, 1, 1), device="cpu").fit(Y[:, 5:6]))
    big = np.tile(Y, (1, 50))  # 2000 series
    gpu = ARIMA((1, 1, 1), device="cuda").fit(big)
    for j in (5, 45, 1965):
        assert_same_bits(gpu.params_[j], alone.params_)


# -- psi weights and simulation ------------------------------------------------------------
@pytest.mark.parametrize("ar, ma", [((0.5,), (0.3,)), ((0.6, -0.2), (0.4,)), ((), (0.5, 0.2)), ((0.9,), ())])
def test_psi_weights_are_statsmodels_arma2ma(ar, ma):
    from statsmodels.tsa.arima_process import arma2ma

    y = simulate(800, ar=ar, ma=ma, seed=11).reshape(-1, 1)
    m = ARIMA((len(ar), 0, len(ma)), trend="n").fit(y)
    coef = dict(zip(m.param_names_, m.params_[0]))
    phi = [coef[f"ar.L{i}"] for i in range(1, len(ar) + 1)]
    theta = [coef[f"ma.L{i}"] for i in range(1, len(ma) + 1)]
    ref = arma2ma(np.r_[1.0, -np.asarray(phi)], np.r_[1.0, theta], lags=15)
    np.testing.assert_allclose(m.psi_weights(15)[:, 0], ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("order, sorder", [((1, 1, 1), (0, 0, 0, 0)), ((2, 1, 1), (1, 0, 1, 4)), ((0, 2, 2), (0, 0, 0, 0))])
def test_psi_weights_give_the_kalman_forecast_variance(order, sorder):
    # On a long, invertible series the state is known at the end: the Kalman
    # filter's h-step variance is sigma2 * sum psi_j^2 (differencing included).
    Y = np.column_stack([simulate(600, ar=(0.5,), ma=(0.3,), d=1, seed=k) for k in (21, 22)])
    m = ARIMA(order, sorder).fit(Y)
    v = m.sigma2_ * np.cumsum(m.psi_weights(12) ** 2, axis=0)
    np.testing.assert_allclose(v, m.forecast_variance(12), rtol=1e-8)
    # a wrong sign convention for the MA side is far from it
    wrong = ARIMA(order, sorder).fit(Y)
    wrong.params_ = wrong.params_.copy()
    ma_cols = [i for i, n in enumerate(m.param_names_) if n.startswith("ma.")]
    wrong.params_[:, ma_cols] *= -1
    vw = m.sigma2_ * np.cumsum(wrong.psi_weights(12) ** 2, axis=0)
    assert np.max(np.abs(vw / m.forecast_variance(12) - 1)) > 1e-2


def test_simulate_paths_have_the_forecast_distribution():
    Y = np.column_stack([simulate(500, ar=(0.5,), ma=(0.3,), d=1, seed=k) for k in (31, 32, 33)])
    m = ARIMA((1, 1, 1)).fit(Y)
    sims = m.simulate(10, repetitions=4000, random_state=5)
    assert sims.shape == (10, 3, 4000)
    mean, var = m.forecast(10), m.forecast_variance(10)
    assert np.max(np.abs(sims.mean(axis=2) - mean) / np.sqrt(var)) < 0.1
    assert np.max(np.abs(sims.var(axis=2) / var - 1)) < 0.15
    # paths are correlated across steps as the model says: cov(y_{T+1}, y_{T+h}) = sigma2 psi_{h-1}
    psi = m.psi_weights(10)
    cov = ((sims[0] - mean[0][:, None]) * (sims[9] - mean[9][:, None])).mean(axis=1)
    np.testing.assert_allclose(cov, m.sigma2_ * psi[9], rtol=0.15)
    assert_same_bits(sims, m.simulate(10, repetitions=4000, random_state=5))


def test_simulate_nan_for_failed_series_and_bad_arguments():
    Y = _batch(3, seed=410)
    Y[:, 1] = np.nan
    m = ARIMA((1, 1, 1), errors="nan").fit(Y)
    sims = m.simulate(4, repetitions=3, random_state=0)
    assert np.isnan(sims[:, 1]).all() and np.isfinite(sims[:, [0, 2]]).all()
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="steps must be an integer"):
            m.simulate(bad)
    with pytest.raises(ValueError, match="repetitions must be an integer"):
        m.simulate(3, repetitions=0)
