"""Hypothesis-driven input fuzz over every registered estimator.

Shapes (no rows, one row, one column, wide, odd sizes), dtypes (float32,
float64, integers, booleans, numbers as objects, strings), NaN and infinity,
extremes (±1e308, denormals, ±0) and layouts (Fortran order, strided views,
nested lists). Fitting and then each output method either raise a clear
ValueError or TypeError (with a message; never RuntimeError, SystemError or
an error of the bindings), or return one finite row per input row (a
non-finite input may give non-finite outputs where the estimator accepts it).
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twinlearn.testing.estimators import ESTIMATORS

FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform", "score_samples",
           "kneighbors")
# What the bindings say when a call reaches them with arguments they cannot take:
# an internal error leaking out, not a message about the user's input.
BINDING_WORDS = ("incompatible function arguments", "nanobind", "nb::", "std::")
LOG_OUTPUTS = ("predict_log_proba", "score_samples")
EXTREMES = [1e308, -1e308, 1e-310, -1e-310, 0.0, -0.0, 5e-324]


@st.composite
def cases(draw):
    n = draw(st.sampled_from([0, 1, 2, 3, 7, 13, 48]))
    d = draw(st.sampled_from([1, 2, 3, 5, 64]))
    seed = draw(st.integers(0, 2**16))
    dtype = draw(st.sampled_from(["float64", "float32", "int64", "int32", "bool", "object", "str"]))
    poison = draw(st.sampled_from(["none", "none", "nan", "inf", "-inf", "extreme", "extreme-column"]))
    layout = draw(st.sampled_from(["C", "F", "strided", "list"]))
    cell = (draw(st.integers(0, max(n - 1, 0))), draw(st.integers(0, d - 1)))
    extreme = draw(st.sampled_from(EXTREMES))
    return n, d, seed, dtype, poison, layout, cell, extreme


def _build(spec, case):
    n, d, seed, dtype, poison, layout, (i, j), extreme = case
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 3
    if n and poison in ("nan", "inf", "-inf"):
        X[i, j] = float(poison)
    elif n and poison == "extreme":
        X[i, j] = extreme
    elif n and poison == "extreme-column":
        X[:, j] = extreme
    finite = bool(np.isfinite(X).all())
    if dtype == "object":
        X = X.astype(object)
    elif dtype == "str":
        X = X.astype(str)
    elif dtype == "bool":
        X = X > 0
    elif dtype.startswith("int"):
        X = np.nan_to_num(X, nan=0.0, posinf=1e9, neginf=-1e9).clip(-1e9, 1e9).astype(dtype)
        finite = True
    else:
        X = X.astype(dtype)
        finite = finite and bool(np.isfinite(X).all())  # 1e308 overflows float32 to inf
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "strided":
        wide = np.repeat(X, 2, axis=1)
        wide[:, 1::2] = wide[:, ::2][:, ::-1] if d else wide[:, 1::2]
        X = wide[:, ::2]
    elif layout == "list":
        X = X.tolist()
    if spec.task == "regression":
        y = rng.normal(size=n)
    elif spec.task == "classification":
        y = np.arange(n) % spec.n_classes
    else:
        y = None
    return X, y, finite


def _zero_variance_nb(est):
    """GaussianNB fitted where every feature is constant within its class: the
    variance smoothing (var_smoothing times the largest variance) is 0 too,
    and the probabilities are 0/0 = NaN, as scikit-learn's GaussianNB gives."""
    var = getattr(est, "var_", None)
    return type(est).__name__ == "GaussianNB" and var is not None and not np.asarray(var).any()


def _clear(exc):
    assert isinstance(exc, (ValueError, TypeError)), f"{type(exc).__name__}: {exc}"
    msg = str(exc)
    assert msg.strip(), f"{type(exc).__name__} without a message"
    assert not any(w in msg for w in BINDING_WORDS), f"an internal error of the bindings leaked: {msg}"


def _check_output(name, out, n, finite):
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        o = np.asarray(o)
        assert o.shape[:1] == (n,), f"{name} gave shape {o.shape} for {n} rows"
        if finite and o.dtype.kind in "fc":
            if name in LOG_OUTPUTS:  # the log of a zero probability or density is -inf
                o = o[o != -np.inf]
            assert np.isfinite(o).all(), f"{name} gave non-finite values on finite input"


@pytest.mark.parametrize("spec", ESTIMATORS, ids=[s.name for s in ESTIMATORS])
@FUZZ
@given(case=cases())
def test_fit_and_predict_fail_clearly_or_return_finite(spec, case):
    X, y, finite = _build(spec, case)
    n = case[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = spec.make(device="cpu")
        try:
            est.fit(X) if y is None else est.fit(X, y)
        except Exception as exc:  # noqa: BLE001 - the property is about which exceptions
            _clear(exc)
            return
        for name in METHODS:
            if not hasattr(est, name):
                continue
            try:
                out = getattr(est, name)(X)
            except (AttributeError, NotImplementedError):
                continue
            except Exception as exc:  # noqa: BLE001
                _clear(exc)
                continue
            _check_output(name, out, n, finite and not _zero_variance_nb(est))
