"""The scikit-learn metric-test harness (tests/sklearn_metrics): its plan,
its known-failures format and its name swap."""

import sys
import types
from pathlib import Path

import pytest
import sklearn.metrics

HARNESS = Path(__file__).resolve().parents[1] / "sklearn_metrics"


@pytest.fixture
def harness(monkeypatch):
    monkeypatch.syspath_prepend(str(HARNESS))
    import metrics_plugin
    import run_metrics

    yield run_metrics, metrics_plugin
    for name in ("run_metrics", "metrics_plugin"):
        sys.modules.pop(name, None)


def test_plan_lists_every_module_file(harness):
    run, _ = harness
    plan = run.read_plan(ci=False)
    assert ("sklearn.metrics.tests.test_classification", "") in plan
    assert {m for m, _ in plan} >= {"sklearn.metrics.tests.test_regression", "sklearn.metrics.tests.test_ranking"}


def test_known_failure_files_parse(harness, tmp_path):
    _, plugin = harness
    plugin.read_known_failures(sorted(HARNESS.glob("known_failures_*.txt")))
    bad = tmp_path / "known_failures_x.txt"
    bad.write_text("sklearn.metrics.tests.test_x::test_y\n")
    with pytest.raises(ValueError, match="expected"):
        plugin.read_known_failures([bad])


def test_swap_replaces_only_imported_sklearn_metrics_functions(harness):
    _, plugin = harness
    import twinlearn.metrics as tm

    mod = types.ModuleType("fake_test_module")
    mod.accuracy_score = sklearn.metrics.accuracy_score
    mod.f1 = sklearn.metrics.f1_score  # imported under another name
    mod.silhouette_score = getattr(sklearn.metrics, "silhouette_score")  # not exported by this part: kept
    mod.other = len
    swapped = plugin.swap_module(mod)
    assert mod.accuracy_score is tm.accuracy_score and mod.f1 is tm.f1_score
    assert mod.other is len
    if "silhouette_score" not in tm.__all__:
        assert mod.silhouette_score is sklearn.metrics.silhouette_score
    assert sorted(swapped) == sorted(["accuracy_score", "f1"] + (["silhouette_score"]
                                                                if "silhouette_score" in tm.__all__ else []))
