"""A malformed GBDT model file never crashes the loader.

Truncated files, random and flipped bytes, a wrong format or version, huge
declared sizes and valid files with one field changed (a wrong type, a
negative count, an out-of-range feature or border index, NaN) all raise a
ValueError that names the problem; a file that still parses loads a model
whose predictions have the right shape."""

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twinlearn import GradientBoosting, GradientBoostingClassifier

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
MESSAGE = "not a valid twinlearn GBDT model file"


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    X[::7, 1] = np.nan
    Xc = X.copy()
    Xc[:, 3] = rng.integers(0, 4, 60)
    y = X[:, 0] * 2 + (X[:, 2] > 0)
    yc = (X[:, 0] > 0).astype(int) + (X[:, 3] > 0.5)
    return X, Xc, y, yc


def _models():
    X, Xc, y, yc = _data()
    gb = dict(n_estimators=3, max_depth=3)
    return {
        "oblivious": (GradientBoosting(loss="RMSE", **gb), X, y),
        "depthwise-learned": (GradientBoosting(loss="RMSE", grow_policy="Depthwise", nan_mode="Learned", **gb), X, y),
        "classifier": (GradientBoostingClassifier(n_estimators=3, max_depth=2), X, yc),
        "categorical": (GradientBoosting(loss="RMSE", cat_features=[3], n_estimators=3, max_depth=2), Xc, y),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (est, X, y) in _models().items():
            est.fit(X, y)
            path = tmp_path_factory.mktemp(name) / "model.json"
            est.save_model(path)
            out[name] = (type(est), path.read_bytes(), X, est.predict(X))
    return out


KINDS = sorted(_models())


def _load(cls, data, tmp_path):
    path = tmp_path / "fuzzed.json"
    path.write_bytes(data)
    return cls().load_model(path)


def _loads_or_refuses(cls, data, X, tmp_path, finite=True):
    """Loading either raises a ValueError with the loader's message, or gives
    a model that predicts one value per row (finite where the file's numbers are)."""
    try:
        est = _load(cls, data, tmp_path)
    except ValueError as exc:
        assert MESSAGE in str(exc), f"unclear error: {exc!r}"
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = np.asarray(est.predict(X))
        except ValueError as exc:  # e.g. the file changed n_features: X no longer fits
            assert str(exc)
            return est
    assert out.shape == (X.shape[0],)
    if finite and out.dtype.kind == "f":
        assert np.isfinite(out).all()
    return est


def test_saved_files_load(saved, tmp_path):
    for cls, data, X, expected in saved.values():
        est = _load(cls, data, tmp_path)
        np.testing.assert_array_equal(est.predict(X), expected)


@pytest.mark.parametrize("kind", KINDS)
@FUZZ
@given(cut=st.floats(0, 1, exclude_max=True))
def test_truncated(saved, tmp_path, kind, cut):
    cls, data, X, _ = saved[kind]
    body = data.rstrip()  # the trailing newline is not part of the document
    with pytest.raises(ValueError, match=MESSAGE):
        _load(cls, body[: int(cut * len(body))], tmp_path)


@pytest.mark.parametrize("kind", KINDS)
@FUZZ
@given(flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 7)), min_size=1, max_size=4))
def test_flipped_bytes(saved, tmp_path, kind, flips):
    cls, data, X, _ = saved[kind]
    b = bytearray(data)
    for where, bit in flips:
        b[int(where * len(b))] ^= 1 << bit
    _loads_or_refuses(cls, bytes(b), X, tmp_path, finite=False)


@FUZZ
@given(data=st.binary(max_size=200))
def test_random_bytes(tmp_path, data):
    with pytest.raises(ValueError, match=MESSAGE):
        _load(GradientBoosting, data, tmp_path)


@pytest.mark.parametrize("text, problem", [
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[" * 100000, "nested too deeply"),
    (b"{", "not JSON"),
    (b"[]", "'format'"),
    (b'{"format": "xgboost"}', "'format'"),
])
def test_not_a_model(tmp_path, text, problem):
    with pytest.raises(ValueError, match=f"{MESSAGE}.*{problem}"):
        _load(GradientBoosting, text, tmp_path)


# -- one field changed --------------------------------------------------------------
def _paths(o, pre=()):
    """Every path into a document (at most 3 items of each list)."""
    if pre:
        yield pre
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _paths(v, pre + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o[:3]):
            yield from _paths(v, pre + (i,))


DELETE = object()
REPLACEMENTS = [-1, 0, 1, 2**31, -(2**31) - 1, 2**62, 1.5, 1e308, -1e308, math.nan, math.inf, None, True, "x",
                "NaN", [], [1, 2], {}, DELETE]


def _changed(data, path, value):
    doc = json.loads(data)
    o = doc
    for k in path[:-1]:
        o = o[k]
    if value is DELETE:
        del o[path[-1]]
    else:
        o[path[-1]] = value
    return json.dumps(doc).encode()  # NaN and inf as JSON's non-standard literals, as Python reads them


@pytest.mark.parametrize("kind", KINDS)
def test_every_field_changed(saved, tmp_path, kind):
    """Each field of a saved file replaced by each bad value in turn (a
    systematic sweep: some thousand files per kind)."""
    cls, data, X, _ = saved[kind]
    for path in _paths(json.loads(data)):
        for value in REPLACEMENTS:
            finite = not (isinstance(value, float) and not math.isfinite(value))
            _loads_or_refuses(cls, _changed(data, path, value), X, tmp_path, finite=finite)


def _tree_field(data, key, value, tree=0, index=0):
    doc = json.loads(data)
    doc["trees"][tree][key][index] = value
    return json.dumps(doc).encode()


@pytest.mark.parametrize("key, value, problem", [
    ("split_features", 4, r"'split_features' must be an integer in \[-1, 3\]"),
    ("split_features", -2, r"'split_features' must be an integer in \[-1, 3\]"),
    ("split_features", 2**40, r"'split_features' must be an integer"),
    ("split_bins", 300, "uses border 300"),
    ("split_bins", -5, "uses border -5"),
    ("split_borders", math.nan, "NaN is not a JSON number"),
    ("split_borders", math.inf, "Infinity is not a JSON number"),
    ("split_borders", 12345.0, "has border value"),
    ("leaf_values", math.nan, "NaN is not a JSON number"),
    ("leaf_values", "1", "bad number"),
    ("leaf_counts", -1, r"'leaf_counts' must be an integer in \[0, "),
    ("leaf_counts", 1.5, r"'leaf_counts' must be an integer in \[0, "),
    ("leaf_counts", 2**63, r"'leaf_counts' must be an integer in \[0, "),
])
def test_named_problems(saved, tmp_path, key, value, problem):
    cls, data, X, _ = saved["oblivious"]
    with pytest.raises(ValueError, match=problem):
        _load(cls, _tree_field(data, key, value), tmp_path)


@pytest.mark.parametrize("change, problem", [
    (dict(n_features=2**40), r"'n_features' must be an integer in"),
    (dict(n_features=-3), r"'n_features' must be an integer in"),
    (dict(n_outputs=0), r"'n_outputs' must be an integer in"),
    (dict(format_version=99), "format_version 99 is not supported"),
    (dict(base_score=[]), "'base_score' must have n_outputs = 1 entries"),
    (dict(trees=[{"depth": 16, "split_features": [], "split_bins": [], "split_borders": [], "split_gains": [],
                  "leaf_values": []}]), "tree 0 needs 16 splits"),
    (dict(trees=[{"depth": 10**9}]), r"tree 0's 'depth' must be an integer in \[0, 16\]"),
    (dict(params=[]), "'params' must be an object"),
    (dict(best_iteration=7), "'best_iteration' must be null or a tree index below 3"),
])
def test_named_top_level_problems(saved, tmp_path, change, problem):
    cls, data, X, _ = saved["oblivious"]
    doc = {**json.loads(data), **change}
    with pytest.raises(ValueError, match=problem):
        _load(cls, json.dumps(doc).encode(), tmp_path)


def test_depthwise_tree_index_out_of_range(saved, tmp_path):
    cls, data, X, _ = saved["depthwise-learned"]
    doc = json.loads(data)
    doc["trees"][0]["split_nan_right"][0] = 2
    with pytest.raises(ValueError, match=r"'split_nan_right' must be an integer in \[0, 1\]"):
        _load(cls, json.dumps(doc).encode(), tmp_path)


def test_leaf_counts_in_every_tree_or_none(saved, tmp_path):
    cls, data, X, expected = saved["oblivious"]
    doc = json.loads(data)
    assert all("leaf_counts" in t for t in doc["trees"])
    del doc["trees"][1]["leaf_counts"]
    with pytest.raises(ValueError, match="'leaf_counts' must be in every tree or in none"):
        _load(cls, json.dumps(doc).encode(), tmp_path)
    doc = json.loads(data)
    doc["trees"][0]["leaf_counts"].append(3)
    with pytest.raises(ValueError, match="tree 0 needs 2\\*\\*depth = 8 leaf counts"):
        _load(cls, json.dumps(doc).encode(), tmp_path)
    doc = json.loads(data)
    for t in doc["trees"]:
        del t["leaf_counts"]  # a file of an older version
    est = _load(cls, json.dumps(doc).encode(), tmp_path)
    assert est.leaf_count_.size == 0
    np.testing.assert_array_equal(est.predict(X), expected)


@pytest.mark.parametrize("classes, problem", [
    ([0, 1], "needs 3 classes, the file lists 2"),
    ([0, 1, 1], "distinct labels"),
    (None, "has no 'classes'|'classes' must be a list"),
    ([0, 1, 1e308], ""),
])
def test_classes(saved, tmp_path, classes, problem):
    cls, data, X, _ = saved["classifier"]
    doc = json.loads(data)
    doc["classes"] = classes
    with pytest.raises(ValueError, match=f"{MESSAGE}.*{problem}"):
        _load(cls, json.dumps(doc).encode(), tmp_path)


def test_nan_in_a_document_is_refused(saved):
    """A document read by other means (json.loads accepts NaN) still has no NaN."""
    from twinlearn.ensemble._model_io import from_dict

    cls, data, X, _ = saved["oblivious"]
    doc = json.loads(data)
    doc["trees"][0]["leaf_values"][2] = math.nan
    with pytest.raises(ValueError, match="tree 0's 'leaf_values' holds NaN"):
        from_dict(cls(), doc)


def test_categorical_huge_input_count(saved, tmp_path):
    cls, data, X, _ = saved["categorical"]
    doc = json.loads(data)
    doc["categorical"]["n_input_features"] = 2**31
    with pytest.raises(ValueError, match="'n_input_features' must be an integer in"):
        _load(cls, json.dumps(doc).encode(), tmp_path)


def test_a_refused_file_leaves_the_estimator_alone(saved, tmp_path):
    cls, data, X, expected = saved["oblivious"]
    est = _load(cls, data, tmp_path)
    doc = json.loads(data)
    doc["trees"][1]["leaf_values"][0] = math.nan
    with pytest.raises(ValueError, match="NaN is not a JSON number"):
        est.load_model(_write(tmp_path, json.dumps(doc).encode()))
    np.testing.assert_array_equal(est.predict(X), expected)


def _write(tmp_path, data):
    path = tmp_path / "other.json"
    path.write_bytes(data)
    return path
