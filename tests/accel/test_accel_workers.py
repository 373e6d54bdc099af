"""Accelerated estimators stay accelerated in worker processes (joblib's loky
backend, multiprocessing with spawn) and take the accelerator's settings with them."""

from __future__ import annotations

import functools
import os
import pickle
import textwrap
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import twinlearn
import twinlearn.accel as accel
from accel_helpers import run_python, accel_state, toy  # noqa: F401 (fixtures)


def data(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * 3 + 1
    return X, X @ rng.standard_normal(d)


def _ran_in_a_worker_on_twinlearn(est, X, y, parent):
    """A scorer: 1.0 when the fitted pipeline's scaler ran on twinlearn in
    another process than `parent`, else 0.0."""
    return float(os.getpid() != parent and accel.fitted_on(est[0]) == "twinlearn:cpu")


def test_cross_val_score_workers_fit_on_twinlearn():
    # The fixture's settings (device cpu, thresholds 0) are not the defaults:
    # without them a worker would run scikit-learn here.
    X, y = data()
    acc = twinlearn.accelerate(make_pipeline(StandardScaler(), Ridge()))
    score = functools.partial(_ran_in_a_worker_on_twinlearn, parent=os.getpid())
    assert cross_val_score(acc, X, y, cv=3, n_jobs=2, scoring=score).tolist() == [1.0, 1.0, 1.0]
    plain = make_pipeline(StandardScaler(), Ridge())
    assert_allclose(cross_val_score(acc, X, y, cv=3, n_jobs=2), cross_val_score(plain, X, y, cv=3), rtol=1e-10)


def test_grid_search_workers_fit_on_twinlearn_and_return_twinlearn_fits():
    X, y = data()
    acc = twinlearn.accelerate(make_pipeline(StandardScaler(), Ridge()))
    score = functools.partial(_ran_in_a_worker_on_twinlearn, parent=os.getpid())
    grid = GridSearchCV(acc, {"ridge__alpha": [0.1, 1.0]}, cv=2, n_jobs=2, scoring=score).fit(X, y)
    assert grid.cv_results_["mean_test_score"].tolist() == [1.0, 1.0]
    res = cross_validate(acc, X, y, cv=2, n_jobs=2, return_estimator=True)
    # A fit made in a worker comes back as that fit: its predictions run on twinlearn here.
    assert [accel.fitted_on(e[0]) for e in res["estimator"]] == ["twinlearn:cpu"] * 2
    assert_allclose(res["estimator"][0].predict(X), make_pipeline(StandardScaler(), Ridge()).fit(
        X[60:], y[60:]).predict(X), rtol=1e-10)


def test_a_pickle_between_processes_keeps_the_twinlearn_fit_a_file_pickle_does_not():
    X, _ = data()
    est = twinlearn.accelerate(StandardScaler()).fit(X)
    again = ForkingPickler.loads(ForkingPickler.dumps(est))
    assert accel.is_accelerated(again) and accel.fitted_on(again) == "twinlearn:cpu"
    assert_allclose(again.transform(X), est.transform(X), rtol=1e-12)
    plain = pickle.loads(pickle.dumps(est))
    assert type(plain) is StandardScaler and "_twinlearn" not in plain.__dict__


def test_the_process_that_set_the_settings_keeps_its_own():
    # An estimator coming back from a worker carries the settings it was sent
    # with; the process they came from keeps its current ones.
    X, _ = data()
    blob = ForkingPickler.dumps(twinlearn.accelerate(StandardScaler()).fit(X))
    accel.set_device("auto")
    accel.set_threshold("StandardScaler", 77)
    ForkingPickler.loads(blob)
    assert accel.get_device() == "auto" and accel.threshold("StandardScaler") == (77, 0)


# In a fresh interpreter: the loky workers of joblib, multiprocessing with spawn,
# and python -m twinlearn.accel with install() semantics.
SCRIPT = textwrap.dedent("""
    import functools, multiprocessing as mp, os, sys
    import numpy as np
    import twinlearn, twinlearn.accel as accel
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def fit_where(est, X):
        return os.getpid(), accel.fitted_on(est.fit(X)), accel.get_device(), accel.threshold("StandardScaler")

    def made_in_worker(X):
        est = StandardScaler().fit(X)  # created in the worker: accelerated when installed there
        return accel.is_accelerated(est), accel.fitted_on(est)

    def score(est, X, y, parent):
        return float(os.getpid() != parent and accel.fitted_on(est[0]) == "twinlearn:cpu")

    if __name__ == "__main__":
        rng = np.random.default_rng(0)
        X = rng.standard_normal((90, 3))
        y = X @ np.ones(3)
        if sys.argv[1] != "cli":
            accel.set_device("cpu")
            accel.set_threshold("StandardScaler", 5)
        pipe = make_pipeline(StandardScaler(), Ridge())
        if sys.argv[1] != "cli":
            pipe = twinlearn.accelerate(pipe)
        s = cross_val_score(pipe, X, y, cv=3, n_jobs=2,
                            scoring=functools.partial(score, parent=os.getpid()))
        print("loky", s.tolist())
        with mp.get_context("spawn").Pool(2) as pool:
            est = StandardScaler() if sys.argv[1] == "cli" else twinlearn.accelerate(StandardScaler())
            for pid, where, dev, thr in pool.map(functools.partial(fit_where, X=X), [est, est]):
                print("spawn", pid != os.getpid(), where, dev, thr)
            if sys.argv[1] == "cli":
                print("made", pool.apply(fit_where, (StandardScaler(), X))[1], pool.apply(made_in_worker, (X,)))
""")


def test_loky_and_spawn_workers_in_a_fresh_interpreter(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    res = run_python(args=[str(script), "api"], cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["loky [1.0, 1.0, 1.0]"] + ["spawn True twinlearn:cpu cpu (5, 0)"] * 2


def test_cli_workers_are_accelerated_with_the_cli_settings(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT.replace('accel.threshold("StandardScaler")', "accel.get_config()['global_threshold']"))
    res = run_python(args=["-m", "twinlearn.accel", "--device", "cpu", "--threshold", "0", str(script), "cli"],
                     cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "loky [1.0, 1.0, 1.0]"
    assert lines[1:3] == ["spawn True twinlearn:cpu cpu 0"] * 2
    # A worker of python -m twinlearn.accel is installed too (it inherits
    # TWINLEARN_ACCEL and the settings): an estimator it creates is accelerated.
    assert lines[3] == "made twinlearn:cpu (True, 'twinlearn:cpu')"
