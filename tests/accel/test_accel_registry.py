"""The registry: declarative entries, skipped entries, parameter rules, the support matrix."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
import sklearn

import twinlearn.accel as accel
from twinlearn.accel import _entry, _estimators, _registry
from twinlearn.accel._entry import ANY, Entry, one_of, where
from accel_helpers import REPO, accel_state, toy  # noqa: F401 (fixtures)


def test_standard_scaler_is_available():
    assert "sklearn.preprocessing.StandardScaler" in accel.supported_estimators()
    rs = _registry.lookup("StandardScaler")
    assert rs is _registry.lookup("sklearn.preprocessing.StandardScaler")
    from sklearn.preprocessing import StandardScaler
    import twinlearn

    assert rs.sklearn_cls is StandardScaler and rs.twinlearn_cls is twinlearn.StandardScaler
    assert rs.param_names == ("copy", "with_mean", "with_std")
    assert set(rs.attributes) >= {"mean_", "scale_", "n_features_in_", "feature_names_in_"}
    with pytest.raises(ValueError, match="no accelerated estimator named 'Nope'"):
        _registry.lookup("Nope")


@pytest.mark.parametrize("entry", _estimators.ENTRIES, ids=lambda e: e.name)
def test_entries_are_consistent(entry):
    rs = _registry.resolve(entry)
    assert rs is not None, _registry.skipped()
    # Every declared parameter exists in scikit-learn (a typo would serve nothing).
    assert set(entry.params) <= set(rs.param_names)
    # Every routed method exists on both sides.
    assert set(rs.methods) == set(entry.methods)
    # A twinlearn fit with the example parameters (the defaults unless
    # twinlearn does not serve them) produces every mirrored attribute.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = None if entry.task is None else (X[:, 0] > 0).astype(int)
    tl = rs.twinlearn_cls(**rs.translate(rs.example_params()))
    tl.set_params(device="cpu")
    tl.fit(X) if y is None else tl.fit(X, y)
    missing = [a for a in entry.attributes if not hasattr(tl, a)]
    assert not missing
    # The example parameters are served; they are the defaults unless the
    # defaults are not served (for some sizes of data: check_rows).
    assert rs.unsupported_param(rs.example_params()) is None
    if entry.example:
        defaults = dict(rs.defaults)
        assert rs.unsupported_param(defaults) is not None or (
            entry.check_rows is not None and entry.check_rows(defaults, 10**9) is not None)
    assert entry.conformance and entry.conformance_k


def test_missing_twinlearn_class_is_skipped(toy):
    saved = _estimators.ENTRIES
    _estimators.ENTRIES = saved + (toy.MISSING_ENTRY,)
    try:
        assert _registry.resolve(toy.MISSING_ENTRY) is None
        assert "sklearn.preprocessing.QuantileTransformer" not in accel.supported_estimators()
        reason = _registry.skipped()["sklearn.preprocessing.QuantileTransformer"]
        assert "twinlearn.preprocessing.NoSuchScaler" in reason
        assert "`sklearn.preprocessing.QuantileTransformer`: twinlearn class" in accel.support_matrix()
        from sklearn.preprocessing import QuantileTransformer

        assert accel.accelerate(QuantileTransformer) is QuantileTransformer
        with accel.enabled():
            assert not accel.is_accelerated(QuantileTransformer())
        with pytest.raises(ValueError, match="not available"):
            accel.set_threshold("QuantileTransformer", 5)
    finally:
        _estimators.ENTRIES = saved
        _registry._resolved.pop(toy.MISSING_ENTRY.sklearn, None)
        _registry._skipped.pop(toy.MISSING_ENTRY.sklearn, None)


def test_param_support_rules():
    assert ANY(object()) and ANY.doc == "all values"
    r = one_of(True, "auto", None)
    assert r(True) and r("auto") and r(None)
    assert not r(1) and not r(1.0) and not r("x")  # True is not 1
    assert r.doc == "`True`, `'auto'`, `None`"
    assert one_of(np.float64(2.0))(np.float64(2.0))
    w = where(lambda v: v > 0, "positive")
    assert w(3) and not w(-1) and w.doc == "positive"


def test_unsupported_param_reasons(toy):
    rs = _registry.resolve(toy.TOY_CLASSIFIER_ENTRY)
    ok = {"alpha": 1.0, "mode": "plain", "shift": 0.0}
    assert rs.unsupported_param(ok) is None
    assert rs.unsupported_param({**ok, "alpha": 500.0}) == (
        "parameter alpha=500.0 unsupported (supported: alpha < 100)")
    assert rs.unsupported_param({**ok, "mode": "proba", "alpha": 50.0}) == (
        "mode='proba' with alpha > 10 unsupported")
    assert rs.translate(ok) == {"scale": 1.0, "mode": "plain"}


def test_unlisted_parameters_are_served_at_their_default_only():
    from sklearn.preprocessing import StandardScaler
    import twinlearn

    entry = Entry(sklearn="x.StandardScaler", twinlearn="y.StandardScaler", methods=("fit",),
                  attributes=(), params={"copy": ANY})
    rs = _registry.Resolved(entry, StandardScaler, twinlearn.StandardScaler)
    assert rs.unsupported_param({"copy": False, "with_mean": True, "with_std": True}) is None
    assert rs.unsupported_param({"copy": True, "with_mean": False, "with_std": True}) == (
        "parameter with_mean=False unsupported (twinlearn serves only the default True)")
    # The default translation keeps the parameters the twinlearn class has.
    assert rs.translate({"copy": 1, "with_mean": 2, "other": 3}) == {"copy": 1, "with_mean": 2}


def test_default_thresholds_are_marked_as_placeholders():
    src = inspect.getsource(_entry)
    assert re.search(r"DEFAULT_MIN_ROWS = 10_000", src)
    assert "python -m twinlearn.accel --measure-thresholds --device cuda" in src
    # Every estimator without a GPU measurement is marked as a placeholder.
    from twinlearn.accel import _thresholds

    matrix = accel.support_matrix()
    for rs in _registry.available():
        if _thresholds.measured(rs.name) is None:
            assert f"| `{rs.entry.sklearn}` |" in matrix
            line = next(x for x in matrix.splitlines() if x.startswith(f"| `{rs.entry.sklearn}` |"))
            assert line.endswith("| placeholder, not measured |"), line


def test_support_matrix_file_is_up_to_date():
    path = REPO / "docs" / "SUPPORT_MATRIX.md"
    committed = path.read_text()
    m = re.search(r"with scikit-learn (\S+)\. Do not edit", committed)
    assert m, "docs/SUPPORT_MATRIX.md has no scikit-learn version line"
    if m.group(1) != sklearn.__version__:
        pytest.skip(f"docs/SUPPORT_MATRIX.md was generated with scikit-learn {m.group(1)}")
    assert committed == accel.support_matrix(), (
        "regenerate: python -m twinlearn.accel --support-matrix > docs/SUPPORT_MATRIX.md")


def test_support_matrix_lists_what_the_registry_says():
    text = accel.support_matrix()
    assert "| `sklearn.preprocessing.StandardScaler` | `twinlearn.preprocessing.StandardScaler` |" in text
    assert "| `with_mean` | `True` | all values |" in text
    assert "Keyword arguments served: `sample_weight`, `copy`." in text
