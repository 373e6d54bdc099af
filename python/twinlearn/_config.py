"""Process-wide configuration: device, numeric mode and CPU thread count.

The starting values come from the environment at import time
(``TWINLEARN_DEVICE``, ``TWINLEARN_NUMERIC_MODE``, ``TWINLEARN_NUM_THREADS``);
``set_*`` functions change them for the process and :func:`config_context`
changes them for a ``with`` block (per thread, like scikit-learn's own
configuration).
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager

NUMERIC_MODES = ("fast", "deterministic", "identical")
_MODE_RANK = {m: i for i, m in enumerate(NUMERIC_MODES)}
_DEVICE_RE = re.compile(r"^(auto|cpu|cuda|cuda:\d{1,6}|gpu|gpu:\d{1,6})$")
# The most CPU threads one call may ask for: beyond it a request is a mistake
# (and would not fit the backend's int).
MAX_THREADS = 1 << 16
CPU_ISAS = ("baseline", "avx2", "avx512")

ENV_VARS = {
    "TWINLEARN_DEVICE": "default device: auto | cpu | cuda | cuda:N",
    "TWINLEARN_NUMERIC_MODE": "default numeric mode: fast | deterministic | identical",
    "TWINLEARN_NUM_THREADS": "threads for the CPU backend (0 = all cores)",
    "TWINLEARN_CPU_ISA": "cap the CPU kernels' instruction set: baseline | avx2 | avx512 (same bits)",
    "TWINLEARN_IDENTITY_TRACE": "file to which estimators append their identity trace",
    "TWINLEARN_ACCEL": "1 = install the scikit-learn accelerator at interpreter start",
    "TWINLEARN_REQUIRE_GPU": "1 = GPU tests fail instead of skipping when no GPU is usable",
}


def check_device(device, name="device"):
    """Validate a device string; returns it normalised ('cuda' -> 'cuda:0';
    'gpu' and 'gpu:N' are aliases of 'cuda' and 'cuda:N')."""
    if not isinstance(device, str) or not _DEVICE_RE.match(device):
        raise ValueError(
            f"{name} must be 'auto', 'cpu', 'cuda' or 'cuda:N' (N a GPU ordinal; 'gpu' is an alias "
            f"of 'cuda'); got {device!r}"
        )
    if device.startswith("gpu"):
        device = "cuda" + device[3:]
    return "cuda:0" if device == "cuda" else device


def check_numeric_mode(mode, name="numeric_mode"):
    if mode not in NUMERIC_MODES:
        raise ValueError(
            f"{name} must be one of 'fast', 'deterministic', 'identical'; got {mode!r}"
        )
    return mode


def check_n_threads(n, name="n_threads", shown=None):
    """Validate a thread count (0 = all cores); `shown` is what the user wrote
    when it is not `n` itself (an environment variable's text)."""
    got = shown if shown is not None else repr(n)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"{name} must be a non-negative integer (0 = all cores); got {got}")
    if n > MAX_THREADS:
        raise ValueError(f"{name} must be at most {MAX_THREADS} (0 = all cores); got {got}")
    return n


def mode_satisfies(delivered: str, requested: str) -> bool:
    """True when a result computed in `delivered` mode honours a `requested` mode."""
    return _MODE_RANK[delivered] >= _MODE_RANK[requested]


def _from_env():
    cfg = {"device": "auto", "numeric_mode": "deterministic", "n_threads": 0}
    if "TWINLEARN_DEVICE" in os.environ:
        cfg["device"] = check_device(os.environ["TWINLEARN_DEVICE"], "TWINLEARN_DEVICE")
    if "TWINLEARN_NUMERIC_MODE" in os.environ:
        cfg["numeric_mode"] = check_numeric_mode(
            os.environ["TWINLEARN_NUMERIC_MODE"], "TWINLEARN_NUMERIC_MODE"
        )
    if "TWINLEARN_NUM_THREADS" in os.environ:
        raw = os.environ["TWINLEARN_NUM_THREADS"]
        try:
            n = int(raw.strip())
        except ValueError:
            n = None
        cfg["n_threads"] = check_n_threads(n, "TWINLEARN_NUM_THREADS", shown=repr(raw))
    isa = os.environ.get("TWINLEARN_CPU_ISA")
    if isa is not None and isa not in CPU_ISAS:
        # The CPU backend reads it itself; an unknown value would be ignored there.
        raise ValueError(f"TWINLEARN_CPU_ISA must be one of 'baseline', 'avx2', 'avx512'; got {isa!r}")
    return cfg


_global_config = _from_env()
_local = threading.local()


def _get_threadlocal():
    if not hasattr(_local, "config"):
        _local.config = dict(_global_config)
    return _local.config


def get_config() -> dict:
    """The configuration in force in this thread, as a new dict."""
    return dict(_get_threadlocal())


def _set_default(key, value):
    """Set a checked setting for new threads and for this one."""
    _global_config[key] = value
    _get_threadlocal()[key] = value


def set_device(device: str) -> None:
    """Default device for estimators whose ``device`` is None:
    'auto' (the first GPU when one is usable, else the CPU), 'cpu', 'cuda' or 'cuda:N'."""
    _set_default("device", check_device(device))


def get_device() -> str:
    return _get_threadlocal()["device"]


def set_numeric_mode(mode: str) -> None:
    """Default numeric mode for estimators whose ``numeric_mode`` is None."""
    _set_default("numeric_mode", check_numeric_mode(mode))


def get_numeric_mode() -> str:
    return _get_threadlocal()["numeric_mode"]


def set_n_threads(n: int) -> None:
    """Threads used by the CPU backend (0 = all cores)."""
    _set_default("n_threads", check_n_threads(n))


def get_n_threads() -> int:
    """Threads the CPU backend uses now: 1 in a forked child (see _FORKED)."""
    return 1 if _FORKED else _get_threadlocal()["n_threads"]


#: True in a process forked (without exec) from one that imported twinlearn.
#: OpenMP's thread pool does not survive fork: the child's first parallel
#: region waits forever for the parent's worker threads. There the CPU backend
#: runs on one thread (identical-mode results do not depend on the count).
_FORKED = False


def _after_fork_in_child():
    global _FORKED
    _FORKED = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def config_context(*, device=None, numeric_mode=None, n_threads=None):
    """Temporarily change the configuration of this thread.

    >>> import twinlearn
    >>> with twinlearn.config_context(numeric_mode="identical"):
    ...     twinlearn.get_numeric_mode()
    'identical'
    """
    cfg = _get_threadlocal()
    old = dict(cfg)
    new = {}
    if device is not None:
        new["device"] = check_device(device)
    if numeric_mode is not None:
        new["numeric_mode"] = check_numeric_mode(numeric_mode)
    if n_threads is not None:
        new["n_threads"] = check_n_threads(n_threads)
    cfg.update(new)
    try:
        yield
    finally:
        cfg.clear()
        cfg.update(old)


def n_threads_context(n_jobs):
    """A :func:`config_context` setting the CPU threads from scikit-learn's
    ``n_jobs`` (None: unchanged; -1: all cores, -2: all but one, ...)."""
    from contextlib import nullcontext

    if n_jobs is None:
        return nullcontext()
    if n_jobs < 0:
        return config_context(n_threads=max(1, (os.cpu_count() or 1) + 1 + n_jobs))
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, a positive count or -1")
    return config_context(n_threads=int(n_jobs))
