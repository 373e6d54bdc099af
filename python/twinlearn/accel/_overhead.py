"""Per-call cost of the accelerator: an accelerated estimator against the
native twinlearn estimator doing the same work on the same data, and the
accelerator's own time per call (the twinlearn method it calls replaced by
one that returns the result at once)."""

from __future__ import annotations

import time
import types
from collections.abc import Iterator

import numpy as np

from . import _config, _proxy, _registry


def _data(task, n, d, rng):
    X = rng.standard_normal((n, d))
    if task == "classifier":
        return X, (X[:, 0] > 0).astype(np.int64)
    if task == "regressor":
        return X, X @ rng.standard_normal(d)
    return X, None


def _consume(out):
    """Run an iterator (staged predictions) to its end."""
    if isinstance(out, Iterator):
        for _ in out:
            pass
    return out


MIN_REPEATS = 1


def _deadline(now, until, parts):
    """The end of the first of `parts` equal shares of the time up to `until`."""
    return None if until is None else now + max(until - now, 0.0) / parts


def measure_overhead(n_samples=256, n_features=8, repeats=300, device="cpu", estimators=None,
                     budget_s=None, progress=None) -> dict:
    """Median and minimum time per call of each routed method, accelerated and native.

    Returns ``{estimator: {method: {"accelerated_us", "native_us",
    "overhead_us", "overhead_min_us", "proxy_us", "repeats"}}}`` where
    overhead_us is the difference of the medians and overhead_min_us the
    difference of the minima (calls alternate between the two so drift
    affects both alike), and proxy_us the median time of the accelerated
    call with the twinlearn method it runs answering at once: the
    accelerator's own work (checks, routing, mirroring the fitted attributes,
    output conversion), free of the run-to-run noise of the computation,
    which dominates the differences for long calls. The accelerator's
    thresholds are set to 0 and its device to `device` while measuring,
    then restored.

    `estimators`: class names to measure (default: all). `budget_s`: seconds
    for the whole measurement, split evenly across the estimators and their
    methods; a method stops before `repeats` calls when its share is spent,
    but makes one at least (so a budget too small for that is overrun).
    `progress(name, results)` is called as each estimator is done.
    """
    rng = np.random.default_rng(0)
    resolved = _registry.available()
    if estimators is not None:
        resolved = [r for r in resolved if r.name in estimators]
    old_device = _config.get_device()
    old_over = dict(_config._overrides)
    _config.set_device(device)
    _config.set_threshold("*", 0, 0)
    results = {}
    until = None if budget_s is None else time.perf_counter() + budget_s
    try:
        for i, rs in enumerate(resolved):
            est_until = _deadline(time.perf_counter(), until, len(resolved) - i)
            results[rs.name] = _measure_one(rs, rng, n_samples, n_features, repeats, device, est_until)
            if progress is not None:
                progress(rs.name, results[rs.name])
    finally:
        _config.set_device(old_device)
        _config._overrides.clear()
        _config._overrides.update(old_over)
    return results


def _measure_one(rs, rng, n_samples, n_features, repeats, device, until) -> dict:
    X, y = _data(rs.entry.task, n_samples, n_features, rng)
    acc = _proxy.accelerated_class(rs)(**rs.entry.example)
    params = {k: getattr(acc, k) for k in rs.param_names}
    nat = rs.twinlearn_cls(**rs.translate(params))
    if "device" in rs.tl_param_names:
        nat.device = device
    fit_args = (X,) if y is None else (X, y)
    acc.fit(*fit_args)
    nat.fit(*fit_args)
    if _proxy.fitted_on(acc) != f"twinlearn:{device}":
        raise RuntimeError(f"{rs.name} did not run on twinlearn while measuring")
    per = {}
    methods = [m for m in rs.methods if m not in ("partial_fit", "score")]
    for j, m in enumerate(methods):
        m_until = _deadline(time.perf_counter(), until, len(methods) - j)
        half = _deadline(time.perf_counter(), m_until, 2)
        if m == "inverse_transform":
            args = (nat.transform(X),)
        else:
            args = fit_args if m.startswith("fit") else (X,)
        fa, fn = getattr(acc, m), getattr(nat, m)
        ta, tn = [], []
        while len(ta) < repeats and (half is None or len(ta) < MIN_REPEATS or time.perf_counter() < half):
            t0 = time.perf_counter()
            _consume(fa(*args))
            t1 = time.perf_counter()
            _consume(fn(*args))
            t2 = time.perf_counter()
            ta.append(t1 - t0)
            tn.append(t2 - t1)
        ma, mn = float(np.median(ta)), float(np.median(tn))
        per[m] = {
            "accelerated_us": 1e6 * ma,
            "native_us": 1e6 * mn,
            "overhead_us": 1e6 * (ma - mn),
            "overhead_min_us": 1e6 * (min(ta) - min(tn)),
            "proxy_us": 1e6 * _proxy_only(rs, acc, m, args, repeats, m_until),
            "repeats": len(ta),
        }
    return per


_MISSING = object()


def _proxy_only(rs, acc, method, args, repeats, until=None) -> float:
    """Median seconds of ``acc.<method>(*args)`` with the twinlearn method it
    runs replaced by one returning that method's last result at once
    (`repeats` calls, fewer once `until` has passed)."""
    tl_cls = rs.twinlearn_cls
    rec = acc.__dict__["_twinlearn"]
    real = getattr(tl_cls, method)
    out = real(rec.est, *args)
    if isinstance(out, types.GeneratorType):
        items = list(out)
        answer = lambda self, *a, **k: iter(items)  # noqa: E731
    else:
        answer = lambda self, *a, **k: out  # noqa: E731
    own = tl_cls.__dict__.get(method, _MISSING)
    setattr(tl_cls, method, answer)
    try:
        times = []
        while len(times) < repeats and (until is None or len(times) < MIN_REPEATS or time.perf_counter() < until):
            t0 = time.perf_counter()
            _consume(getattr(acc, method)(*args))
            times.append(time.perf_counter() - t0)
    finally:
        if own is _MISSING:
            delattr(tl_cls, method)
        else:
            setattr(tl_cls, method, own)
    return float(np.median(times))


HEADER = ("estimator.method        accelerated us   native us   overhead us (median, min)   "
          "accelerator's own us")


def format_rows(estimator: str, per: dict) -> str:
    """The lines of one estimator's results (see :func:`format_overhead`)."""
    return "\n".join(
        f"{estimator + '.' + m:<24}{r['accelerated_us']:>14.1f}{r['native_us']:>12.1f}"
        f"{r['overhead_us']:>12.1f}{r['overhead_min_us']:>8.1f}{r['proxy_us']:>18.1f}"
        for m, r in per.items()
    )


def format_overhead(results: dict) -> str:
    return "\n".join([HEADER] + [format_rows(est, per) for est, per in results.items() if per])
