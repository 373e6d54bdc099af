"""Fixtures and helpers shared by the accelerator tests (imported by each
test module: a second conftest.py would clash with tests/conftest.py under
``--doctest-modules``).

``accel_state`` (autouse): every test starts with the accelerator on
twinlearn's CPU backend (``set_device("cpu")``) with thresholds 0, so
twinlearn really runs here without a GPU, quiet, not installed; the settings
are restored afterwards. ``toy``: the accel_toy entries registered.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import twinlearn.accel as accel
from twinlearn.accel import _config, _estimators, _patch, _registry

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"


@pytest.fixture(autouse=True)
def accel_state():
    old_device = _config.get_device()
    old_overrides = dict(_config._overrides)
    old_global = _config.global_threshold()
    accel.set_device("cpu")
    accel.set_threshold("*", 0, 0)
    yield
    accel.set_verbose(False)
    accel.set_profiling(False)
    accel.reset_profile()
    accel.uninstall()
    assert not _patch.is_active(), "a test left the accelerator active"
    _config.set_device(old_device)
    _config._overrides.clear()
    _config._overrides.update(old_overrides)
    _config.set_threshold(old_global)


@pytest.fixture
def toy():
    """The accel_toy module with its entries registered for the test."""
    import accel_toy

    added = (accel_toy.TOY_SCALER_ENTRY, accel_toy.TOY_CLASSIFIER_ENTRY)
    saved = _estimators.ENTRIES
    _estimators.ENTRIES = saved + added
    accel_toy.CALLS.clear()
    try:
        yield accel_toy
    finally:
        _estimators.ENTRIES = saved
        for e in added:
            _registry._resolved.pop(e.sklearn, None)
            _registry._skipped.pop(e.sklearn, None)
            _config._overrides.pop(e.name, None)


def run_python(code=None, args=(), env=None, cwd=None, timeout=120):
    """Run a fresh interpreter with the source tree's twinlearn importable."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TWINLEARN_ACCEL")}
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(PYTHON_DIR), str(Path(__file__).resolve().parent)]
        + ([full_env["PYTHONPATH"]] if full_env.get("PYTHONPATH") else [])
    )
    full_env.update(env or {})
    cmd = [sys.executable] + (["-c", code] if code is not None else []) + list(args)
    return subprocess.run(cmd, env=full_env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
