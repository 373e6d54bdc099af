"""Snapshots of what a fitted estimator holds and returns, and their comparison."""

from __future__ import annotations

import numpy as np

from ._arrays import host
from ._bits import describe_difference

#: Methods whose output on the same rows is part of a fitted estimator's bits.
OUTPUT_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform",
                  "score_samples", "kneighbors")


def _value(v):
    """A host snapshot of one attribute or output: arrays (host or device) as
    NumPy copies, containers element by element, anything else as itself when
    it compares by value, else by its type's name."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic)):
        return np.asarray(v) if isinstance(v, (float, np.floating)) else v
    if isinstance(v, (list, tuple)):
        return tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return {k: _value(x) for k, x in v.items()}
    if hasattr(v, "__array__") or hasattr(v, "__cuda_array_interface__") or hasattr(v, "__dlpack__"):
        return np.array(host(v), copy=True)
    return f"<{type(v).__module__}.{type(v).__qualname__}>"


def fitted_attributes(est) -> dict:
    """The public fitted attributes of `est` (names ending in ``_``, not starting
    with ``_``), as host snapshots."""
    return {k: _value(v) for k, v in sorted(vars(est).items()) if k.endswith("_") and not k.startswith("_")}


def outputs(est, X) -> dict:
    """What each of :data:`OUTPUT_METHODS` that `est` has returns on `X`, as host
    snapshots; a method that raises is recorded by its exception's type and text."""
    out = {}
    for name in OUTPUT_METHODS:
        if not hasattr(est, name):
            continue
        try:
            out[name] = _value(getattr(est, name)(X))
        except (AttributeError, NotImplementedError, ValueError) as e:
            out[name] = f"raises {type(e).__name__}: {e}"
    return out


def snapshot(est, X=None) -> dict:
    """``{'attributes': fitted_attributes(est), 'outputs': outputs(est, X)}``
    (outputs only when `X` is given)."""
    snap = {"attributes": fitted_attributes(est)}
    if X is not None:
        snap["outputs"] = outputs(est, X)
    return snap


def _differences(a, b, where):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return [f"{where}: {type(a).__name__} vs {type(b).__name__}"]
        if a.dtype.kind == "O" or b.dtype.kind == "O":
            same = a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
            return [] if same else [f"{where}: object arrays differ"]
        msg = describe_difference(a, b)
        return [] if msg is None else [f"{where}: {msg}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{where}: keys differ: {sorted(map(str, set(a) ^ set(b)))}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{where}.{k}" if where else str(k))]
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return [f"{where}: lengths differ: {len(a)} vs {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{where}[{i}]")]
    if type(a) is not type(b) or a != b:
        return [f"{where}: {a!r} vs {b!r}"]
    return []


def snapshot_differences(a: dict, b: dict) -> list[str]:
    """One line per attribute or output where two snapshots part (empty: the same bits)."""
    return _differences(a, b, "")


def assert_same_snapshot(a: dict, b: dict, what: str = "") -> None:
    """Raise AssertionError listing every attribute and output where two snapshots part."""
    diffs = snapshot_differences(a, b)
    if diffs:
        head = f"{what}: " if what else ""
        raise AssertionError(head + f"{len(diffs)} difference(s):\n  " + "\n  ".join(diffs))


def assert_same_fitted(est1, est2, X=None, what: str = "") -> None:
    """Raise AssertionError unless two fitted estimators hold the same fitted
    attributes, bit for bit, and (with `X`) return the same bits on `X`."""
    assert_same_snapshot(snapshot(est1, X), snapshot(est2, X), what)
