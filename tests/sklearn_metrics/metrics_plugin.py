"""pytest plugin: scikit-learn's own metric tests calling twinlearn.metrics.

Loaded with ``-p metrics_plugin`` (this folder on ``sys.path``; see run_metrics.py).
For every scikit-learn test module collected, each name the module imported
from :mod:`sklearn.metrics` that :mod:`twinlearn.metrics` also exports
(``__all__``) is replaced, in the module's globals, by twinlearn's function
of that name; so are such functions given as ``pytest.mark.parametrize``
values. Functions reached otherwise (``metrics.f``, dictionaries built at
import, scikit-learn's internals and scorers) stay scikit-learn's.

- Numeric mode: ``TWINLEARN_METRICS_MODE`` (default ``identical``, so
  twinlearn's own path runs rather than scikit-learn's computation, which
  serves host input in the other modes).
- ``--known-failures PATH`` (repeatable; default every
  ``known_failures_*.txt`` here) lists tests expected to fail, one per line
  as ``<module>::<test name> | <reason>``; they are marked
  ``xfail(strict=False)``.
- The terminal summary gives the pass rate per module and how many names
  were swapped.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest
import sklearn.metrics

import twinlearn
import twinlearn.metrics as tl_metrics

HERE = Path(__file__).resolve().parent
MODE = os.environ.get("TWINLEARN_METRICS_MODE", "identical")
SWAPPABLE = {name: getattr(tl_metrics, name) for name in tl_metrics.__all__
             if callable(getattr(sklearn.metrics, name, None))}
_ORIGINALS = {id(getattr(sklearn.metrics, name)): name for name in SWAPPABLE}


def read_known_failures(paths) -> dict[str, str]:
    known = {}
    for path in paths:
        for n, line in enumerate(Path(path).read_text().splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            test_id, sep, reason = line.partition(" | ")
            if not sep or not reason.strip() or "::" not in test_id:
                raise ValueError(f"{path}:{n}: expected '<module>::<test> | <reason>', got {line!r}")
            known[test_id.strip()] = reason.strip()
    return known


def test_key(item) -> str:
    """``<module>::<test>``, independent of the rootdir."""
    mod = item.module.__name__ if getattr(item, "module", None) is not None else "?"
    return mod + "::" + "::".join(item.nodeid.split("::")[1:])


def swap_module(module) -> list[str]:
    """Replace the module's sklearn.metrics functions by twinlearn's; the names swapped."""
    swapped = []
    for name, value in list(vars(module).items()):
        target = _ORIGINALS.get(id(value))
        if target is not None and value is getattr(sklearn.metrics, target):
            setattr(module, name, SWAPPABLE[target])
            swapped.append(name)
    return swapped


def _swap_value(v):
    target = _ORIGINALS.get(id(v))
    return SWAPPABLE[target] if target is not None and v is getattr(sklearn.metrics, target) else v


_known: dict[str, str] = {}
_swapped: dict[str, list[str]] = {}
_outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
_item_module: dict[str, str] = {}


def pytest_addoption(parser):
    parser.addoption("--known-failures", action="append", default=None,
                     help="a known-failures file (default: every known_failures_*.txt beside this plugin)")


def pytest_configure(config):
    twinlearn.set_numeric_mode(MODE)
    paths = config.getoption("--known-failures") or sorted(HERE.glob("known_failures_*.txt"))
    _known.clear()
    _known.update(read_known_failures(paths))


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__ not in _swapped:
            _swapped[module.__name__] = swap_module(module)
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            for k, v in list(callspec.params.items()):
                callspec.params[k] = _swap_value(v)
        key = test_key(item)
        _item_module[item.nodeid] = key.split("::", 1)[0]
        if key in _known:
            item.add_marker(pytest.mark.xfail(reason=f"known failure: {_known[key]}", strict=False))


def pytest_runtest_logreport(report):
    mod = _item_module.get(report.nodeid, "?")
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if hasattr(report, "wasxfail"):
            if report.skipped:
                outcome = "known" if report.wasxfail.startswith("known failure:") else "xfailed"
            else:  # an expected failure that passed
                outcome = "known_passed" if report.wasxfail.startswith("known failure:") else "passed"
        else:
            outcome = report.outcome
        if report.when == "setup" and report.outcome == "failed":
            outcome = "error"
        _outcomes[mod][outcome] += 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tr = terminalreporter
    tr.section(f"scikit-learn metric tests on twinlearn.metrics (numeric_mode={MODE!r})")
    for mod in sorted(_outcomes):
        o = _outcomes[mod]
        ran = o["passed"] + o["failed"] + o["error"] + o["known"] + o["known_passed"]
        rate = 100.0 * (o["passed"] + o["known_passed"]) / ran if ran else 100.0
        tr.write_line(
            f"{mod}: pass rate {rate:.1f}% ({o['passed'] + o['known_passed']} passed, {o['failed']} failed, "
            f"{o['error']} errors, {o['known']} known failures, {o['known_passed']} known failures passing, "
            f"{o['xfailed']} xfailed by scikit-learn, {o['skipped']} skipped)"
        )
    for mod, names in sorted(_swapped.items()):
        tr.write_line(f"{mod}: {len(names)} names swapped for twinlearn.metrics ({', '.join(sorted(names))})")
