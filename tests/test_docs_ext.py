"""The documentation's generated pages (docs/_ext): the API reference covers
every public name from the packages' __all__, the type-spec escape, the
benchmark plots page. These need no Sphinx: `make docs` builds the site."""

import importlib
import sys
import types
from pathlib import Path

import pytest

import twinlearn

DOCS = Path(__file__).resolve().parent.parent / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
apigen = importlib.import_module("apigen")
typespec = importlib.import_module("typespec")
benchplots = importlib.import_module("benchplots")
sys.path.pop(0)


def _documented(ent):
    return {f"{m}.{n}" for m, names in ent["modules"].items() for n, _ in names}


def test_every_public_subpackage_has_a_page():
    subs = apigen.public_subpackages()
    for name in ("cluster", "decomposition", "ensemble", "linear_model", "metrics", "naive_bayes",
                 "neighbors", "preprocessing", "linalg", "accel", "identity", "testing"):
        assert f"twinlearn.{name}" in subs
    assert not [s for s in subs if s.split(".")[-1].startswith("_")]
    assert list(apigen.api_entries()["modules"]) == ["twinlearn", *subs]


def test_nested_subpackages_and_exported_modules_have_pages():
    # twinlearn.nn exports only the subpackage optim, whose classes would
    # otherwise be in no page; optim exports the module lr_scheduler.
    subs = apigen.public_subpackages()
    assert {"twinlearn.nn", "twinlearn.nn.optim", "twinlearn.nn.optim.lr_scheduler"} <= set(subs)
    documented = _documented(apigen.api_entries())
    assert {"twinlearn.nn.optim.AdamW", "twinlearn.nn.optim.lr_scheduler.CosineAnnealingLR"} <= documented


def test_every_name_of_every_all_is_documented_once():
    ent = apigen.api_entries()
    documented = _documented(ent)
    for sub in apigen.public_subpackages():
        mod = importlib.import_module(sub)
        assert {f"{sub}.{n}" for n in mod.__all__ if not n.startswith("__")} <= documented
    # top-level names: documented at the top, or linked to the subpackage documenting the same object
    linked = set(ent["links"])
    assert linked <= documented
    for name in twinlearn.__all__:
        if name.startswith("__"):
            continue
        here = f"twinlearn.{name}" in documented
        there = [c for c in linked if c.rsplit(".", 1)[1] == name
                 and getattr(importlib.import_module(c.rsplit(".", 1)[0]), name) is getattr(twinlearn, name)]
        assert here != bool(there), name
    assert "twinlearn.show_versions" in documented and "twinlearn.cluster.KMeans" in linked


def test_a_name_added_to_an_all_appears_in_the_next_build(monkeypatch, tmp_path):
    # What other modules add to their __all__ reaches the reference without an edit here.
    import twinlearn.metrics as metrics

    def new_metric(y_true, y_pred):
        """A metric added later."""

    monkeypatch.setattr(metrics, "new_metric", new_metric, raising=False)
    monkeypatch.setattr(metrics, "__all__", [*metrics.__all__, "new_metric"])
    apigen.write_api(tmp_path)
    page = (tmp_path / "twinlearn.metrics.rst").read_text()
    assert "   new_metric" in page and ":template: function.rst" in page
    assert "twinlearn.metrics" in (tmp_path / "index.rst").read_text()


def test_a_public_subpackage_without_all_stops_the_build(monkeypatch):
    mod = types.ModuleType("twinlearn.undeclared")
    monkeypatch.setitem(sys.modules, "twinlearn.undeclared", mod)
    with pytest.raises(RuntimeError, match="without __all__"):
        apigen.exported("twinlearn.undeclared")
    mod.__all__ = ["missing"]
    with pytest.raises(RuntimeError, match="does not define"):
        apigen.exported("twinlearn.undeclared")


def test_write_api_removes_pages_of_names_gone(tmp_path):
    (tmp_path / "generated").mkdir(parents=True)
    stale = tmp_path / "generated" / "twinlearn.cluster.Gone.rst"
    stale.write_text("x")
    (tmp_path / "twinlearn.gone.rst").write_text("x")
    apigen.write_api(tmp_path)
    assert not stale.exists() and not (tmp_path / "twinlearn.gone.rst").exists()
    assert (tmp_path / "twinlearn.cluster.rst").exists()


def test_kinds():
    kinds = dict(apigen.exported("twinlearn.cluster"))
    assert kinds["KMeans"] == "class" and kinds["kmeans_plusplus"] == "function"
    assert dict(apigen.exported("twinlearn.identity"))["ENV"] == "data"


def test_sklearn_members_are_left_to_sklearn():
    est = twinlearn.StandardScaler
    assert apigen.skip_foreign_member(None, "method", "set_output", est.set_output, False, {}) is True
    assert apigen.skip_foreign_member(None, "method", "get_params", est.get_params, False, {}) is True
    assert apigen.skip_foreign_member(None, "method", "fit", est.fit, False, {}) is None


@pytest.mark.parametrize("line, expected", [
    ("    coef_ : ndarray of shape (n_features_in_,)", "    coef_ : ndarray of shape (n_features_in\\_,)"),
    ("    s : ndarray of shape (n_iter_ + 1,)", "    s : ndarray of shape (n_iter\\_ + 1,)"),
    ("    c : ndarray of shape (n_components_, n_features)", "    c : ndarray of shape (n_components\\_, n_features)"),
    ("    X : array-like of shape (n_samples, n_features)", "    X : array-like of shape (n_samples, n_features)"),
    ("    a, b : int", "    a, b : int"),
    ("    x : ``(n_features_in_,)``", "    x : ``(n_features_in_,)``"),  # already literal
    ("The shape (n_features_in_,) in prose", "The shape (n_features_in_,) in prose"),  # not a field line
])
def test_type_spec_escape(line, expected):
    lines = [line]
    typespec.escape_type_specs(lines)
    assert lines == [expected]


def test_bench_plots_page(tmp_path):
    docs, results = tmp_path / "docs", tmp_path / "bench" / "results"
    docs.mkdir()
    results.mkdir(parents=True)
    assert "No plots" in benchplots.plots_page(results, docs)
    for name in ("2026-12-01-a-speedup.png", "2026-12-05-b-speedup.png"):
        (results / name).write_bytes(b"")
    page = benchplots.plots_page(results, docs)
    assert page.index("2026-12-05-b") < page.index("2026-12-01-a")
    assert "](../bench/results/2026-12-05-b-speedup.png)" in page


def test_the_repository_plots_are_listed():
    pngs = sorted((DOCS.parent / "bench" / "results").glob("*.png"))
    page = benchplots.plots_page(DOCS.parent / "bench" / "results", DOCS)
    assert all(f"../bench/results/{p.name}" in page for p in pngs)
