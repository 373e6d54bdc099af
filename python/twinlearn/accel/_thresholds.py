"""Measured default size thresholds: the size from which twinlearn beats scikit-learn.

``thresholds.json`` beside this module holds the threshold of each
accelerated estimator as ``python -m twinlearn.accel --measure-thresholds
--device cuda`` measured it (``_calibrate.py`` says how).

The accelerator's defaults (:func:`default_threshold`) take an estimator's
threshold from that file when the file holds a measurement of it made on a
GPU; measurements made on the CPU backend are kept for reading but never
become defaults, and without a measurement the registry's placeholder
(``_entry.DEFAULT_MIN_ROWS``) stays. A measurement in which twinlearn
was never faster keeps the estimator on scikit-learn by default
(``min_rows`` :data:`NEVER`).

File format (``"format": 1``)::

    {"format": 1,
     "machine": {device, device_name, date, twinlearn_commit, ...},  # the last run
     "estimators": {"StandardScaler": {
         "min_rows": 16384 | null,          # null: twinlearn never faster
         "min_cols": 1, "cols_measured": 32, "dtype": "float32",
         "wider": [{"cols": 256, "min_rows": 2048 | null, "min_cols": 1,
                    "max_rows_measured", "stopped", "seconds", "times"}],  # optional
         "method": "transform", "params": {...},
         "device": "cuda:0", "device_name": "NVIDIA H200", "date": "YYYY-MM-DD",
         "twinlearn_commit": "...", "sklearn_version": "...",
         "max_rows_measured": 1048576, "stopped": "max_rows" | "budget",
         "times": [{"rows", "sklearn_s", "twinlearn_s", "sklearn_fit_s",
                    "twinlearn_fit_s", "sklearn_runs", "twinlearn_runs"}, ...]}},
     "skipped": {"Name": "reason", ...}}
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path

from . import _entry

logger = logging.getLogger("twinlearn.accel")

FORMAT = 1
#: The packaged results file, read for the defaults.
PATH = Path(__file__).with_name("thresholds.json")
#: min_rows of an estimator twinlearn never beat: scikit-learn runs at every size.
NEVER = sys.maxsize

#: Widths of the synthetic data measured by default (``_calibrate``),
#: narrowest first. Thresholds are in rows at each width; the GPU's
#: advantage grows with the width, so narrower data needs more rows. Data of
#: d columns takes the threshold measured at the widest measured width <= d
#: (the narrowest when d is narrower still). A record that names no width
#: was measured at the first.
DEFAULT_COLS = (32, 256)


# -- loading ---------------------------------------------------------------------------
_lock = threading.Lock()
_source: Path = PATH
_cache: dict | None = None  # name -> (points (see _points), record)


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _limits_problem(rec) -> str | None:
    if "min_rows" not in rec or not (rec["min_rows"] is None or _is_count(rec["min_rows"])):
        return f"min_rows must be a non-negative integer or null; got {rec.get('min_rows')!r}"
    if not _is_count(rec.get("min_cols", 0)):
        return f"min_cols must be a non-negative integer; got {rec.get('min_cols')!r}"
    return None


def _record_problem(rec) -> str | None:
    """Why one estimator's record is unusable, or None."""
    if not isinstance(rec, dict):
        return "not an object"
    problem = _limits_problem(rec)
    if problem is not None:
        return problem
    if not isinstance(rec.get("device"), str):
        return "no device"
    wider = rec.get("wider", [])
    if not isinstance(wider, list):
        return "'wider' is not a list"
    for w in wider:
        if not isinstance(w, dict) or not (_is_count(w.get("cols")) and w["cols"] > 0):
            return f"a 'wider' entry needs a positive 'cols'; got {w!r}"
        problem = _limits_problem(w)
        if problem is not None:
            return f"at {w['cols']} columns: {problem}"
    return None


def _points(rec) -> list:
    """[(cols, min_rows, min_cols, record at that width)] of a valid record, narrowest first."""
    first = rec.get("cols_measured")
    first = first if _is_count(first) and first > 0 else DEFAULT_COLS[0]
    pts = [(first, rec)] + [(w["cols"], w) for w in rec.get("wider", [])]
    return sorted(
        ((c, NEVER if r["min_rows"] is None else r["min_rows"], r.get("min_cols", 1), r) for c, r in pts),
        key=lambda p: p[0],
    )


def _point_for(points, n_features):
    """The point that applies to data of `n_features` columns (None: the narrowest)."""
    chosen = points[0]
    if n_features is not None:
        for p in points:
            if p[0] <= n_features:
                chosen = p
    return chosen


def is_gpu(rec) -> bool:
    """The record was measured on a GPU (its device is not the CPU backend)."""
    return isinstance(rec, dict) and isinstance(rec.get("device"), str) and rec["device"].startswith("cuda")


def read(path) -> dict:
    """The results file at `path` (ValueError when it is not one)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a thresholds file of format {FORMAT}")
    if not isinstance(data.get("estimators", {}), dict):
        raise ValueError(f"{path}: 'estimators' is not an object")
    data.setdefault("estimators", {})
    return data


def _load(path) -> dict:
    if not os.path.exists(path):
        return {}
    try:
        data = read(path)
    except (OSError, ValueError) as exc:
        logger.warning("measured thresholds not used: %s", exc)
        return {}
    out = {}
    for name, rec in data["estimators"].items():
        problem = _record_problem(rec)
        if problem is not None:
            logger.warning("measured threshold of %s not used (%s): %s", name, path, problem)
        elif is_gpu(rec):
            out[name] = (_points(rec), rec)
    return out


def _measured() -> dict:
    global _cache
    c = _cache
    if c is None:
        with _lock:
            if _cache is None:
                _cache = _load(_source)
            c = _cache
    return c


def use_file(path=None) -> None:
    """Take the defaults from the results file at `path` (None: the packaged one)."""
    global _source, _cache
    with _lock:
        _source = PATH if path is None else Path(path)
        _cache = None


def measured(name: str) -> dict | None:
    """The GPU measurement record in force for estimator `name`, or None."""
    m = _measured().get(name)
    return None if m is None else m[1]


def default_threshold(entry, n_features: int | None = None) -> tuple[int, int]:
    """(min_rows, min_cols) by default for registry entry `entry` and data of
    `n_features` columns (None: the narrowest width measured): the GPU
    measurement when there is one, else the registry's placeholder."""
    m = _measured().get(entry.name)
    if m is None:
        return entry.min_rows, entry.min_cols
    _, rows, cols, _ = _point_for(m[0], n_features)
    return rows, cols


def never_reason(name: str, n_features: int | None = None) -> str | None:
    """Why estimator `name` runs on scikit-learn at every size by default
    (for data of `n_features` columns), or None."""
    m = _measured().get(name)
    if m is None:
        return None
    cols, rows, _, point = _point_for(m[0], n_features)
    if rows != NEVER:
        return None
    rec = m[1]
    return (f"twinlearn was slower than scikit-learn at every size measured up to "
            f"{point.get('max_rows_measured', '?')} rows at {cols} columns on "
            f"{rec.get('device_name') or rec['device']}; "
            f"twinlearn.accel.set_threshold({name!r}, ...) runs it")


def threshold_text(entry) -> str:
    """The default threshold of `entry` for the support matrix."""
    m = _measured().get(entry.name)
    if m is None:
        return f"{entry.min_rows}, {entry.min_cols}"
    parts = []
    for i, (cols, rows, min_cols, _) in enumerate(m[0]):
        shown = "scikit-learn at every size" if rows == NEVER else f"{rows}, {min_cols}"
        parts.append(f"{shown} (at {'' if i == 0 else '>= '}{cols} columns)" if len(m[0]) > 1 else shown)
    return "; ".join(parts)


def describe(entry) -> str:
    """Where the default threshold of `entry` comes from, for the support matrix."""
    rec = measured(entry.name)
    if rec is None:
        if entry.min_rows == _entry.DEFAULT_MIN_ROWS:
            return "placeholder, not measured"
        return "set in the registry, not measured"
    where = f"{rec.get('device_name') or rec['device']}, {rec.get('date', 'undated')}"
    widths = [str(p[0]) for p in _points(rec)]
    if all(p[1] == NEVER for p in _points(rec)):
        return (f"measured ({where}): twinlearn never faster up to {rec.get('max_rows_measured', '?')} "
                f"rows, so scikit-learn by default")
    return f"measured ({where}, {' and '.join(widths)} columns)"

