import json
import os
import subprocess
import sys

import pytest

import twinlearn
from twinlearn import _backend, cli

# The child imports the twinlearn this process imported (the checkout's, or an installed wheel's).
PYTHONPATH = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(twinlearn.__file__)))] + sys.path)


def run_doctor(*args):
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    return subprocess.run([sys.executable, "-m", "twinlearn", "doctor", *args], capture_output=True, text=True,
                          env=env)


def test_doctor_text_exits_zero_and_reports():
    r = run_doctor()
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"twinlearn {twinlearn.__version__} " in r.stdout
    assert "self-check cpu: passed" in r.stdout
    assert "default numeric mode: deterministic" in r.stdout
    assert "status: OK" in r.stdout


def test_doctor_json():
    r = run_doctor("--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["ok"] is True
    assert rep["backends"]["cpu"] is True
    assert rep["selfcheck"]["cpu"]["ok"] is True
    for key in ("python", "platform", "cuda_arch", "cuda_runtime", "cuda_driver", "gpus", "environment"):
        assert key in rep


def test_doctor_lists_environment_variables():
    env = dict(os.environ, PYTHONPATH=PYTHONPATH, TWINLEARN_NUMERIC_MODE="identical")
    r = subprocess.run([sys.executable, "-m", "twinlearn", "doctor"], capture_output=True, text=True, env=env)
    assert "TWINLEARN_NUMERIC_MODE=identical" in r.stdout
    assert "default numeric mode: identical" in r.stdout


def test_doctor_without_gpu_says_why():
    if _backend.cuda_available():
        pytest.skip("a GPU is usable here")
    rep = cli.doctor_report()
    assert rep["ok"] and rep["gpus"] == []
    assert rep["gpu_unusable_reason"]


def test_doctor_fails_when_a_backend_is_broken(monkeypatch, capsys):
    def broken(mod, device):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(cli, "_selfcheck", broken)
    assert cli.main(["doctor"]) == 1
    assert "FAILED: RuntimeError: simulated failure" in capsys.readouterr().out


def test_doctor_fails_when_gpu_bits_differ(monkeypatch):
    if not _backend.cuda_available():
        pytest.skip("needs a GPU to have a second backend")
    real = cli._selfcheck
    monkeypatch.setattr(cli, "_selfcheck", lambda mod, dev: real(mod, dev) + ("x" if dev != "cpu" else ""))
    rep = cli.doctor_report()
    assert not rep["ok"]


@pytest.mark.gpu
def test_doctor_shows_gpu_and_identity():
    r = run_doctor()
    assert r.returncode == 0, r.stdout
    assert "GPU 0:" in r.stdout
    assert "self-check cuda:0: passed (bit-identical to the CPU backend)" in r.stdout


def test_console_script_entry_point_is_declared():
    import tomllib

    with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts["twinlearn"] == "twinlearn.cli:main"


def _fake_gpu(monkeypatch, cc, arch):
    """doctor_report over one simulated GPU of capability `cc` and a build for `arch`."""
    from twinlearn import _info

    facts = dict(_info.versions(), cuda_compiled=True, cuda_arch=arch,
                 gpus=[{"id": 0, "name": "simulated", "compute_capability": cc, "multiprocessors": 1,
                        "total_memory": 2**30, "free_memory": 2**30}])
    monkeypatch.setattr(_info, "versions", lambda: facts)
    monkeypatch.setattr(_backend, "cuda", lambda: _backend.core())
    monkeypatch.setattr(cli, "_selfcheck", lambda mod, dev: "same-bits")


def test_doctor_fails_for_a_gpu_the_build_has_no_code_for(monkeypatch, capsys):
    _fake_gpu(monkeypatch, (7, 5), "90")
    rep = cli.doctor_report()
    assert not rep["ok"]
    assert rep["gpus"][0]["kernels"] is None
    assert "no device code for compute capability 7.5" in rep["selfcheck"]["cuda:0"]["error"]


def test_doctor_names_the_code_a_gpu_runs(monkeypatch, capsys):
    _fake_gpu(monkeypatch, (8, 9), "75-real;80-real;90")
    rep = cli.doctor_report()
    assert rep["ok"], rep["selfcheck"]
    assert rep["gpus"][0]["kernels"] == "sm_80 machine code"
    cli.print_doctor(rep)
    out = capsys.readouterr().out
    assert "runs sm_80 machine code" in out
    assert "sm_75, sm_80, sm_90 machine code; compute_90 PTX" in out


def test_doctor_says_where_twinlearn_was_imported_from():
    rep = cli.doctor_report()
    assert rep["location"] == os.path.dirname(os.path.abspath(twinlearn.__file__))
    # A wheel's build writes twinlearn/_build_version.py; a checkout has none.
    expected = "wheel" if os.path.exists(os.path.join(rep["location"], "_build_version.py")) else "source"
    assert rep["install"] == expected
