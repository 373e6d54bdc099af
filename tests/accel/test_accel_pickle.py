"""An accelerated estimator pickles as the plain scikit-learn estimator."""

from __future__ import annotations

import io
import pickle
import textwrap

import joblib
import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.pipeline import make_pipeline
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

import twinlearn
import twinlearn.accel as accel
from accel_helpers import run_python, accel_state, toy  # noqa: F401 (fixtures)

# A fresh interpreter in which twinlearn cannot be imported at all.
LOAD_WITHOUT_TWINLEARN = textwrap.dedent("""
    import sys, pickle, importlib.abc

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "twinlearn" or name.startswith(("twinlearn.", "_twinlearn")):
                raise ImportError(f"{name} is blocked")

    sys.meta_path.insert(0, Block())
    try:
        import twinlearn
        print("twinlearn importable")
    except ImportError:
        pass
    import numpy as np
    from sklearn.preprocessing import StandardScaler
    with open(sys.argv[1], "rb") as f:
        obj = pickle.load(f) if sys.argv[2] == "pickle" else __import__("joblib").load(f)
    scaler = obj if isinstance(obj, StandardScaler) else obj[0]
    print(type(scaler) is StandardScaler, type(scaler).__module__)
    X = np.arange(12.0).reshape(4, 3)
    np.save(sys.argv[3], obj.transform(X) if hasattr(obj, "transform") else obj.predict(X))
    print(sorted(m for m in sys.modules if "twinlearn" in m))
""")


def _fitted():
    X = np.random.default_rng(0).standard_normal((50, 3)) * 2 + 1
    est = twinlearn.accelerate(StandardScaler()).fit(X)
    assert accel.fitted_on(est) == "twinlearn:cpu"
    return est


@pytest.mark.parametrize("how", ["pickle", "joblib"])
def test_loads_as_plain_scikit_learn_without_twinlearn(tmp_path, how):
    est = _fitted()
    path = tmp_path / "est.bin"
    with open(path, "wb") as f:
        pickle.dump(est, f) if how == "pickle" else joblib.dump(est, f)
    assert b"twinlearn" not in path.read_bytes()
    out = tmp_path / "out.npy"
    res = run_python(LOAD_WITHOUT_TWINLEARN, args=[str(path), how, str(out)])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "twinlearn importable" not in lines  # separating arm: the blocker works
    assert lines == ["True sklearn.preprocessing._data", "[]"]
    X = np.arange(12.0).reshape(4, 3)
    assert_allclose(np.load(out), est.transform(X), rtol=1e-12)


def test_pipeline_with_accelerated_steps_loads_without_twinlearn(tmp_path):
    X = np.random.default_rng(1).standard_normal((40, 3))
    pipe = twinlearn.accelerate(make_pipeline(StandardScaler(), Ridge())).fit(X, X[:, 0])
    path = tmp_path / "pipe.pkl"
    path.write_bytes(pickle.dumps(pipe))
    out = tmp_path / "out.npy"
    res = run_python(LOAD_WITHOUT_TWINLEARN, args=[str(path), "pickle", str(out)])
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["True sklearn.preprocessing._data", "[]"]
    assert_allclose(np.load(out), pipe.predict(np.arange(12.0).reshape(4, 3)), rtol=1e-12)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_protocol_loads_plain_here_and_accelerated_when_installed(protocol):
    est = _fitted()
    blob = pickle.dumps(est, protocol=protocol)
    plain = pickle.loads(blob)
    assert type(plain) is StandardScaler and not accel.is_accelerated(plain)
    assert "_twinlearn" not in plain.__dict__
    assert_allclose(plain.scale_, est.scale_)
    with accel.enabled():
        blob2 = pickle.dumps(est, protocol=protocol)  # also while the module attribute is patched
        again = pickle.loads(blob2)
        assert accel.is_accelerated(again)
        assert accel.fitted_on(again) == "scikit-learn"  # the twinlearn state is not pickled
    assert_allclose(again.transform(np.ones((2, 3))), est.transform(np.ones((2, 3))), rtol=1e-12)


def test_joblib_in_memory_round_trip():
    est = _fitted()
    buf = io.BytesIO()
    joblib.dump(est, buf)
    buf.seek(0)
    assert type(joblib.load(buf)) is StandardScaler
