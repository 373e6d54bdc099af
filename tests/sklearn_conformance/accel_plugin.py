"""pytest plugin: scikit-learn's own test suite with the twinlearn accelerator installed.

Loaded with ``-p accel_plugin`` (this folder on ``sys.path``; see run.py); its
``pytest_configure`` runs before pytest collects anything from scikit-learn,
so the accelerator is installed before the scikit-learn modules under test
are imported, and every registered estimator they create is accelerated.

- Device: ``TWINLEARN_ACCEL_DEVICE`` (default: ``cuda:0`` when a GPU is
  usable, else ``cpu``, twinlearn's CPU backend), so twinlearn really runs.
- Thresholds are 0: twinlearn serves every call it can, whatever the size.
- ``known_failures.txt`` (``--known-failures PATH``) lists tests expected to fail, one per line as
  ``<module>::<test name> | <reason>``. They are strict xfails: a listed test
  that passes fails the run. With ``--known-failures-complete`` (full runs), a
  listed test of a module in the run that was not collected fails it too.
- The terminal summary gives the pass rate per scikit-learn test module and
  how many routed calls ran on twinlearn and on scikit-learn (with reasons).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

import twinlearn.accel as accel
from twinlearn import _backend

HERE = Path(__file__).resolve().parent
KNOWN_FAILURES_FILE = HERE / "known_failures.txt"

DEVICE = os.environ.get("TWINLEARN_ACCEL_DEVICE") or ("cuda:0" if _backend.cuda_available() else "cpu")


def read_known_failures(path=KNOWN_FAILURES_FILE) -> dict[str, str]:
    known = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        test_id, sep, reason = line.partition(" | ")
        if not sep or not reason.strip() or "::" not in test_id:
            raise ValueError(f"{path}:{n}: expected '<module>::<test> | <reason>', got {line!r}")
        known[test_id.strip()] = reason.strip()
    return known


def test_key(item) -> str:
    """``<module>::<test>`` (``<module>::<Class>::<test>``), independent of the rootdir."""
    mod = item.module.__name__ if getattr(item, "module", None) is not None else "?"
    return mod + "::" + "::".join(item.nodeid.split("::")[1:])


_known: dict[str, str] = {}
_selected_known: set[str] = set()
_modules_run: set[str] = set()
_outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
_item_module: dict[str, str] = {}


def pytest_addoption(parser):
    parser.addoption(
        "--known-failures-complete",
        action="store_true",
        help="fail when a known failure of a module in the run is not collected",
    )
    parser.addoption(
        "--known-failures",
        default=str(KNOWN_FAILURES_FILE),
        help="the known-failures file (default: known_failures.txt beside this plugin)",
    )


def pytest_configure(config):
    # Here rather than at import: importing this file (a doctest run over
    # tests/) must not install anything.
    accel.install()
    accel.set_device(DEVICE)
    accel.set_threshold("*", 0, 0)
    accel.set_profiling(True)
    _known.clear()
    _known.update(read_known_failures(Path(config.getoption("--known-failures"))))


def pytest_collection_modifyitems(config, items):
    for item in items:
        key = test_key(item)
        mod = key.split("::", 1)[0]
        _item_module[item.nodeid] = mod
        _modules_run.add(mod)
        if key in _known:
            _selected_known.add(key)
            item.add_marker(pytest.mark.xfail(reason=f"known failure: {_known[key]}", strict=True))


def pytest_runtest_logreport(report):
    mod = _item_module.get(report.nodeid, "?")
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if hasattr(report, "wasxfail"):
            if report.skipped:  # failed as expected: one of ours, or one scikit-learn marks itself
                outcome = "known" if report.wasxfail.startswith("known failure:") else "xfailed"
            else:  # scikit-learn's own non-strict xfail that passed: a pass
                outcome = "passed"
        elif report.failed and str(report.longrepr).startswith("[XPASS(strict)]"):
            outcome = "xpassed"  # a known failure that passed: reported as a failure
        else:
            outcome = report.outcome
        if report.when == "setup" and report.outcome == "failed":
            outcome = "error"
        _outcomes[mod][outcome] += 1


def _stale_known():
    return sorted(k for k in _known if k.split("::", 1)[0] in _modules_run and k not in _selected_known)


def pytest_sessionfinish(session, exitstatus):
    if session.config.getoption("--known-failures-complete") and _stale_known():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tr = terminalreporter
    tr.section(f"twinlearn.accel conformance (device {DEVICE}, thresholds 0)")
    for mod in sorted(_outcomes):
        o = _outcomes[mod]
        # Listed known failures count against the rate; scikit-learn's own
        # expected failures do not (they fail without the accelerator too).
        ran = o["passed"] + o["failed"] + o["error"] + o["known"] + o["xpassed"]
        rate = 100.0 * o["passed"] / ran if ran else 100.0
        tr.write_line(
            f"{mod}: pass rate {rate:.1f}% ({o['passed']} passed, {o['failed']} failed, "
            f"{o['error']} errors, {o['known']} known failures, {o['xpassed']} known failures passing, "
            f"{o['xfailed']} xfailed by scikit-learn, {o['skipped']} skipped)"
        )
    prof = accel.get_profile()
    calls = defaultdict(int)
    for c in prof["calls"]:
        side = "twinlearn" if c["backend"].startswith("twinlearn") else "scikit-learn"
        calls[(c["estimator"], side)] += c["calls"]
    for (est, side), n in sorted(calls.items()):
        tr.write_line(f"routed {est} calls on {side}: {n}")
    reasons = defaultdict(int)
    for f in prof["fallbacks"]:
        reasons[(f["estimator"], f["reason"])] += f["calls"]
    if reasons:
        tr.write_line("scikit-learn fallbacks by reason: " + ", ".join(
            f"{e}/{r} x{n}" for (e, r), n in sorted(reasons.items())))
    stale = _stale_known()
    if stale and config.getoption("--known-failures-complete"):
        tr.write_line("known failures not collected (remove them from known_failures.txt):", red=True)
        for k in stale:
            tr.write_line(f"  {k}", red=True)
