"""Estimators fitted and used from several threads at once, and the CPU
backend in a process forked after CUDA started.

Four threads fit and predict at the same time; each result has the bits of a
serial fit in the deterministic mode (the GIL is released in the core, so the
threads do run together). A child forked after the parent used CUDA fits on
the CPU backend, or fails with a clear error, within a time limit: it never
hangs or crashes.
"""

import multiprocessing
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from twinlearn import config_context
from twinlearn.testing import assert_same_snapshot, snapshot
from twinlearn.testing.estimators import by_name

NAMES = ["KMeans", "LinearRegression", "GradientBoostingRegressor", "NearestNeighbors", "StandardScaler", "PCA",
         "LogisticRegression", "MiniBatchKMeans"]
THREADS = 4
ROUNDS = 3


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(spec, seed):
    return spec.data(n=300, d=6, seed=seed)


def _fit_and_snapshot(spec, seed, device):
    X, y = _data(spec, seed)
    est = spec.fit(X, y, device=device, numeric_mode="deterministic")
    return snapshot(est, X)


def _serial_then_threads(device):
    specs = [by_name(name) for name in NAMES]
    jobs = [(spec, seed) for spec in specs for seed in range(2)] * ROUNDS
    expected = {(spec.name, seed): _fit_and_snapshot(spec, seed, device) for spec in specs for seed in range(2)}
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        got = list(pool.map(lambda job: _fit_and_snapshot(job[0], job[1], device), jobs))
    for (spec, seed), snap in zip(jobs, got):
        assert_same_snapshot(expected[spec.name, seed], snap)


def test_threads_fit_and_predict_as_a_serial_fit():
    _serial_then_threads("cpu")


def test_threads_share_one_fitted_estimator():
    """Predictions of one fitted estimator from four threads at once."""
    for name in NAMES:
        spec = by_name(name)
        X, y = _data(spec, 0)
        est = spec.fit(X, y, device="cpu", numeric_mode="deterministic")
        expected = snapshot(est, X)
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            for snap in pool.map(lambda _: snapshot(est, X), range(THREADS * ROUNDS)):
                assert_same_snapshot(expected, snap)


@pytest.mark.gpu
def test_threads_fit_and_predict_as_a_serial_fit_on_cuda():
    _serial_then_threads("cuda")


def _child_fit(queue):
    try:
        spec = by_name("GradientBoostingRegressor")
        X, y = _data(spec, 0)
        pred = spec.fit(X, y, device="cpu", numeric_mode="identical").predict(X)
        kmeans = by_name("KMeans")
        labels = kmeans.fit(_data(kmeans, 1)[0], device="cpu", numeric_mode="identical").labels_
        queue.put(("ok", pred.tolist(), labels.tolist()))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        queue.put(("error", f"{type(exc).__name__}: {exc}", None))


def _fit_in_forked_child(timeout=60):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_fit, args=(queue,))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail(f"the forked child did not finish in {timeout} s (hung)")
    assert child.exitcode == 0, f"the forked child crashed (exit code {child.exitcode})"
    return queue.get(timeout=10)


def test_forked_child_fits_on_cpu():
    """The CPU backend works in a child forked after the parent fitted on
    several threads (the thread pool must not be inherited half-held)."""
    spec, kmeans = by_name("GradientBoostingRegressor"), by_name("KMeans")
    X, y = _data(spec, 0)
    with config_context(n_threads=THREADS):
        expected = spec.fit(X, y, device="cpu", numeric_mode="identical").predict(X)
        labels = kmeans.fit(_data(kmeans, 1)[0], device="cpu", numeric_mode="identical").labels_
        status, pred, child_labels = _fit_in_forked_child()
    assert status == "ok", pred
    np.testing.assert_array_equal(np.asarray(pred, dtype=expected.dtype), expected)
    np.testing.assert_array_equal(child_labels, labels)


@pytest.mark.gpu
def test_forked_child_after_cuda_fits_on_cpu():
    spec = by_name("GradientBoostingRegressor")
    X, y = _data(spec, 0)
    spec.fit(X, y, device="cuda")  # CUDA initialized in the parent
    expected = spec.fit(X, y, device="cpu", numeric_mode="identical").predict(X)
    status, pred, _ = _fit_in_forked_child()
    if status == "ok":
        np.testing.assert_array_equal(np.asarray(pred, dtype=expected.dtype), expected)
    else:  # a clear Python error, not a hang or a crash
        assert pred.split(":")[0] in ("RuntimeError", "ValueError") and len(pred) > 20, pred


def test_doctor_selfcheck_uses_one_thread_in_a_forked_child(monkeypatch):
    """`twinlearn doctor`'s self-check takes the configured thread count, 1
    after a fork (OpenMP's pool does not survive one), not all cores."""
    from twinlearn import _backend, _config, cli

    core = _backend.core()
    made = []

    class Spy:
        def __init__(self, *args):
            made.append(args[1])
            self._ctx = core.Context(*args)

    class Mod:
        Context = Spy
        column_stats = staticmethod(lambda ctx, X, w: core.column_stats(ctx._ctx, X, w))
        column_affine_apply = staticmethod(
            lambda ctx, X, out, sub, div: core.column_affine_apply(ctx._ctx, X, out, sub=sub, div=div))

    expected = cli._selfcheck(core, "cpu")
    monkeypatch.setattr(_config, "_FORKED", True)
    assert cli._selfcheck(Mod, "cpu") == expected
    assert made == [1]
