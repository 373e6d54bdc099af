"""Saving and loading gradient-boosted tree models as JSON.

The format is documented in docs/GBDT_MODEL_FORMAT.md. Every float is
written with Python's shortest round-trip representation, so a loaded model
has the same bits as the saved one and predicts the same bits; non-finite
borders (the dedicated NaN bins) are written as the strings "Infinity" and
"-Infinity". Loading needs no GPU.
"""

from __future__ import annotations

import io
import json
import math
import os

import numpy as np

from .. import _backend
from ._categorical import CategoricalEncoder
from ._model import fitted_grow_policy, leaf_count, model_dict, split_nan_right, tree_split_counts
from ._params import GROW_POLICIES

FORMAT = "twinlearn-gbdt"
#: 2 when the model has categorical features (a "categorical" section), else 1.
FORMAT_VERSION = 1
FORMAT_VERSIONS = (1, 2)


def _float_to_json(v: float):
    v = float(v)
    if math.isfinite(v):
        return v
    if math.isnan(v):
        raise ValueError("a GBDT model holds a NaN value and cannot be saved")
    return "Infinity" if v > 0 else "-Infinity"


def _float_from_json(v) -> float:
    if isinstance(v, str):
        if v == "Infinity":
            return math.inf
        if v == "-Infinity":
            return -math.inf
        raise ValueError(f"bad number in GBDT model file: {v!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"bad number in GBDT model file: {v!r}")
    return float(v)


def _floats(a):
    return [_float_to_json(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def _json_param(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return _float_to_json(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_json_param(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v)]
    return repr(v)  # e.g. a RandomState instance: recorded, not restored


def to_dict(est) -> dict:
    """The JSON-ready description of a fitted estimator."""
    from .. import __version__  # set by the package after it imports its estimators

    grow_policy = fitted_grow_policy(est)
    depth = np.asarray(est.tree_depth_, dtype=np.int64)
    counts = tree_split_counts(depth, grow_policy)
    D = int(est.n_outputs_)
    nan_right = split_nan_right(est)
    lcount = leaf_count(est)
    trees = []
    s = l = 0
    for d, c in zip(depth, counts):
        d, c = int(d), int(c)
        nleaf = (1 << d) * D
        trees.append(
            {
                "depth": d,
                "split_features": [int(v) for v in est.split_feature_[s : s + c]],
                "split_bins": [int(v) for v in est.split_bin_[s : s + c]],
                "split_borders": _floats(est.split_border_[s : s + c]),
                "split_gains": _floats(est.split_gain_[s : s + c]),
                "leaf_values": _floats(est.leaf_values_[l : l + nleaf]),
            }
        )
        if nan_right.size:
            trees[-1]["split_nan_right"] = [int(v) for v in nan_right[s : s + c]]
        if lcount.size:
            trees[-1]["leaf_counts"] = [int(v) for v in lcount[l // D : l // D + (1 << d)]]
        s += c
        l += nleaf
    off = np.asarray(est.border_offsets_, dtype=np.int64)
    features = [{"borders": _floats(est.borders_[off[j] : off[j + 1]])} for j in range(len(off) - 1)]
    classes = getattr(est, "classes_", None)
    params = {k: _json_param(v) for k, v in est.get_params().items() if k not in ("device", "numeric_mode")}
    enc = getattr(est, "_cat_encoder", None)
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION if enc is None else 2,
        "twinlearn_version": __version__,
        "estimator": type(est).__name__,
        "params": params,
        "loss": est._loss_name,
        "nan_mode": est._nan_mode,
        "grow_policy": grow_policy,
        "n_features": len(features),
        "feature_names": None
        if not hasattr(est, "feature_names_in_")
        else [str(v) for v in est.feature_names_in_],
        "n_outputs": D,
        "classes": None if classes is None else np.asarray(classes).tolist(),
        "classes_dtype": None if classes is None else np.asarray(classes).dtype.str,
        "base_score": _floats(est.base_score_),
        "best_iteration": est.best_iteration_,
        "features": features,
        "trees": trees,
    }
    if enc is not None:
        doc["categorical"] = enc.to_dict(_floats)
    return doc


#: The extension of a model file's path (none is accepted too): the one format written and read.
EXTENSION = ".json"


def _checked_path(fname, verb):
    """os.fspath(fname), refused when its extension is another format's."""
    path = os.fspath(fname)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    ext = os.path.splitext(path)[1]
    if ext and ext.lower() != EXTENSION:
        raise ValueError(
            f"Cannot {verb} a model file with extension {ext!r}: twinlearn models are JSON files "
            f"(docs/GBDT_MODEL_FORMAT.md); use a path ending in {EXTENSION!r} (or none), a file object, "
            "or bytes (load_model). Models of other libraries (CatBoost, XGBoost, LightGBM) are not read."
        )
    return path


def _is_path(fname):
    return isinstance(fname, (str, os.PathLike))


def save(est, fname) -> None:
    """Writes the model as JSON to `fname`: a path (extension '.json' or
    none) or a file object open for writing, text or binary (UTF-8)."""
    text = json.dumps(to_dict(est), allow_nan=False, separators=(",", ":")) + "\n"
    if _is_path(fname):
        with open(_checked_path(fname, "save"), "w", encoding="utf-8") as f:
            f.write(text)
    elif callable(getattr(fname, "write", None)):
        if isinstance(fname, io.TextIOBase):
            fname.write(text)
        else:
            fname.write(text.encode("utf-8"))
    else:
        raise TypeError(f"fname must be a path or a file object open for writing, got {type(fname).__name__}")


_BAD_FILE = "not a valid twinlearn GBDT model file"


def _require(cond, what):
    if not cond:
        raise ValueError(f"{_BAD_FILE}: {what}")


_INT32 = (-(2**31), 2**31 - 1)
#: The core's losses whose estimators predict classes (the file then lists them).
_CLASSIFICATION_LOSSES = ("Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll")


def _field(doc, key, kind, where="the model"):
    """doc[key], which must be present and of type `kind`."""
    _require(isinstance(doc, dict), f"{where} must be a JSON object, got {type(doc).__name__}")
    _require(key in doc, f"{where} has no {key!r}")
    v = doc[key]
    _require(isinstance(v, kind) and not (isinstance(v, bool) and kind is not bool),
             f"{where}'s {key!r} must be {_KIND_NAMES.get(kind, kind)}, got {v!r:.60}")
    return v


_KIND_NAMES = {int: "an integer", list: "a list", dict: "an object", str: "a string"}


def _int(v, what, lo, hi):
    _require(isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi,
             f"{what} must be an integer in [{lo}, {hi}], got {v!r:.60}")
    return v


def _number(v, what):
    x = _float_from_json(v)
    _require(not math.isnan(x), f"{what} holds NaN")
    return x


def _numbers(t, key, where):
    return [_number(v, f"{where}'s {key!r}") for v in _field(t, key, list, where)]


def _ints(t, key, where, lo, hi):
    return [_int(v, f"each of {where}'s {key!r}", lo, hi) for v in _field(t, key, list, where)]


def from_dict(est, doc: dict):
    """Restores est (parameters and fitted attributes) from a loaded document.

    Every field is checked (types, sizes, index ranges, then the core's own
    check of the trees) before est changes: a bad file raises ValueError
    naming the problem and leaves est as it was."""
    try:
        new = _parse(est, doc)
    except ValueError as exc:
        if str(exc).startswith(_BAD_FILE):
            raise
        raise ValueError(f"{_BAD_FILE}: {exc}") from None  # the core's or the encoder's check
    except (KeyError, TypeError, IndexError, AttributeError, OverflowError) as exc:  # any shape not checked above
        raise ValueError(f"{_BAD_FILE}: {type(exc).__name__}: {exc}") from None
    est.__dict__.clear()
    est.__dict__.update(new.__dict__)
    return est


def _parse(est, doc):
    _require(isinstance(doc, dict) and doc.get("format") == FORMAT, f"'format' must be {FORMAT!r}")
    _require(doc.get("format_version") in FORMAT_VERSIONS,
             f"format_version {doc.get('format_version')!r} is not supported (this version reads "
             f"{', '.join(map(str, FORMAT_VERSIONS))})")
    _require(doc.get("estimator") == type(est).__name__,
             f"the file holds a {doc.get('estimator')!r}, not a {type(est).__name__!r}")
    grow_policy = doc.get("grow_policy", "SymmetricTree")  # files of older versions: oblivious trees
    _require(grow_policy in GROW_POLICIES,
             f"'grow_policy' must be one of {', '.join(map(repr, GROW_POLICIES))}, got {grow_policy!r}")
    valid = est.get_params()
    # The scikit-learn-shaped estimators grow oblivious trees, or Lossguide trees with
    # max_leaf_nodes / min_samples_leaf (their parameters, restored below, say which).
    _require(grow_policy in ("SymmetricTree", "Lossguide") or "grow_policy" in valid,
             f"a {type(est).__name__!r} holds oblivious or Lossguide trees only, the file has {grow_policy!r}")
    params = doc.get("params", {})
    _require(isinstance(params, dict), f"'params' must be an object, got {params!r:.60}")
    params = {k: v for k, v in params.items() if k in valid and not (k == "random_state" and isinstance(v, str))}
    for k, v in params.items():
        if isinstance(valid[k], float) or k in ("learning_rate", "l2_leaf_reg", "l2_regularization"):
            params[k] = _number(v, f"parameter {k!r}")
    # est's own parameters (device, numeric_mode among them), then the file's.
    new = type(est)(**valid)
    new.set_params(**params)
    loss = _field(doc, "loss", str)
    nan_mode = _field(doc, "nan_mode", str)
    n_features = _int(_field(doc, "n_features", int), "'n_features'", 1, _INT32[1] - 1)
    D = _int(_field(doc, "n_outputs", int), "'n_outputs'", 1, _INT32[1])
    features = _field(doc, "features", list)
    _require(len(features) == n_features, "'features' must list every feature")
    per_feature = [_numbers(f, "borders", f"feature {j}") for j, f in enumerate(features)]
    borders = [v for b in per_feature for v in b]
    offsets = np.zeros(n_features + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in per_feature])
    _require(offsets[-1] <= _INT32[1], "too many borders")
    learned = nan_mode == "Learned"
    depth, sf, sb, sbr, sg, lv, snr, lc = [], [], [], [], [], [], [], []
    trees = _field(doc, "trees", list)
    # Training leaf counts: in every tree or none (files of older versions have none).
    counted = bool(trees) and isinstance(trees[0], dict) and "leaf_counts" in trees[0]
    for i, t in enumerate(trees):
        where = f"tree {i}"
        d = _int(_field(t, "depth", int, where), f"{where}'s 'depth'", 0, 16)
        c = int(tree_split_counts([d], grow_policy)[0])
        _require(all(len(_field(t, k, list, where)) == c
                     for k in ("split_features", "split_bins", "split_borders", "split_gains")),
                 f"{where} needs {d} splits" if grow_policy == "SymmetricTree"
                 else f"{where} needs 2**depth - 1 = {c} splits (grow_policy {grow_policy!r})")
        _require(len(_field(t, "leaf_values", list, where)) == (1 << d) * D,
                 f"{where} needs 2**depth * n_outputs = {(1 << d) * D} leaf values")
        _require(not learned or len(_field(t, "split_nan_right", list, where)) == c,
                 "under nan_mode 'Learned' each tree needs one 'split_nan_right' entry per split")
        depth.append(d)
        sf += _ints(t, "split_features", where, -1, n_features - 1)
        sb += _ints(t, "split_bins", where, *_INT32)
        sbr += _numbers(t, "split_borders", where)
        sg += _numbers(t, "split_gains", where)
        lv += _numbers(t, "leaf_values", where)
        if learned:
            snr += _ints(t, "split_nan_right", where, 0, 1)
        _require(("leaf_counts" in t) == counted, "'leaf_counts' must be in every tree or in none")
        if counted:
            _require(len(_field(t, "leaf_counts", list, where)) == 1 << d,
                     f"{where} needs 2**depth = {1 << d} leaf counts")
            lc += _ints(t, "leaf_counts", where, 0, 2**63 - 1)
    base_score = _numbers(doc, "base_score", "the model")
    _require(len(base_score) == D, f"'base_score' must have n_outputs = {D} entries, got {len(base_score)}")
    new._cat_encoder = None
    new._cat_labels = {}
    new.n_features_in_ = n_features
    if doc.get("categorical") is not None:
        cat = doc["categorical"]
        n_in = _int(_field(cat, "n_input_features", int, "the 'categorical' section"),
                    "the 'categorical' section's 'n_input_features'", 1,
                    n_features + len(_field(cat, "columns", list, "the 'categorical' section")))
        try:
            enc = CategoricalEncoder.from_dict(cat, _float_from_json)
        except (KeyError, TypeError, OverflowError) as exc:
            raise ValueError(f"not a valid twinlearn GBDT model file: bad 'categorical' section ({exc})") from None
        _require(enc.n_features == n_in and enc.n_out == n_features,
                 "the categorical encoding must give the trees' 'n_features' columns")
        new._cat_encoder = enc
        new._cat_labels = dict(enc.labels)
        new.n_features_in_ = enc.n_features
    if doc.get("feature_names") is not None:
        names = _field(doc, "feature_names", list)
        _require(len(names) == new.n_features_in_ and all(isinstance(v, str) for v in names),
                 f"'feature_names' must be {new.n_features_in_} strings")
        new.feature_names_in_ = np.asarray(names, dtype=object)
    if loss in _CLASSIFICATION_LOSSES:
        classes = _field(doc, "classes", list)
        n_classes = 2 if D == 1 else D
        _require(len(classes) == n_classes, f"a {loss} model with {D} output(s) needs {n_classes} classes, "
                                            f"the file lists {len(classes)}")
        dtype = _field(doc, "classes_dtype", str)
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            _require(False, f"'classes_dtype' {dtype!r:.60} is not a NumPy dtype")
        _require(dtype.kind in "biufUSO", f"'classes_dtype' {dtype.str!r} is not a dtype of class labels")
        new.classes_ = np.asarray(classes, dtype=dtype)
        _require(new.classes_.shape == (n_classes,) and len(set(new.classes_.tolist())) == n_classes,
                 "'classes' must list distinct labels")
        new.n_classes_ = n_classes
    best = doc.get("best_iteration")
    _require(best is None or (isinstance(best, int) and not isinstance(best, bool) and 0 <= best < len(depth)),
             f"'best_iteration' must be null or a tree index below {len(depth)}, got {best!r:.60}")
    new._loss_name = loss
    new.grow_policy_ = grow_policy
    new._nan_mode = nan_mode
    new.n_outputs_ = D
    new.borders_ = np.asarray(borders, dtype=np.float64)
    new.border_offsets_ = offsets.astype(np.int32)
    new.tree_depth_ = np.asarray(depth, dtype=np.int32)
    new.split_feature_ = np.asarray(sf, dtype=np.int32)
    new.split_bin_ = np.asarray(sb, dtype=np.int32)
    new.split_border_ = np.asarray(sbr, dtype=np.float64)
    new.split_gain_ = np.asarray(sg, dtype=np.float64)
    new.split_nan_right_ = np.asarray(snr, dtype=np.uint8)
    new.leaf_values_ = np.asarray(lv, dtype=np.float64)
    new.base_score_ = np.asarray(base_score, dtype=np.float64)
    new.leaf_count_ = np.asarray(lc, dtype=np.int64)
    new.n_estimators_ = len(depth)
    new.best_iteration_ = best
    new.evals_result_ = {}
    # The core checks every index, offset and size before any prediction.
    _backend.core().gbdt_validate(model_dict(new))
    new._tl_fit_info = {"device": "cpu", "requested": new._tl_requested_mode(), "delivered": "identical"}
    return new


def _not_strict(literal):
    raise ValueError(f"{_BAD_FILE}: {literal} is not a JSON number (non-finite borders are the strings "
                     f"\"Infinity\" and \"-Infinity\")")


def _read_document(fname):
    """The JSON document of `fname`: a path (extension '.json' or none), a
    file object open for reading (text or binary), or bytes of the file."""
    if _is_path(fname):
        with open(_checked_path(fname, "load"), "rb") as f:
            data = f.read()
    elif isinstance(fname, (bytes, bytearray, memoryview)):
        data = bytes(fname)
    elif callable(getattr(fname, "read", None)):
        data = fname.read()
    else:
        raise TypeError(f"fname must be a path, a file object or bytes, got {type(fname).__name__}")
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            _require(False, "it is not UTF-8 JSON text (a binary file, such as another library's model format?)")
    try:
        return json.loads(data, parse_constant=_not_strict)
    except json.JSONDecodeError as e:
        raise ValueError(f"{_BAD_FILE}: it is not JSON ({e})") from None
    except RecursionError:
        raise ValueError(f"{_BAD_FILE}: JSON nested too deeply") from None


def load(est, fname):
    return from_dict(est, _read_document(fname))
