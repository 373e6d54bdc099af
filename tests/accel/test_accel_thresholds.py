"""Measured default thresholds: the rule, the measurement tool, loading the results file."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

import twinlearn.accel as accel
from twinlearn.accel import _calibrate, _entry, _registry, _thresholds
from accel_helpers import accel_state, run_python  # noqa: F401 (fixture)

PLACEHOLDER = (_entry.DEFAULT_MIN_ROWS, 1)


# -- the rule ---------------------------------------------------------------------------
def _first_win(times):
    """The wrong rule: the first size at which twinlearn is faster."""
    for rows, sk, tl in sorted(times):
        if tl < sk:
            return rows
    return None


# rows, scikit-learn seconds, twinlearn seconds
ALWAYS = [(256, 1.0, 0.5), (512, 2.0, 0.6), (1024, 4.0, 0.7)]
NEVER_WINS = [(256, 0.1, 0.5), (512, 0.2, 0.6), (1024, 0.4, 0.7)]
LATE = [(256, 0.1, 0.5), (512, 0.2, 0.6), (1024, 0.8, 0.7), (2048, 1.6, 0.8)]
# twinlearn wins at 512, loses at 1024, then wins for good from 2048.
WINS_THEN_LOSES = [(256, 1.0, 2.0), (512, 2.0, 1.0), (1024, 3.0, 4.0), (2048, 8.0, 4.0), (4096, 16.0, 4.0)]
# twinlearn wins at small sizes and loses at the largest: never for good.
WINS_THEN_LOSES_AT_END = [(256, 1.0, 0.5), (512, 2.0, 1.0), (1024, 3.0, 4.0)]


@pytest.mark.parametrize("times, expected", [
    (ALWAYS, 256),
    (NEVER_WINS, None),
    (LATE, 1024),
    (WINS_THEN_LOSES, 2048),
    (WINS_THEN_LOSES_AT_END, None),
    ([], None),
    ([(512, 1.0, 1.0), (1024, 2.0, 1.0)], 1024),  # a tie is not a win
    (list(reversed(LATE)), 1024),  # order of the input does not matter
])
def test_crossover(times, expected):
    assert _calibrate.crossover(times) == expected


def test_crossover_differs_from_first_win_on_fixture():
    # Separating arm: the fixtures tell "faster at that size and every larger
    # one" apart from "first size where faster".
    assert _first_win(WINS_THEN_LOSES) == 512
    assert _calibrate.crossover(WINS_THEN_LOSES) == 2048
    assert _first_win(WINS_THEN_LOSES_AT_END) == 256
    assert _calibrate.crossover(WINS_THEN_LOSES_AT_END) is None


# -- the tool on the CPU backend -----------------------------------------------------
def _check_file(data, names, device, max_rows):
    assert data["format"] == _thresholds.FORMAT
    m = data["machine"]
    for k in ("device", "device_name", "date", "twinlearn_commit", "sklearn_version", "cols"):
        assert m[k] not in (None, ""), k
    assert m["device"] == device
    assert set(data["estimators"]) == set(names), data.get("skipped")
    for name in names:
        rec = data["estimators"][name]
        assert rec["device"] == device and rec["cols_measured"] == m["cols"][0]
        assert [w["cols"] for w in rec["wider"]] == m["cols"][1:]
        for w in rec["wider"]:  # each wider width: the rule applied to its own times
            assert w["min_rows"] == _calibrate.crossover(
                [(t["rows"], t["sklearn_s"], t["twinlearn_s"]) for t in w["times"]])
        assert rec["dtype"] in ("float32", "float64")
        assert rec["method"] in _calibrate.MAIN_METHODS
        rows = [t["rows"] for t in rec["times"]]
        assert rows[0] == _calibrate.START_ROWS and rows[-1] <= max_rows
        assert all(b == 2 * a for a, b in zip(rows, rows[1:]))
        assert rec["max_rows_measured"] == rows[-1]
        for t in rec["times"]:
            assert 0 < t["sklearn_fit_s"] <= t["sklearn_s"] and 0 < t["twinlearn_fit_s"] <= t["twinlearn_s"]
            assert t["sklearn_runs"] >= 1 and t["twinlearn_runs"] >= 1
        # The recorded threshold is the rule applied to the recorded times.
        assert rec["min_rows"] == _calibrate.crossover(
            [(t["rows"], t["sklearn_s"], t["twinlearn_s"]) for t in rec["times"]])


def test_tool_runs_on_cpu_backend(tmp_path):
    out = tmp_path / "thresholds-cpu.json"
    res = run_python(args=["-m", "twinlearn.accel", "--measure-thresholds", "--device", "cpu",
                           "--max-rows", "2048", "--only", "StandardScaler,KMeans", "--cols", "8,32",
                           "--budget-seconds", "30", "--out", str(out)], timeout=300)
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    _check_file(data, ["StandardScaler", "KMeans"], "cpu", 2048)
    assert data["estimators"]["StandardScaler"]["max_rows_measured"] == 2048
    # Progress per estimator and per size.
    assert "StandardScaler: fit + transform" in res.stderr and "KMeans: fit + predict" in res.stderr
    assert "2048 rows" in res.stderr
    # A CPU measurement never becomes a default.
    _thresholds.use_file(out)
    try:
        accel.reset_thresholds()
        assert accel.threshold("StandardScaler") == PLACEHOLDER
        assert accel.threshold("KMeans") == PLACEHOLDER
    finally:
        _thresholds.use_file(None)


def test_tool_merges_and_restores_settings(tmp_path):
    out = tmp_path / "t.json"
    out.write_text(json.dumps({"format": 1, "machine": None, "skipped": {},
                               "estimators": {"PCA": _record(4096, device="cpu")}}))
    accel.set_threshold("KMeans", 123, 4)
    lines = []
    data = _calibrate.measure_thresholds(device="cpu", only=["MaxAbsScaler"], max_rows=512,
                                          budget_s=20, out=out, log=lines.append)
    assert set(data["estimators"]) == {"PCA", "MaxAbsScaler"}  # kept what was there
    assert json.loads(out.read_text()) == data
    _check_file({**data, "estimators": {"MaxAbsScaler": data["estimators"]["MaxAbsScaler"]}},
                ["MaxAbsScaler"], "cpu", 512)
    assert any(line.startswith("MaxAbsScaler:") for line in lines)
    # The accelerator's settings are as they were.
    assert accel.get_device() == "cpu" and accel.threshold("KMeans") == (123, 4)
    assert not accel.get_config()["profiling"]


@pytest.mark.gpu
def test_tool_runs_on_gpu_and_its_file_sets_defaults(tmp_path):
    out = tmp_path / "thresholds-gpu.json"
    data = _calibrate.measure_thresholds(device="cuda", only=["StandardScaler", "KMeans"], max_rows=2048,
                                          budget_s=60, out=out, log=lambda msg: None)
    _check_file(data, ["StandardScaler", "KMeans"], "cuda:0", 2048)
    assert not data["machine"]["device_name"].startswith("CPU")
    _thresholds.use_file(out)
    try:
        accel.reset_thresholds()
        for name in ("StandardScaler", "KMeans"):
            rows = data["estimators"][name]["min_rows"]
            assert accel.threshold(name) == (_thresholds.NEVER if rows is None else rows, 1)
    finally:
        _thresholds.use_file(None)


def test_tool_without_gpu_says_so(tmp_path):
    from twinlearn import _backend

    if _backend.cuda_available():
        pytest.skip("a GPU is usable here")
    with pytest.raises(ValueError, match="no usable GPU"):
        _calibrate.measure_thresholds(device="cuda", only=["StandardScaler"], out=tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


def test_tool_refuses_cpu_measurement_as_packaged_defaults(tmp_path):
    with pytest.raises(ValueError, match="needs an output file"):
        _calibrate.measure_thresholds(device="cpu", only=["StandardScaler"])
    with pytest.raises(ValueError, match="may not overwrite the packaged"):
        _calibrate.measure_thresholds(device="cpu", only=["StandardScaler"], out=_thresholds.PATH)
    res = run_python(args=["-m", "twinlearn.accel", "--measure-thresholds", "--device", "cpu",
                           "--only", "StandardScaler"])
    assert res.returncode == 2 and "needs an output file" in res.stderr


# -- loading ------------------------------------------------------------------------------
def _record(min_rows, device="cuda:0", name="NVIDIA H200", date="2030-01-02", max_rows=1 << 20):
    return {"min_rows": min_rows, "min_cols": 1, "cols_measured": 32, "device": device,
            "device_name": name, "date": date, "twinlearn_commit": "abc", "sklearn_version": "1.9.1",
            "max_rows_measured": max_rows, "times": []}


@pytest.fixture
def results_file(tmp_path):
    path = tmp_path / "thresholds.json"

    def use(content):
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        _thresholds.use_file(path)
        accel.reset_thresholds()  # drop the tests' thresholds 0: the defaults show
        return path

    yield use
    _thresholds.use_file(None)


def test_gpu_measurement_changes_defaults(results_file):
    results_file({"format": 1, "machine": None,
                  "estimators": {"StandardScaler": _record(100), "KMeans": _record(5000)}})
    assert accel.threshold("StandardScaler") == (100, 1)
    assert accel.get_config()["thresholds"]["KMeans"] == {"min_rows": 5000, "min_cols": 1}
    assert accel.threshold("PCA") == PLACEHOLDER  # not measured: placeholder
    # Dispatch follows the measured default.
    X = np.random.default_rng(0).standard_normal((200, 3))
    small = accel.accelerate(StandardScaler()).fit(X[:50])
    large = accel.accelerate(StandardScaler()).fit(X)
    assert accel.fitted_on(small) == "scikit-learn" and accel.fitted_on(large) == "twinlearn:cpu"
    # An explicit threshold still wins over the measured default; reset goes back to it.
    accel.set_threshold("StandardScaler", 1000)
    assert accel.threshold("StandardScaler") == (1000, 0)
    accel.reset_thresholds()
    assert accel.threshold("StandardScaler") == (100, 1)


def test_threshold_of_the_widest_measured_width_not_above_the_data(results_file, caplog):
    rec = dict(_record(None, max_rows=65536), wider=[
        {"cols": 64, "min_rows": 100, "min_cols": 1, "max_rows_measured": 65536},
        {"cols": 16, "min_rows": 150, "min_cols": 1, "max_rows_measured": 65536},
    ])
    results_file({"format": 1, "estimators": {"StandardScaler": rec}})
    assert accel.threshold("StandardScaler") == (150, 1)  # the narrowest width measured (16)
    rng = np.random.default_rng(0)

    def where(n, d):
        with caplog.at_level(logging.INFO, logger="twinlearn.accel"):
            return accel.fitted_on(accel.accelerate(StandardScaler()).fit(rng.standard_normal((n, d))))

    assert where(200, 8) == "twinlearn:cpu"  # narrower than every width: the narrowest's 150 rows
    assert where(120, 8) == "scikit-learn"
    assert where(200, 40) == "scikit-learn"  # 32 <= 40 < 64: never faster at 32 columns
    assert "slower than scikit-learn at every size measured up to 65536 rows at 32 columns" in caplog.text
    assert where(120, 70) == "twinlearn:cpu"  # 64 columns and wider: from 100 rows
    assert where(90, 70) == "scikit-learn"
    text = _thresholds.threshold_text(_registry.lookup("StandardScaler").entry)
    assert text == ("150, 1 (at 16 columns); scikit-learn at every size (at >= 32 columns); "
                    "100, 1 (at >= 64 columns)")


def test_bad_wider_entry_makes_the_record_unusable(results_file, caplog):
    rec = dict(_record(100), wider=[{"cols": 0, "min_rows": 10}])
    with caplog.at_level(logging.WARNING, logger="twinlearn.accel"):
        results_file({"format": 1, "estimators": {"StandardScaler": rec}})
        assert accel.threshold("StandardScaler") == PLACEHOLDER
    assert "needs a positive 'cols'" in caplog.text


def test_never_faster_keeps_scikit_learn(results_file, caplog):
    results_file({"format": 1, "estimators": {"StandardScaler": _record(None, max_rows=65536)}})
    assert accel.threshold("StandardScaler") == (_thresholds.NEVER, 1)
    X = np.random.default_rng(0).standard_normal((300, 3))
    with caplog.at_level(logging.INFO, logger="twinlearn.accel"):
        est = accel.accelerate(StandardScaler()).fit(X)
    assert accel.fitted_on(est) == "scikit-learn"
    assert "slower than scikit-learn at every size measured up to 65536 rows at 32 columns on NVIDIA H200" in caplog.text
    accel.set_threshold("StandardScaler", 0)
    assert accel.fitted_on(accel.accelerate(StandardScaler()).fit(X)) == "twinlearn:cpu"


def test_cpu_measurement_does_not_change_defaults(results_file):
    results_file({"format": 1, "estimators": {"StandardScaler": _record(100, device="cpu", name="CPU: x")}})
    assert accel.threshold("StandardScaler") == PLACEHOLDER
    assert _thresholds.measured("StandardScaler") is None


@pytest.mark.parametrize("content", [
    "{not json",
    "[]",
    json.dumps({"format": 99, "estimators": {"StandardScaler": _record(100)}}),
    json.dumps({"format": 1, "estimators": []}),
    "",
])
def test_corrupt_file_falls_back_to_placeholders(results_file, content, caplog):
    with caplog.at_level(logging.WARNING, logger="twinlearn.accel"):
        results_file(content)
        assert accel.threshold("StandardScaler") == PLACEHOLDER
    assert "measured thresholds not used" in caplog.text
    assert "placeholder, not measured" in accel.support_matrix()


def test_bad_record_is_skipped_and_good_one_used(results_file, caplog):
    bad = dict(_record(100), min_rows=-5)
    with caplog.at_level(logging.WARNING, logger="twinlearn.accel"):
        results_file({"format": 1, "estimators": {"StandardScaler": bad, "KMeans": _record(2048),
                                                  "MinMaxScaler": "x"}})
        assert accel.threshold("StandardScaler") == PLACEHOLDER
        assert accel.threshold("KMeans") == (2048, 1)
        assert accel.threshold("MinMaxScaler") == PLACEHOLDER
    assert "measured threshold of StandardScaler not used" in caplog.text


def test_missing_file_falls_back_to_placeholders(tmp_path):
    _thresholds.use_file(tmp_path / "absent.json")
    try:
        accel.reset_thresholds()
        assert accel.threshold("StandardScaler") == PLACEHOLDER
    finally:
        _thresholds.use_file(None)


def test_support_matrix_shows_measured_and_placeholder(results_file):
    results_file({"format": 1, "estimators": {"StandardScaler": _record(16384),
                                              "MinMaxScaler": _record(None, max_rows=4096)}})
    rows = {line.split("|")[1].strip(): line for line in accel.support_matrix().splitlines()
            if line.startswith("| `sklearn.")}
    assert "| 16384, 1 | measured (NVIDIA H200, 2030-01-02, 32 columns) |" in rows["`sklearn.preprocessing.StandardScaler`"]
    assert ("| scikit-learn at every size | measured (NVIDIA H200, 2030-01-02): twinlearn never faster "
            "up to 4096 rows") in rows["`sklearn.preprocessing.MinMaxScaler`"]
    assert f"| {_entry.DEFAULT_MIN_ROWS}, 1 | placeholder, not measured |" in rows["`sklearn.cluster.KMeans`"]


def test_packaged_file_holds_only_gpu_measurements():
    # The packaged defaults are measurements made on a GPU, each consistent
    # with the times recorded beside it (never a hand-set or CPU number).
    data = _thresholds.read(_thresholds.PATH)
    for name, rec in data["estimators"].items():
        assert _thresholds.is_gpu(rec), name
        for k in ("device_name", "date", "twinlearn_commit", "sklearn_version", "cols_measured"):
            assert rec.get(k), (name, k)
        assert rec["min_rows"] == _calibrate.crossover(
            [(t["rows"], t["sklearn_s"], t["twinlearn_s"]) for t in rec["times"]]), name
