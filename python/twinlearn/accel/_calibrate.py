"""Measuring the default size thresholds: the size from which twinlearn beats scikit-learn.

``python -m twinlearn.accel --measure-thresholds --device cuda`` times, for
each accelerated estimator, the plain scikit-learn estimator against the same
code accelerated (thresholds 0, NumPy in and NumPy out, as users run it) on
synthetic data of a fixed width and doubling row counts, and writes
``thresholds.json`` beside this module (its format, and how it becomes the
defaults, in ``_thresholds.py``). The threshold of an estimator is
:func:`crossover` of its timings: the smallest measured row count from which
twinlearn is faster at that size and at every larger size measured.

The commit recorded is ``git rev-parse HEAD`` of the source tree, or
``TWINLEARN_BENCH_COMMIT`` when set (a copy of the tree without .git).

Times are seconds, the median over the timed runs of fit plus the main
method (``predict``, else ``transform``, else ``kneighbors``) on the
training X, the GPU synchronized around each call.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np
import sklearn

import twinlearn

from .. import _backend, _info
from .._config import check_device
from . import _config, _profile, _registry, _thresholds
from ._proxy import accelerated_class, fitted_on

# The widths measured by default are _thresholds.DEFAULT_COLS: reading a
# record needs them too.
DEFAULT_MAX_ROWS = 1 << 20
DEFAULT_BUDGET_S = 300.0
START_ROWS = 256
#: Timed runs per size after the warm-up run.
REPEATS = 3
#: A warm-up run at least this long is the only measurement at that size.
SINGLE_RUN_S = 1.0
#: The method timed after fit: the first the estimator routes.
MAIN_METHODS = ("predict", "transform", "kneighbors")


# -- the rule --------------------------------------------------------------------------
def crossover(times) -> int | None:
    """The threshold rule over timings ``[(rows, sklearn_s, twinlearn_s), ...]``.

    The smallest measured row count from which twinlearn is strictly faster
    at that size and at every larger size measured; None when twinlearn is
    not faster at the largest size (it never wins for good in the range).
    """
    result = None
    for rows, sk, tl in sorted(times, reverse=True):
        if not tl < sk:
            break
        result = rows
    return result


# -- measuring -------------------------------------------------------------------------
def _main_method(rs) -> str | None:
    for m in MAIN_METHODS:
        if m in rs.methods:
            return m
    return None


def _data(task, rows, cols, dtype):
    """Synthetic X (standard normal) and y for the task: three classes of a
    noisy linear score for a classifier, a noisy linear target for a regressor."""
    rng = np.random.default_rng(rows)
    X = rng.standard_normal((rows, cols)).astype(dtype, copy=False)
    if task is None:
        return X, None
    w = np.linspace(1.0, -1.0, cols)
    score = X @ w + 0.5 * rng.standard_normal(rows)
    if task == "classifier":
        return X, np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype(np.int64)
    return X, score.astype(dtype)


def _consume(out):
    if isinstance(out, types.GeneratorType):
        for _ in out:
            pass
    return out


def _sync_fn(device: str):
    """Waits for the queued GPU work of `device` (nothing on the CPU)."""
    if device == "cpu":
        return lambda: None
    mod = _backend.cuda()
    ctx = mod.Context(device, 0, "fast", 0, 0)
    return lambda: mod.synchronize(ctx)


def _commit() -> str:
    named = os.environ.get("TWINLEARN_BENCH_COMMIT")
    if named:
        return named
    root = Path(__file__).resolve().parents[3]
    if (root / ".git").exists():
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                 text=True, timeout=10)
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _device_name(device: str) -> str:
    if device == "cpu":
        return f"CPU: {_cpu_model()}"
    ordinal = int(device.split(":")[1])
    for g in _info.device_info()["gpus"]:
        if g.get("id") == ordinal:
            return g.get("name") or device
    return device


def machine_record(device: str) -> dict:
    now = _dt.datetime.now(_dt.timezone.utc)
    info = twinlearn.device_info()
    return {
        "device": device,
        "device_name": _device_name(device),
        # as JSON holds it (tuples become lists), so the returned record equals the file's
        "gpus": json.loads(json.dumps(info["gpus"])),
        "cpu": _cpu_model(),
        "cpu_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "twinlearn_threads": twinlearn.get_n_threads(),
        "date": now.date().isoformat(),
        "timestamp": now.isoformat(timespec="seconds"),
        "twinlearn_version": twinlearn.__version__,
        "twinlearn_commit": _commit(),
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
        "python": platform.python_version(),
    }


class _NotOnTwinlearn(RuntimeError):
    pass


def _served_params(rs) -> dict:
    """The entry's example parameters, with a fixed random_state where served."""
    params = dict(rs.entry.example)
    if "random_state" in rs.param_names and "random_state" not in params:
        trial = {**rs.defaults, **params, "random_state": 0}
        if rs.unsupported_param(trial) is None:
            params["random_state"] = 0
    return params


def _probe_dtype(rs, acc_cls, params, cols) -> tuple[str | None, str]:
    """float32 when the accelerated estimator fits float32 on twinlearn, else
    float64 when it fits that; (None, reason) when neither runs on twinlearn."""
    reason = ""
    for dtype in ("float32", "float64"):
        X, y = _data(rs.entry.task, 64, cols, dtype)
        est = acc_cls(**params)
        try:
            est.fit(X) if y is None else est.fit(X, y)
        except Exception as exc:  # scikit-learn's own error on the example
            return None, f"fit raised {type(exc).__name__}: {exc}"
        where = fitted_on(est)
        if where is not None and where.startswith("twinlearn:"):
            return dtype, ""
        reason = f"a {dtype} fit ran on {where}"
    return None, reason


class _Timer:
    """Times fit + main method of fresh estimators, GPU synchronized."""

    def __init__(self, rs, params, method, device, sync):
        self.rs, self.params, self.method, self.device, self.sync = rs, params, method, device, sync
        self.classes = {"sklearn": rs.sklearn_cls, "twinlearn": accelerated_class(rs)}

    def run(self, side, X, y):
        est = self.classes[side](**self.params)
        fit_args = (X,) if y is None else (X, y)
        self.sync()
        t0 = time.perf_counter()
        est.fit(*fit_args)
        self.sync()
        t1 = time.perf_counter()
        _consume(getattr(est, self.method)(X))
        self.sync()
        t2 = time.perf_counter()
        if side == "twinlearn":
            where = fitted_on(est)
            if where != f"twinlearn:{self.device}":
                raise _NotOnTwinlearn(f"the accelerated fit ran on {where}")
            if _profile.enabled:
                calls = [c for c in _profile.get_profile()["calls"]
                         if c["estimator"] == self.rs.name and c["method"] == self.method]
                _profile.reset_profile()
                if not any(c["backend"].startswith("twinlearn:") for c in calls):
                    raise _NotOnTwinlearn(f"the accelerated {self.method} ran on scikit-learn")
        return t2 - t0, t1 - t0


def _measure_size(timer, X, y, repeats):
    """Warm-up (checked to run on twinlearn), then alternating timed runs."""
    _profile.set_profiling(True)
    try:
        warm = {s: timer.run(s, X, y) for s in ("sklearn", "twinlearn")}
    finally:
        _profile.set_profiling(False)
    # A long warm-up run is the measurement; otherwise `repeats` timed runs,
    # the two sides alternating so that drift affects both alike.
    runs = {s: [warm[s]] if warm[s][0] >= SINGLE_RUN_S else [] for s in warm}
    for _ in range(repeats):
        for side in ("sklearn", "twinlearn"):
            if warm[side][0] < SINGLE_RUN_S:
                runs[side].append(timer.run(side, X, y))
    rec = {"rows": int(X.shape[0])}
    for side in ("sklearn", "twinlearn"):
        rec[f"{side}_s"] = statistics.median(t for t, _ in runs[side])
        rec[f"{side}_fit_s"] = statistics.median(f for _, f in runs[side])
        rec[f"{side}_runs"] = len(runs[side])
    return rec


def _predicted_cost(last, prev, repeats) -> float:
    """Seconds the next (doubled) size is expected to take, from the last two."""
    growth = 2.0
    if prev is not None:
        prev_total = prev["sklearn_s"] + prev["twinlearn_s"]
        if prev_total > 0:
            growth = min(4.0, max(2.0, (last["sklearn_s"] + last["twinlearn_s"]) / prev_total))
    cost = 0.0
    for side in ("sklearn", "twinlearn"):
        t = last[f"{side}_s"] * growth
        cost += t * (1 if t >= SINGLE_RUN_S else 1 + repeats)
    return cost


def _fmt_s(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def measure_one(rs, device, cols, max_rows, budget_s, repeats=REPEATS, log=None) -> dict:
    """The record of one resolved entry (raises _NotOnTwinlearn / ValueError
    when it cannot be measured)."""
    log = log or (lambda msg: None)
    start = time.monotonic()
    method = _main_method(rs)
    if method is None:
        raise ValueError(f"routes none of {', '.join(MAIN_METHODS)}")
    params = _served_params(rs)
    dtype, reason = _probe_dtype(rs, accelerated_class(rs), params, cols)
    if dtype is None:
        raise _NotOnTwinlearn(reason)
    timer = _Timer(rs, params, method, device, _sync_fn(device))
    log(f"{rs.name}: fit + {method}, {dtype}, {cols} columns, budget {budget_s:.0f} s")
    times, stopped = [], "max_rows"
    rows = START_ROWS
    while rows <= max_rows:
        if times:
            left = budget_s - (time.monotonic() - start)
            if _predicted_cost(times[-1], times[-2] if len(times) > 1 else None, repeats) > left:
                stopped = "budget"
                break
        X, y = _data(rs.entry.task, rows, cols, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings of short fits
            rec = _measure_size(timer, X, y, repeats)
        times.append(rec)
        sk, tl = rec["sklearn_s"], rec["twinlearn_s"]
        log(f"  {rows:>9} rows  scikit-learn {_fmt_s(sk):>10}  twinlearn {_fmt_s(tl):>10}  "
            f"x{sk / tl if tl > 0 else float('inf'):.2f}")
        del X, y
        rows *= 2
    min_rows = crossover([(t["rows"], t["sklearn_s"], t["twinlearn_s"]) for t in times])
    verdict = (f"twinlearn faster from {min_rows} rows" if min_rows is not None
               else "twinlearn never faster for good in the range")
    if device == "cpu":
        verdict += " (CPU backend: not a default)"
    log(f"  -> {rs.name}: {verdict} ({time.monotonic() - start:.1f} s)")
    return {
        "min_rows": min_rows,
        "min_cols": rs.entry.min_cols,
        "cols_measured": cols,
        "dtype": dtype,
        "method": method,
        "params": {k: v for k, v in params.items() if isinstance(v, (bool, int, float, str, type(None)))},
        "device": device,
        "device_name": _device_name(device),
        "date": _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
        "twinlearn_commit": _commit(),
        "sklearn_version": sklearn.__version__,
        "max_rows_measured": times[-1]["rows"] if times else 0,
        "stopped": stopped,
        "seconds": round(time.monotonic() - start, 3),
        "times": times,
    }


def _measure_widths(rs, device, widths, max_rows, budget_s, repeats, log) -> dict:
    """The record of one estimator: the narrowest width's, with the wider
    widths' thresholds and timings under "wider"; the budget is shared."""
    start = time.monotonic()
    rec = None
    for i, c in enumerate(widths):
        share = max(0.0, budget_s - (time.monotonic() - start)) / (len(widths) - i)
        one = measure_one(rs, device, c, max_rows, share, repeats, log)
        if rec is None:
            rec = one
            rec["wider"] = []
        else:
            rec["wider"].append({"cols": c, **{k: one[k] for k in (
                "min_rows", "min_cols", "dtype", "max_rows_measured", "stopped", "seconds", "times")}})
    return rec


def format_summary(data: dict, names=None) -> str:
    """One line per estimator of a results file: its threshold and the range measured."""
    names = list(data["estimators"]) + list(data.get("skipped") or {}) if names is None else names
    lines = [f"{'estimator':<32}{'columns':>8}{'min_rows':>12}  measured up to (stopped by)"]
    for n in names:
        rec = data["estimators"].get(n)
        if rec is None:
            lines.append(f"{n:<32}{'':>8}{'-':>12}  not measured: {(data.get('skipped') or {}).get(n, '?')}")
            continue
        first = {**rec, "cols": rec.get("cols_measured", "?")}
        for i, r in enumerate([first] + list(rec.get("wider", []))):
            shown = "never" if r["min_rows"] is None else str(r["min_rows"])
            lines.append(f"{n if i == 0 else '':<32}{r['cols']:>8}{shown:>12}  "
                         f"{r['max_rows_measured']} rows ({r['stopped']})")
    return "\n".join(lines)


def _write(data: dict, out: Path) -> None:
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, out)


def measure_thresholds(device="cuda", only=None, cols=_thresholds.DEFAULT_COLS,
                       max_rows=DEFAULT_MAX_ROWS, budget_s=DEFAULT_BUDGET_S, out=None, repeats=REPEATS,
                       log=None) -> dict:
    """Measure the threshold of each available estimator (or those named in
    `only`) and write the results file `out` (merged with the records of
    other estimators already there). The file is rewritten after each
    estimator, so a run cut short keeps what it measured. Returns the data.

    Measurements on the CPU backend (device 'cpu') never become defaults and
    may not be written to the packaged file.
    """
    device = check_device(device, "device")
    if device == "auto":
        raise ValueError("device must be 'cpu', 'cuda' or 'cuda:N' to measure thresholds")
    if out is None:
        if device == "cpu":
            raise ValueError("a CPU-backend measurement needs an output file (--out): "
                             "it never becomes the packaged defaults")
        out = _thresholds.PATH
    out = Path(out)
    if device == "cpu" and out.resolve() == _thresholds.PATH.resolve():
        raise ValueError(f"a CPU-backend measurement may not overwrite the packaged {_thresholds.PATH.name}")
    if device != "cpu":
        if not _backend.cuda_available():
            raise ValueError(f"no usable GPU: {_backend.cuda_unavailable_reason()}")
    widths = sorted({int(c) for c in ((cols,) if isinstance(cols, int) else cols)})
    if not widths or widths[0] < 1 or max_rows < START_ROWS:
        raise ValueError(f"cols must be one or more widths >= 1 and max_rows >= {START_ROWS}")
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))

    resolved = _registry.available()
    if only is not None:
        wanted = [_registry.lookup(n).name for n in only]
        resolved = [r for r in resolved if r.name in wanted]

    data = {"format": _thresholds.FORMAT, "machine": None, "estimators": {}, "skipped": {}}
    if out.exists():
        try:
            old = _thresholds.read(out)
            data["estimators"] = dict(old["estimators"])
            data["skipped"] = dict(old.get("skipped") or {})
        except (OSError, ValueError) as exc:
            log(f"replacing {out}: {exc}")
    data["machine"] = dict(machine_record(device), cols=widths, max_rows=max_rows,
                           budget_s=budget_s, repeats=repeats)

    old_device, old_over, old_prof = _config.get_device(), dict(_config._overrides), _profile.enabled
    _config.set_device(device)
    _config.set_threshold("*", 0, 0)
    start = time.monotonic()
    try:
        for i, rs in enumerate(resolved):
            share = max(0.0, budget_s - (time.monotonic() - start)) / (len(resolved) - i)
            data["estimators"].pop(rs.name, None)
            data["skipped"].pop(rs.name, None)
            try:
                data["estimators"][rs.name] = _measure_widths(rs, device, widths, max_rows, share, repeats, log)
            except Exception as exc:  # one estimator's failure must not lose the others
                data["skipped"][rs.name] = f"{type(exc).__name__}: {exc}"
                log(f"{rs.name}: not measured: {exc}")
            _write(data, out)
    finally:
        _config.set_device(old_device)
        _config._overrides.clear()
        _config._overrides.update(old_over)
        _profile.reset_profile()
        _profile.set_profiling(old_prof)
    if not resolved:
        _write(data, out)
    log(format_summary(data, [r.name for r in resolved]))
    log(f"wrote {out} ({time.monotonic() - start:.0f} s)")
    return data
