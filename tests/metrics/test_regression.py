"""Regression metrics: scikit-learn's errors and warnings; identical mode
through canonical sums (close to scikit-learn, the same bits on a GPU)."""

import numpy as np
import pytest
import sklearn.metrics as sk

import twinlearn.metrics as tm
from twinlearn import _backend
from twinlearn.testing import assert_separates, to_device

from _metric_helpers import assert_same_outcome, outcome

# (name, keyword arguments, positive targets needed, single output only)
CASES = [
    ("r2_score", {}, False, False),
    ("r2_score", {"multioutput": "raw_values"}, False, False),
    ("r2_score", {"multioutput": "variance_weighted"}, False, False),
    ("r2_score", {"force_finite": False}, False, False),
    ("explained_variance_score", {}, False, False),
    ("explained_variance_score", {"multioutput": "raw_values"}, False, False),
    ("mean_squared_error", {}, False, False),
    ("mean_squared_error", {"multioutput": [0.2, 0.3, 0.5]}, False, False),
    ("root_mean_squared_error", {"multioutput": "raw_values"}, False, False),
    ("root_mean_squared_error", {}, False, False),
    ("mean_absolute_error", {}, False, False),
    ("mean_absolute_percentage_error", {}, False, False),
    ("mean_pinball_loss", {"alpha": 0.1}, False, False),
    ("mean_pinball_loss", {"alpha": 0.9, "multioutput": "raw_values"}, False, False),
    ("max_error", {}, False, True),
    ("mean_tweedie_deviance", {"power": 0}, False, True),
    ("mean_tweedie_deviance", {"power": -0.5}, True, True),
    ("mean_tweedie_deviance", {"power": 1.5}, True, True),
    ("mean_tweedie_deviance", {"power": 3}, True, True),
    ("mean_poisson_deviance", {}, True, True),
    ("mean_gamma_deviance", {}, True, True),
    ("d2_tweedie_score", {"power": 1}, True, True),
    ("d2_tweedie_score", {"power": 0}, False, True),
    ("median_absolute_error", {}, False, False),
    ("d2_absolute_error_score", {}, False, False),
    ("d2_pinball_score", {"alpha": 0.3}, False, False),
]


def targets(seed, positive, single, n=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300)) if n is None else n
    shape = (n,) if single or seed % 2 else (n, 3)
    y = rng.standard_normal(shape) * 3 + 1
    p = y + rng.standard_normal(shape)
    if positive:
        y, p = np.abs(y) + 0.1, np.abs(p) + 0.1
    if np.shape(y) == (n,) and seed % 4 == 1:
        p = p.copy()
        p[: n // 3] = y[: n // 3]  # exact predictions: zeros in the numerators
    return y, p, rng


def kwargs_for(name, kw, y):
    if y.ndim == 1 and ("multioutput" in kw and not isinstance(kw["multioutput"], str)):
        return {k: v for k, v in kw.items() if k != "multioutput"}
    return kw


def weight_arg(name, w):
    return {} if name == "max_error" else {"sample_weight": w}


@pytest.mark.parametrize("name,kw,positive,single", CASES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_identical_mode_is_close_to_scikit_learn(name, kw, positive, single, weighted, seed):
    y, p, rng = targets(seed, positive, single)
    w = rng.random(y.shape[0]) * 2 if weighted else None
    kw = kwargs_for(name, kw, y)
    ref = outcome(getattr(sk, name), y, p, **weight_arg(name, w), **kw)
    got = outcome(getattr(tm, name), y, p, **weight_arg(name, w), numeric_mode="identical", **kw)
    assert_same_outcome(ref, got, exact=False, rtol=1e-12, atol=1e-14)
    # default mode: scikit-learn's computation, its bits
    assert_same_outcome(ref, outcome(getattr(tm, name), y, p, **weight_arg(name, w), **kw), exact=True)


def test_identical_sums_are_canonical():
    # mean_squared_error in identical mode is the canonical sum of the squared
    # errors over n, not NumPy's pairwise sum (they differ on this fixture).
    rng = np.random.default_rng(0)
    n = 10_000
    y = rng.standard_normal(n) * np.where(rng.random(n) < 0.1, 1e5, 1.0)
    p = rng.standard_normal(n)
    mod = _backend.core()
    ctx = mod.Context("cpu", 1, "identical")

    def check(total):
        assert tm.mean_squared_error(y, p, numeric_mode="identical") == total((y - p) ** 2) / n

    assert_separates(check, right=lambda v: mod.reduce_sum(ctx, v), wrong=np.sum, what="canonical sums")


def test_identical_mode_does_not_depend_on_threads():
    y, p, rng = targets(1, False, False, n=50_000)
    w = rng.random(50_000)
    got = []
    for t in (1, 2, 3):
        with _threads(t):
            got.append(tm.r2_score(y, p, sample_weight=w, multioutput="raw_values", numeric_mode="identical"))
    assert got[0].tobytes() == got[1].tobytes() == got[2].tobytes()


class _threads:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        import twinlearn

        self.old = twinlearn.get_n_threads()
        twinlearn.set_n_threads(self.n)

    def __exit__(self, *exc):
        import twinlearn

        twinlearn.set_n_threads(self.old)


@pytest.mark.parametrize("fn,args,kw", [
    ("r2_score", ([1.0, 2.0, 3.0], [1.0, 2.0]), {}),
    ("r2_score", ([1.0], [1.0]), {}),
    ("r2_score", ([1.0, np.nan], [1.0, 2.0]), {}),
    ("r2_score", ([1.0, 2.0], [1.0, np.inf]), {}),
    ("r2_score", ([[1.0, 2.0], [2.0, 3.0]], [1.0, 2.0]), {}),
    ("r2_score", ([1.0, 2.0], [1.0, 2.0]), {"multioutput": "bogus"}),
    ("r2_score", ([1.0, 2.0], [1.0, 2.0]), {"multioutput": [0.5, 0.5]}),
    ("r2_score", ([[1.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 3.0]]), {"multioutput": [0.5, 0.2, 0.3]}),
    ("mean_squared_error", ([], []), {}),
    ("mean_squared_error", ([1.0, 2.0], [1.0, 2.0]), {"sample_weight": [1.0, 2.0, 3.0]}),
    ("mean_squared_error", ([1.0, 2.0], [1.0, 2.0]), {"sample_weight": [0.0, 0.0]}),
    ("max_error", ([[1.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 3.0]]), {}),
    ("mean_poisson_deviance", ([1.0, -2.0], [1.0, 2.0]), {}),
    ("mean_gamma_deviance", ([1.0, 2.0], [1.0, 0.0]), {}),
    ("mean_tweedie_deviance", ([1.0, 2.0], [1.0, -1.0]), {"power": -1}),
    ("mean_tweedie_deviance", ([1.0, 2.0], [1.0, 2.0]), {"power": 0.5}),
    ("d2_tweedie_score", ([1.0], [1.0]), {}),
    ("mean_pinball_loss", ([1.0, 2.0], [1.0, 2.0]), {"alpha": 2.0}),
    ("explained_variance_score", ([1.0, 1.0], [1.0, 2.0]), {}),
])
def test_errors_and_warnings_are_scikit_learns(fn, args, kw):
    for mode in ("identical", None):
        assert_same_outcome(outcome(getattr(sk, fn), *args, **kw),
                            outcome(getattr(tm, fn), *args, numeric_mode=mode, **kw), exact=False)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("name,kw,positive,single", CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_gpu_gives_the_cpus_identical_bits(lib, name, kw, positive, single, weighted):
    y, p, rng = targets(0, positive, single, n=100_003)
    w = rng.random(y.shape[0]) if weighted else None
    kw = kwargs_for(name, kw, y)
    cpu = outcome(getattr(tm, name), y, p, **weight_arg(name, w), numeric_mode="identical", **kw)
    dw = None if w is None else to_device(lib, w)
    gpu = outcome(getattr(tm, name), to_device(lib, y), to_device(lib, p), **weight_arg(name, dw),
                  numeric_mode="identical", **kw)
    assert_same_outcome(cpu, gpu, exact=True)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_gpu_errors_are_scikit_learns(lib):
    for fn, args, kw in [("r2_score", ([1.0, np.nan], [1.0, 2.0]), {}),
                         ("r2_score", ([1.0, 2.0, 3.0], [1.0, 2.0]), {}),
                         ("mean_poisson_deviance", ([1.0, -2.0], [1.0, 2.0]), {}),
                         ("r2_score", ([1.0, 2.0], [1.0, 2.0]), {"multioutput": "bogus"})]:
        ref = outcome(getattr(sk, fn), *args, **kw)
        got = outcome(getattr(tm, fn), *(to_device(lib, np.asarray(a)) for a in args), **kw)
        assert_same_outcome(ref, got, exact=False)


@pytest.mark.parametrize("name", ["r2_score", "mean_squared_error", "mean_absolute_error", "explained_variance_score"])
def test_float32_input_is_computed_in_float64(name):
    # scikit-learn computes float32 input in float32; the own path widens it
    # first, so the two agree to float32 rounding (and the own path equals its
    # own result on the widened input exactly).
    y, p, _ = targets(2, False, False, n=1_000)
    y32, p32 = y.astype(np.float32), p.astype(np.float32)
    got = getattr(tm, name)(y32, p32, numeric_mode="identical")
    np.testing.assert_allclose(got, getattr(sk, name)(y32, p32), rtol=1e-5)
    wide = getattr(tm, name)(y32.astype(np.float64), p32.astype(np.float64), numeric_mode="identical")
    assert np.float64(got).tobytes() == np.float64(wide).tobytes()
