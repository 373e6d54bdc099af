"""python -m twinlearn.accel: errors, the end-of-run summary, --overhead."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

import twinlearn.accel as accel
from twinlearn import _backend
from accel_helpers import PYTHON_DIR, run_python, accel_state, toy  # noqa: F401 (fixtures)


# -- what cannot run --------------------------------------------------------------------
def test_missing_script_is_one_line_and_status_2(tmp_path):
    res = run_python(args=["-m", "twinlearn.accel", "missing_script.py"], cwd=tmp_path)
    assert res.returncode == 2
    path = tmp_path / "missing_script.py"
    assert res.stderr == (f"python -m twinlearn.accel: can't open file {str(path)!r}: "
                          "[Errno 2] No such file or directory\n")


def test_missing_module_is_one_line_and_status_1(tmp_path):
    res = run_python(args=["-m", "twinlearn.accel", "-m", "no_such_module_xyz"], cwd=tmp_path)
    assert (res.returncode, res.stderr) == (1, "python -m twinlearn.accel: No module named no_such_module_xyz\n")
    res = run_python(args=["-m", "twinlearn.accel", "-m", "no_such_pkg_xyz.job"], cwd=tmp_path)
    assert (res.returncode, res.stderr) == (1, "python -m twinlearn.accel: Error while finding module "
                                               "specification for 'no_such_pkg_xyz.job' (ModuleNotFoundError: "
                                               "No module named 'no_such_pkg_xyz')\n")
    (tmp_path / "pkg_xyz").mkdir()
    (tmp_path / "pkg_xyz" / "__init__.py").write_text("")
    res = run_python(args=["-m", "twinlearn.accel", "-m", "pkg_xyz"], cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr == ("python -m twinlearn.accel: No module named pkg_xyz.__main__; "
                          "'pkg_xyz' is a package and cannot be directly executed\n")


def test_an_import_error_inside_the_script_is_its_own(tmp_path):
    (tmp_path / "job.py").write_text("import no_such_module_xyz\n")
    res = run_python(args=["-m", "twinlearn.accel", "job.py"], cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" in res.stderr and "ModuleNotFoundError" in res.stderr


# -- the summary when nothing ran on twinlearn --------------------------------------------
FIT_SMALL = textwrap.dedent("""
    import sys
    import numpy as np
    from sklearn.preprocessing import StandardScaler
    StandardScaler().fit(np.ones((int(sys.argv[1]), 3)))
    StandardScaler().fit(np.ones((int(sys.argv[1]), 3)))
""")


def _summary_lines(stderr):
    return [line for line in stderr.splitlines() if "nothing ran on twinlearn" in line]


def test_cli_says_when_nothing_ran_on_twinlearn(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(FIT_SMALL)
    accel.reset_thresholds()  # the defaults, as in the fresh interpreter
    rows = accel.threshold("StandardScaler")[0]
    res = run_python(args=["-m", "twinlearn.accel", "--device", "cpu", str(script), "10"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert _summary_lines(res.stderr) == [
        "twinlearn.accel: nothing ran on twinlearn: 2 calls of accelerated estimators ran on scikit-learn; "
        f"main reason (2 calls): StandardScaler.fit: below threshold {rows} rows (n_samples=10); "
        "twinlearn.accel.set_threshold(0) sends every size to twinlearn"
    ]
    assert res.stderr.count("\n") == 1  # nothing else
    # Something ran on twinlearn: no summary.
    res = run_python(args=["-m", "twinlearn.accel", "--device", "cpu", str(script), str(rows)], cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == ""
    # No accelerated estimator called at all.
    script.write_text("print('hello')\n")
    res = run_python(args=["-m", "twinlearn.accel", str(script)], cwd=tmp_path)
    assert res.stderr == ("twinlearn.accel: nothing ran on twinlearn: no estimator it accelerates was called "
                          "(twinlearn.accel.supported_estimators() lists them)\n")


WITH_WORKERS = textwrap.dedent("""
    import sys
    import numpy as np
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    cross_val_score(make_pipeline(StandardScaler(), Ridge()), np.ones((30, 2)), np.ones(30), cv=2, n_jobs=2)
    if sys.argv[1:] == ["here"]:
        StandardScaler().fit(np.ones((10, 2)))
""")


def test_cli_summary_with_worker_processes(tmp_path):
    # What ran in workers is not seen here: the summary speaks of this process only.
    script = tmp_path / "job.py"
    script.write_text(WITH_WORKERS)
    res = run_python(args=["-m", "twinlearn.accel", "--device", "cpu", "--threshold", "1000", str(script), "here"],
                     cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (line,) = _summary_lines(res.stderr)
    assert line.startswith("twinlearn.accel: nothing ran on twinlearn: 1 call of accelerated estimators ran on "
                           "scikit-learn (accelerated estimators sent to worker processes are not counted here); "
                           "main reason (1 call): StandardScaler.fit: below threshold 1000 rows (n_samples=10)")
    res = run_python(args=["-m", "twinlearn.accel", "--device", "cpu", str(script)], cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == ""


@pytest.mark.skipif(_backend.cuda_available(), reason="a GPU is usable here")
def test_cli_summary_names_the_missing_gpu(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(FIT_SMALL)
    res = run_python(args=["-m", "twinlearn.accel", str(script), "100000"], cwd=tmp_path)
    (line,) = _summary_lines(res.stderr)
    assert "main reason (2 calls): StandardScaler.fit: no usable GPU (" in line
    assert line.endswith("twinlearn.accel.set_device('cpu') runs twinlearn's CPU backend")


def test_verbose_process_says_it_at_exit_a_quiet_one_does_not(tmp_path):
    code = "import sys, twinlearn.accel as a; a.set_device('cpu'); a.set_verbose(sys.argv[2] == 'v'); a.install()\n" + \
        FIT_SMALL.replace("sys.argv[1]", "10")
    res = run_python(code, args=["x", "v"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert len(_summary_lines(res.stderr)) == 1 and lines[-1] == _summary_lines(res.stderr)[0]
    assert lines[-1].startswith("[twinlearn.accel] nothing ran on twinlearn: 2 calls")
    res = run_python(code, args=["x", "q"], cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == ""


# -- --overhead -------------------------------------------------------------------------------
def test_overhead_prints_each_estimator_as_it_goes_within_its_budget():
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    cmd = [sys.executable, "-m", "twinlearn.accel", "--overhead", "--only", "StandardScaler,PCA",
           "--budget-seconds", "6"]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        header = proc.stdout.readline()
        first = proc.stdout.readline()
        t_first = time.monotonic()
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    t_end = time.monotonic()
    assert proc.returncode == 0, err
    assert header.startswith("estimator.method") and first.startswith("StandardScaler.")
    rows = [first] + out.splitlines()
    assert {r.split(".")[0] for r in rows if r.strip() and not r.startswith("total")} == {"StandardScaler", "PCA"}
    assert t_end - t_first > 1.0, "the first estimator's rows came only at the end"
    assert t_end - t0 < 60


def test_measure_overhead_reports_progress_and_keeps_to_its_budget():
    seen = []
    t0 = time.monotonic()
    res = accel.measure_overhead(n_samples=64, n_features=4, repeats=10**6, budget_s=2.0,
                                 estimators=["StandardScaler", "Ridge"], progress=lambda n, r: seen.append(n))
    assert time.monotonic() - t0 < 20
    assert seen == list(res) and set(seen) == {"StandardScaler", "Ridge"}
