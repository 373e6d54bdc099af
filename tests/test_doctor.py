import json
import os
import subprocess
import sys

import pytest

import twinlearn
from twinlearn import _backend, cli

PYTHONPATH = os.pathsep.join([os.path.join(os.path.dirname(__file__), "..", "python")] + sys.path)


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
