"""Time spent per estimator and method on twinlearn versus scikit-learn.

Off by default (no clock is read). ``python -m twinlearn.accel --profile``
turns it on and prints :func:`format_profile` at exit. Fallbacks are counted
by kind of reason (``sparse``, ``threshold``, ``param``...) so a run can say
why scikit-learn served a call.

Whether profiling or not, routed calls are tallied (twinlearn or the kind
of fallback, no clock) so that a run which accelerated nothing can say so
and why (:func:`idle_summary`).
"""

from __future__ import annotations

import threading
from collections import Counter

_lock = threading.Lock()
enabled = False
# (estimator, method, backend) -> [calls, seconds]
_times: dict[tuple[str, str, str], list] = {}
# (estimator, method, reason kind) -> fallbacks
_reasons: Counter = Counter()

# The tally, always on: calls run on twinlearn, fallbacks per reason kind
# (with the first such call's "Estimator.method: reason"), and accelerated
# estimators sent to other processes (whose calls are counted there).
ran = 0
shipped = 0
_fell_back: Counter = Counter()
_first_reason: dict[str, str] = {}

# What a user can do about the most common kinds of fallback.
_HINTS = {
    "threshold": "twinlearn.accel.set_threshold(0) sends every size to twinlearn",
}


def set_profiling(on: bool = True) -> None:
    """Record the time of every routed call (see :func:`get_profile`)."""
    global enabled
    enabled = bool(on)


def reset_profile() -> None:
    with _lock:
        _times.clear()
        _reasons.clear()


def record(estimator: str, method: str, backend: str, seconds: float, reason_kind: str | None = None):
    with _lock:
        row = _times.get((estimator, method, backend))
        if row is None:
            _times[(estimator, method, backend)] = [1, seconds]
        else:
            row[0] += 1
            row[1] += seconds
        if reason_kind is not None:
            _reasons[(estimator, method, reason_kind)] += 1


def get_profile() -> dict:
    """``{"calls": [{estimator, method, backend, calls, seconds}...],
    "fallbacks": [{estimator, method, reason, calls}...]}``."""
    with _lock:
        calls = [
            {"estimator": e, "method": m, "backend": b, "calls": n, "seconds": s}
            for (e, m, b), (n, s) in sorted(_times.items())
        ]
        falls = [
            {"estimator": e, "method": m, "reason": r, "calls": n}
            for (e, m, r), n in sorted(_reasons.items())
        ]
    return {"calls": calls, "fallbacks": falls}


def note_fallback(estimator: str, method: str, kind: str, reason: str) -> None:
    _fell_back[kind] += 1
    if kind not in _first_reason:
        _first_reason[kind] = f"{estimator}.{method}: {reason}"


def idle_summary() -> str | None:
    """One line saying that nothing ran on twinlearn in this process, and the
    main reason; None when something did, or when no call was made here but
    accelerated estimators were sent to other processes (this one cannot
    tell what ran there)."""
    if ran:
        return None
    calls = sum(_fell_back.values())
    if calls == 0:
        if shipped:
            return None
        return ("nothing ran on twinlearn: no estimator it accelerates was called "
                "(twinlearn.accel.supported_estimators() lists them)")
    kind, n = _fell_back.most_common(1)[0]
    reason = _first_reason[kind]
    hint = _HINTS.get(kind)
    if hint is not None and "set_threshold" not in reason:
        reason = f"{reason}; {hint}"
    elsewhere = " (accelerated estimators sent to worker processes are not counted here)" if shipped else ""
    return (f"nothing ran on twinlearn: {_calls(calls)} of accelerated estimators ran on scikit-learn"
            f"{elsewhere}; main reason ({_calls(n)}): {reason}")


def _calls(n: int) -> str:
    return f"{n} call{'s' if n != 1 else ''}"


def format_profile() -> str:
    """The profile as a text table."""
    prof = get_profile()
    if not prof["calls"]:
        return "twinlearn.accel profile: no accelerated estimator was called"
    head = ("estimator", "method", "backend", "calls", "total s", "mean ms")
    rows = [
        (c["estimator"], c["method"], c["backend"], str(c["calls"]),
         f"{c['seconds']:.4f}", f"{1e3 * c['seconds'] / c['calls']:.3f}")
        for c in prof["calls"]
    ]
    totals: dict[str, float] = {}
    for c in prof["calls"]:
        side = "twinlearn" if c["backend"].startswith("twinlearn") else "scikit-learn"
        totals[side] = totals.get(side, 0.0) + c["seconds"]
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]

    def line(r):
        return "  ".join(
            s.rjust(w) if i >= 3 else s.ljust(w) for i, (s, w) in enumerate(zip(r, widths))
        ).rstrip()

    out = ["twinlearn.accel profile", line(head), line(tuple("-" * w for w in widths))]
    out += [line(r) for r in rows]
    out.append(
        "total: " + ", ".join(f"{k} {v:.4f} s" for k, v in sorted(totals.items()))
    )
    if prof["fallbacks"]:
        out.append("scikit-learn fallbacks by reason:")
        out += [
            f"  {f['estimator']}.{f['method']}: {f['reason']} x{f['calls']}"
            for f in prof["fallbacks"]
        ]
    return "\n".join(out)
