"""accelerate_context, the global set_threshold(n), gpu_available and the
TWINLEARN_ACCEL_* settings."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.preprocessing
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

import twinlearn
import twinlearn.accel as accel
from twinlearn import _backend
from accel_helpers import run_python, accel_state, toy  # noqa: F401 (fixtures)

X = np.random.default_rng(0).standard_normal((50, 3))


def test_new_names_are_exported():
    for name in ("accelerate_context", "gpu_available", "set_threshold"):
        assert name in accel.__all__ and callable(getattr(accel, name))


# -- accelerate_context -----------------------------------------------------------------
def test_accelerate_context_accelerates_inside_and_restores_after():
    accel.set_verbose(False)
    with accel.accelerate_context(device="cpu", threshold=0, verbose=True):
        assert accel.is_active() and accel.is_accelerated(sklearn.preprocessing.StandardScaler)
        est = StandardScaler().fit(X)
        assert accel.fitted_on(est) == "twinlearn:cpu"
        assert accel.get_verbose() and accel.get_config()["global_threshold"] == 0
    assert not accel.is_active() and sklearn.preprocessing.StandardScaler is StandardScaler
    assert not accel.is_accelerated(StandardScaler())
    assert accel.is_accelerated(est)  # made inside: stays accelerated
    assert not accel.get_verbose() and accel.get_config()["global_threshold"] is None
    assert accel.get_device() == "cpu"


def test_accelerate_context_restores_after_an_exception_and_nests_in_install():
    accel.set_device("auto")
    with pytest.raises(RuntimeError):
        with accel.accelerate_context(device="cpu"):
            raise RuntimeError
    assert accel.get_device() == "auto" and not accel.is_active()
    accel.reset_thresholds()  # the global threshold yields to an estimator's own
    accel.install()
    with accel.accelerate_context(device="cpu", threshold=10**9):
        assert accel.fitted_on(StandardScaler().fit(X)) == "scikit-learn"
    assert accel.is_installed() and accel.is_active()
    assert accel.get_config()["global_threshold"] is None
    accel.uninstall()


def test_accelerate_context_checks_its_arguments_before_changing_anything():
    with pytest.raises(ValueError, match="device"):
        with accel.accelerate_context(device="tpu"):
            pass
    with pytest.raises(ValueError, match="non-negative integer"):
        with accel.accelerate_context(threshold=-1):
            pass
    assert accel.get_device() == "cpu" and not accel.is_active()


# -- set_threshold(n) -------------------------------------------------------------------
def test_global_threshold_overrides_the_measured_ones_until_none():
    accel.reset_thresholds()
    measured = accel.threshold("PCA")
    accel.set_threshold(0)
    assert accel.threshold("PCA") == accel.threshold("StandardScaler") == (0, 0)
    assert accel.fitted_on(twinlearn.accelerate(PCA(2)).fit(X)) == "twinlearn:cpu"
    accel.set_threshold(1000)
    assert accel.fitted_on(twinlearn.accelerate(StandardScaler()).fit(X)) == "scikit-learn"
    # An estimator's own threshold is more specific and wins.
    accel.set_threshold("StandardScaler", 10)
    assert accel.threshold("StandardScaler") == (10, 0) and accel.threshold("PCA") == (1000, 0)
    accel.set_threshold(None)
    assert accel.threshold("PCA") == measured and accel.threshold("StandardScaler") == (10, 0)
    assert accel.get_config()["global_threshold"] is None
    accel.set_threshold(5)
    accel.reset_thresholds()  # clears both
    assert accel.threshold("PCA") == measured and accel.get_config()["global_threshold"] is None
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="non-negative integer"):
            accel.set_threshold(bad)
    with pytest.raises(TypeError, match="estimator name"):
        accel.set_threshold(10, 3)


# -- gpu_available ------------------------------------------------------------------------
def test_gpu_available_is_the_backend_s_answer():
    assert accel.gpu_available() is _backend.cuda_available()
    assert accel.get_config()["gpu_available"] is accel.gpu_available()


# -- TWINLEARN_ACCEL_* ----------------------------------------------------------------------
SHOW = ("import twinlearn.accel as a; c = a.get_config(); "
        "print(c['device'], c['global_threshold'], c['verbose'], c['installed'])")


def test_settings_from_the_environment():
    res = run_python(SHOW, env={"TWINLEARN_ACCEL_DEVICE": "cpu", "TWINLEARN_ACCEL_THRESHOLD": "0",
                                "TWINLEARN_ACCEL_VERBOSE": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["cpu", "0", "True", "False"]
    res = run_python(SHOW)
    assert res.stdout.split() == ["auto", "None", "False", "False"]


def test_bad_settings_in_the_environment_warn_and_are_ignored():
    res = run_python(SHOW, env={"TWINLEARN_ACCEL_DEVICE": "tpu", "TWINLEARN_ACCEL_THRESHOLD": "many"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["auto", "None", "False", "False"]
    assert "TWINLEARN_ACCEL_DEVICE" in res.stderr and "TWINLEARN_ACCEL_THRESHOLD" in res.stderr
