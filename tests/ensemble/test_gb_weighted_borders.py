"""Borders of a fit with sample weights: a row of weight w counts as w rows.

Rows of weight 0 are left out of the borders (their values and their NaN),
whole-number weights give exactly the borders of the data with each row
repeated, weights of 1 those of no weights, and the quantiles follow the
weights. Both backends compute them with the same host code.
"""

import numpy as np
import pytest

from twinlearn.ensemble import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from twinlearn.testing import bits

from gb_helpers import assert_same_model, higgs_like


def borders(X, y, sample_weight=None, **kw):
    m = GradientBoosting(loss="RMSE", n_estimators=1, device="cpu", **kw).fit(X, y, sample_weight=sample_weight)
    return m.borders_, m.border_offsets_


def assert_same_borders(a, b):
    assert bits(a[1]) == bits(b[1]), "border counts differ"
    assert bits(a[0]) == bits(b[0]), "borders differ"


def many_values(n=1500, d=3, seed=0):
    """More distinct values per feature than border_count: the quantile rule."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 1] = np.round(X[:, 1] * 40)  # ties
    return X, X[:, 0] + rng.standard_normal(n)


@pytest.mark.parametrize("border_count", [128, 15, 254])
def test_whole_weights_are_repeated_rows(border_count):
    X, y = many_values()
    w = np.random.default_rng(1).integers(0, 5, len(y))
    perm = np.random.default_rng(2).permutation(len(y))
    weighted = borders(X[perm], y[perm], w[perm].astype(float), border_count=border_count)
    repeated = borders(X.repeat(w, axis=0), y.repeat(w), border_count=border_count)
    assert_same_borders(weighted, repeated)
    assert weighted[1][-1] > 3 * 10  # the quantile rule ran: many borders, not all boundaries of few values


def test_weights_of_one_are_no_weights():
    X, y = higgs_like(n=3000, d=6, seed=3)
    for make in (lambda: GradientBoostingClassifier(n_estimators=5, device="cpu"),
                 lambda: GradientBoosting(loss="Logloss", n_estimators=5, nan_mode="Max", device="cpu")):
        assert_same_model(make().fit(X, y), make().fit(X, y, sample_weight=np.ones(len(y))))


@pytest.mark.parametrize("nan_mode", ["Min", "Max"])
def test_zero_weights_are_removed_rows(nan_mode):
    X, y = many_values()
    w = np.random.default_rng(4).integers(0, 3, len(y)).astype(float)
    X[np.flatnonzero(w == 0)[:20], 2] = np.nan  # NaN only in rows of weight 0: no NaN border
    X[np.flatnonzero(w == 0)[20:25], 2] = 1e6  # and values outside every kept row's range
    keep = w > 0
    kw = dict(nan_mode=nan_mode)
    assert_same_borders(borders(X, y, w, **kw), borders(X[keep], y[keep], w[keep], **kw))
    assert not np.isinf(borders(X, y, w, **kw)[0]).any()
    X[np.flatnonzero(keep)[0], 2] = np.nan  # a NaN of positive weight gets its border
    assert np.isinf(borders(X, y, w, **kw)[0]).sum() == 1


def test_small_weights_are_scale_free_and_not_starved():
    """Weights whose mean is below 1 count against their mean: scaling them
    by a power of two keeps the borders, and weights of 2^-10 give the
    unweighted ones (not the single border 'a row of weight 2^-10 is
    2^-10 rows' would leave)."""
    X, y = many_values()
    w = np.random.default_rng(5).uniform(0.05, 0.95, len(y))
    assert_same_borders(borders(X, y, w), borders(X, y, w * 2.0**-7))
    assert_same_borders(borders(X, y, np.full(len(y), 2.0**-10)), borders(X, y))


def test_borders_follow_the_weights():
    x = np.arange(2000.0)
    X = np.column_stack([x, x[::-1]])
    w = np.where(x >= 1000, 9.0, 1.0)
    b, off = borders(X, x, w)
    b0 = b[off[0]:off[1]]
    assert len(b0) == 128
    assert 110 <= (b0 > 1000).sum() <= 118  # about 9 of every 10 borders where 9 of 10 units of weight are
    unweighted = borders(X, x)[0][:128]
    assert 60 <= (unweighted > 1000).sum() <= 68


def test_weighted_fit_matches_repeated_fit():
    """The scikit-learn check's data: 15 rows, weights 0..4 (and shuffled)."""
    rng = np.random.RandomState(42)
    X = rng.rand(15, 30)
    y = rng.randint(0, 3, size=15)
    w = rng.randint(0, 5, size=15)
    perm = np.random.default_rng(0).permutation(15)
    for make in (lambda: GradientBoostingRegressor(n_estimators=10, learning_rate=0.3, max_depth=3, device="cpu"),
                 lambda: GradientBoostingClassifier(n_estimators=10, learning_rate=0.3, max_depth=3, device="cpu")):
        weighted = make().fit(X[perm], y[perm], sample_weight=w[perm])
        repeated = make().fit(X.repeat(w, axis=0), y.repeat(w))
        assert_same_borders((weighted.borders_, weighted.border_offsets_),
                            (repeated.borders_, repeated.border_offsets_))
        np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-7, atol=1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("nan_mode", ["Min", "Max", "Learned"])
def test_weighted_borders_identical_on_the_gpu(nan_mode):
    X, y = higgs_like(n=5000, d=6, seed=7)
    w = np.random.default_rng(8).uniform(0.0, 3.0, len(y))
    w[::7] = 0.0
    kw = dict(n_estimators=8, nan_mode=nan_mode, numeric_mode="identical",
              grow_policy="Depthwise" if nan_mode == "Learned" else "SymmetricTree")
    cpu = GradientBoosting(loss="Logloss", device="cpu", **kw).fit(X, y, sample_weight=w)
    gpu = GradientBoosting(loss="Logloss", device="cuda", **kw).fit(X, y, sample_weight=w)
    assert gpu.device_used().startswith("cuda")
    assert_same_model(cpu, gpu)
    assert bits(cpu.predict_proba(X)) == bits(gpu.predict_proba(X))
