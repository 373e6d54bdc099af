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
from ._model import fitted_grow_policy, model_dict, split_nan_right, tree_split_counts
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


def _require(cond, what):
    if not cond:
        raise ValueError(f"not a valid twinlearn GBDT model file: {what}")


def from_dict(est, doc: dict):
    """Restores est (parameters and fitted attributes) from a loaded document."""
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
    params = {k: v for k, v in doc.get("params", {}).items() if k in valid and not (
        k == "random_state" and isinstance(v, str))}
    for k, v in params.items():
        if isinstance(valid[k], float) or k in ("learning_rate", "l2_leaf_reg", "l2_regularization"):
            params[k] = _float_from_json(v)
    est.set_params(**params)
    for attr in ("classes_", "n_classes_", "feature_names_in_", "best_iteration_"):
        if hasattr(est, attr):
            delattr(est, attr)
    n_features = int(doc["n_features"])
    D = int(doc["n_outputs"])
    features = doc["features"]
    _require(isinstance(features, list) and len(features) == n_features, "'features' must list every feature")
    borders = [_float_from_json(v) for f in features for v in f["borders"]]
    offsets = np.zeros(n_features + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(f["borders"]) for f in features])
    learned = doc.get("nan_mode") == "Learned"
    depth, sf, sb, sbr, sg, lv, snr = [], [], [], [], [], [], []
    for t in doc["trees"]:
        d = t["depth"]
        _require(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= 16,
                 f"a tree's 'depth' must be an int in [0, 16], got {d!r}")
        c = int(tree_split_counts([d], grow_policy)[0])
        _require(all(len(t[k]) == c for k in ("split_features", "split_bins", "split_borders", "split_gains")),
                 "each tree needs 'depth' splits" if grow_policy == "SymmetricTree"
                 else f"each tree needs 2**depth - 1 splits (grow_policy {grow_policy!r})")
        _require(len(t["leaf_values"]) == (1 << d) * D, "each tree needs 2**depth * n_outputs leaf values")
        _require(not learned or len(t.get("split_nan_right", ())) == c,
                 "under nan_mode 'Learned' each tree needs one 'split_nan_right' entry per split")
        depth.append(d)
        sf += [int(v) for v in t["split_features"]]
        sb += [int(v) for v in t["split_bins"]]
        sbr += [_float_from_json(v) for v in t["split_borders"]]
        sg += [_float_from_json(v) for v in t["split_gains"]]
        lv += [_float_from_json(v) for v in t["leaf_values"]]
        if learned:
            snr += [int(v) for v in t["split_nan_right"]]
    est._cat_encoder = None
    est.n_features_in_ = n_features
    if doc.get("categorical") is not None:
        try:
            enc = CategoricalEncoder.from_dict(doc["categorical"], _float_from_json)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a valid twinlearn GBDT model file: bad 'categorical' section ({exc})") from None
        _require(enc.n_out == n_features, "the categorical encoding must give the trees' 'n_features' columns")
        est._cat_encoder = enc
        est.n_features_in_ = enc.n_features
    if doc.get("feature_names") is not None:
        est.feature_names_in_ = np.asarray(doc["feature_names"], dtype=object)
    if doc.get("classes") is not None:
        est.classes_ = np.asarray(doc["classes"], dtype=np.dtype(doc["classes_dtype"]))
        est.n_classes_ = len(est.classes_)
    est._loss_name = str(doc["loss"])
    est.grow_policy_ = grow_policy
    est._nan_mode = str(doc["nan_mode"])
    est.n_outputs_ = D
    est.borders_ = np.asarray(borders, dtype=np.float64)
    est.border_offsets_ = offsets
    est.tree_depth_ = np.asarray(depth, dtype=np.int32)
    est.split_feature_ = np.asarray(sf, dtype=np.int32)
    est.split_bin_ = np.asarray(sb, dtype=np.int32)
    est.split_border_ = np.asarray(sbr, dtype=np.float64)
    est.split_gain_ = np.asarray(sg, dtype=np.float64)
    est.split_nan_right_ = np.asarray(snr, dtype=np.uint8)
    est.leaf_values_ = np.asarray(lv, dtype=np.float64)
    est.base_score_ = np.asarray([_float_from_json(v) for v in doc["base_score"]], dtype=np.float64)
    est.n_estimators_ = len(depth)
    est.best_iteration_ = doc.get("best_iteration")
    est.evals_result_ = {}
    # The core checks every index, offset and size before any prediction.
    _backend.core().gbdt_validate(model_dict(est))
    est._tl_fit_info = {"device": "cpu", "requested": est._tl_requested_mode(), "delivered": "identical"}
    return est


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
        return json.loads(data)
    except json.JSONDecodeError as e:
        raise ValueError(f"not a valid twinlearn GBDT model file: it is not JSON ({e})") from None


def load(est, fname):
    return from_dict(est, _read_document(fname))
