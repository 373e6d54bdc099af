import os
import subprocess
import sys

import numpy as np
import pytest

from twinlearn import identity

PYTHONPATH = os.pathsep.join([os.path.join(os.path.dirname(__file__), "..", "python")] + sys.path)


def trace_run(path, code):
    env = dict(os.environ, PYTHONPATH=PYTHONPATH, TWINLEARN_IDENTITY_TRACE=str(path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


SCALER = """
import numpy as np, twinlearn as t
X = np.random.default_rng(0).normal(size=(3000, 4)) * {scale}
s = t.StandardScaler(device="{device}").fit(X)
s.transform(X)
"""


def test_standard_scaler_records_its_stages(tmp_path):
    p = tmp_path / "a.trace"
    trace_run(p, SCALER.format(scale=1.0, device="cpu"))
    rows = identity.read(p)
    tags = [r["tag"] for r in rows]
    assert tags == [
        "StandardScaler.partial_fit.column_stats",
        "StandardScaler.scale_",
        "StandardScaler.mean_",
        "StandardScaler.transform",
    ]
    assert rows[-1]["count"] == 3000 * 4 and rows[-1]["dtype"] == "float64"


def test_diff_agrees_on_same_run_and_names_first_difference(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    trace_run(a, SCALER.format(scale=1.0, device="cpu"))
    trace_run(b, SCALER.format(scale=1.0, device="cpu"))
    trace_run(c, SCALER.format(scale=1.0000001, device="cpu"))
    assert identity.diff(a, b) is None
    d = identity.diff(a, c)
    assert d["stage"] == 0 and d["tag"] == "StandardScaler.partial_fit.column_stats"
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    r = subprocess.run([sys.executable, "-m", "twinlearn.identity", "diff", str(a), str(c)], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 1 and "first difference at stage 0" in r.stdout
    r = subprocess.run([sys.executable, "-m", "twinlearn.identity", "diff", str(a), str(b)], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0 and "agree" in r.stdout


def test_classify_kinds():
    a = np.array([1.0, 0.0, 5e-324, np.nan, 2.0, -3.0], dtype=np.float64)
    b = np.array([np.nextafter(1.0, 2.0), -0.0, 0.0, 1.0, 2.0, 3.0])
    c = identity.classify(a, b)
    assert c["n_diff"] == 5
    assert c["categories"] == {"nan": 1, "sign_of_zero": 1, "denormal_vs_zero": 1, "sign": 1}
    assert c["max_ulp"] >= 1
    f = np.array([1.0], np.float32)
    g = np.array([np.nextafter(np.nextafter(np.float32(1), np.float32(2)), np.float32(2))], np.float32)
    assert identity.classify(f, g)["max_ulp"] == 2
    assert identity.classify(f, f.copy())["kind"] == "same"


@pytest.mark.gpu
def test_cpu_and_gpu_traces_agree(tmp_path):
    a, b = tmp_path / "cpu", tmp_path / "gpu"
    trace_run(a, SCALER.format(scale=1e5, device="cpu"))
    trace_run(b, SCALER.format(scale=1e5, device="cuda"))
    assert identity.diff(a, b) is None
