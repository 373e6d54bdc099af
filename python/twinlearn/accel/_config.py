"""Accelerator settings: device, per-estimator size thresholds, verbosity.

These are process-wide (the accelerated estimators of every thread follow
them) and separate from twinlearn's own configuration: ``set_device`` here
says where accelerated scikit-learn estimators run, not where native
twinlearn estimators do.

They start from the environment when twinlearn.accel is imported:

- ``TWINLEARN_ACCEL_DEVICE``: as :func:`set_device` (auto, cpu, cuda, cuda:N);
- ``TWINLEARN_ACCEL_THRESHOLD``: rows, as ``set_threshold(n)``;
- ``TWINLEARN_ACCEL_VERBOSE``: 1 for :func:`set_verbose`.

A value that is not valid is ignored with a RuntimeWarning.
``python -m twinlearn.accel`` sets them (with ``TWINLEARN_ACCEL=1``) for the
processes the program starts. :func:`snapshot` / :func:`apply_snapshot`
carry the settings to worker processes with the estimators sent there.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import warnings

from .. import _backend, _io
from .._config import check_device
from . import _profile, _registry, _thresholds

logger = logging.getLogger("twinlearn.accel")

_lock = threading.Lock()
_device = "auto"
_gpu_count: int | None = None
_overrides: dict[str, tuple[int, int]] = {}
_global_rows: int | None = None  # set_threshold(n)
_verbose_handler: logging.Handler | None = None
_exit_hook = False  # the end-of-run summary is registered with atexit
_reported = False  # ... and was said
_origin: int | None = None  # pid of the process whose settings apply_snapshot took
_applied: dict | None = None

ENV_DEVICE = "TWINLEARN_ACCEL_DEVICE"
ENV_THRESHOLD = "TWINLEARN_ACCEL_THRESHOLD"
ENV_VERBOSE = "TWINLEARN_ACCEL_VERBOSE"


# -- device -------------------------------------------------------------------
def set_device(device: str) -> None:
    """Where accelerated estimators run on twinlearn.

    'auto' (default): the first GPU when one is usable (or the GPU holding a
    device-array input); without a usable GPU scikit-learn runs. 'cuda' /
    'cuda:N': that GPU (scikit-learn runs when it is not usable). 'cpu':
    twinlearn's CPU backend.
    """
    global _device
    _device = check_device(device, "twinlearn.accel.set_device: device")


def get_device() -> str:
    return _device


def gpu_available() -> bool:
    """True when a GPU is usable here (what ``set_device('auto')`` runs on);
    twinlearn.device_info() says why not."""
    return _backend.cuda_available()


def _gpus() -> int:
    global _gpu_count
    if _gpu_count is None:
        _gpu_count = _backend.cuda_device_count()
    return _gpu_count


def target_device(X, on_device: bool):
    """(device, None) where twinlearn would run for input X, or (None, reason)."""
    dev = _device
    if dev == "cpu":
        return "cpu", None
    if on_device and dev == "auto":
        return _io.device_of(X), None
    if not _backend.cuda_available():
        return None, (
            f"no usable GPU ({_backend.cuda_unavailable_reason()}); "
            "twinlearn.accel.set_device('cpu') runs twinlearn's CPU backend"
        )
    if dev == "auto":
        return "cuda:0", None
    n = _gpus()
    if int(dev.split(":")[1]) >= n:
        return None, f"device {dev} does not exist ({n} GPU(s) visible)"
    return dev, None


# -- thresholds -----------------------------------------------------------------
def _check_count(value, what):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a non-negative integer or None; got {value!r}")
    return value


def _targets(name):
    if name in ("*", None):
        return [r.name for r in _registry.available()]
    return [_registry.lookup(name).name]


def set_threshold(name=None, min_rows=None, min_cols=None) -> None:
    """The size from which accelerated estimators run on twinlearn.

    ``set_threshold(n)``: every estimator from `n` rows on (any number of
    columns), in place of the defaults measured per estimator;
    ``set_threshold(None)``: the defaults again. An estimator's own threshold
    (below) still takes precedence over `n`.

    ``set_threshold(name, min_rows, min_cols)``: estimator `name` from
    `min_rows` rows and `min_cols` columns on (None: no minimum). `name` is a
    class name (``"StandardScaler"``), its scikit-learn path, or ``"*"`` for
    every accelerated estimator. :func:`reset_thresholds` undoes both forms.
    """
    global _global_rows
    if name is None or not isinstance(name, str):
        if min_rows is not None or min_cols is not None:
            raise TypeError("twinlearn.accel.set_threshold: give an estimator name with min_rows/min_cols "
                            f"(set_threshold(n) sets every estimator's min_rows); got {name!r}")
        with _lock:
            _global_rows = None if name is None else _check_count(name, "the threshold")
        return
    rows = 0 if min_rows is None else _check_count(min_rows, "min_rows")
    cols = 0 if min_cols is None else _check_count(min_cols, "min_cols")
    with _lock:
        for n in _targets(name):
            _overrides[n] = (rows, cols)


def global_threshold() -> int | None:
    """The rows of ``set_threshold(n)`` in force, or None (the measured defaults)."""
    return _global_rows


def update_threshold(name, min_rows=None, min_cols=None) -> None:
    """Change the given limits of estimator `name` (None keeps the current one)."""
    if min_rows is not None:
        _check_count(min_rows, "min_rows")
    if min_cols is not None:
        _check_count(min_cols, "min_cols")
    with _lock:
        for n in _targets(name):
            rows, cols = threshold(n)
            _overrides[n] = (rows if min_rows is None else min_rows, cols if min_cols is None else min_cols)


def reset_thresholds() -> None:
    """Back to each estimator's default threshold (measured on a GPU where
    the packaged thresholds.json has a measurement, else the placeholder)."""
    global _global_rows
    with _lock:
        _overrides.clear()
        _global_rows = None


def threshold(name: str) -> tuple[int, int]:
    """(min_rows, min_cols) in force for estimator `name` (class name); a
    default measured at several widths gives the narrowest width's here, and
    data of d columns takes the widest measured width <= d."""
    t = _overrides.get(name)
    if t is not None:
        return t
    entry = _registry.lookup(name).entry  # an unknown name raises
    return _set_limits(name) or _thresholds.default_threshold(entry)


def _set_limits(name: str) -> tuple[int, int] | None:
    """The limits set_threshold set for estimator `name`: its own, else
    the rows of set_threshold(n); None when neither is set."""
    t = _overrides.get(name)
    if t is None and _global_rows is not None:
        t = (_global_rows, 0)
    return t


def below_threshold(rs, n_samples: int, n_features: int) -> str | None:
    """The reason X is too small for resolved entry `rs`, or None."""
    t = _set_limits(rs.name)
    rows, cols = t if t is not None else _thresholds.default_threshold(rs.entry, n_features)
    if n_samples < rows:
        never = _thresholds.never_reason(rs.name, n_features) if t is None and rows == _thresholds.NEVER else None
        if never is not None:
            return never
        return f"below threshold {rows} rows (n_samples={n_samples})"
    if n_features < cols:
        return f"below threshold {cols} columns (n_features={n_features})"
    return None


# -- verbosity ------------------------------------------------------------------
class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time of each record."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def set_verbose(verbose: bool = True) -> None:
    """Print each dispatch decision and its reason (logger ``twinlearn.accel``)
    to stderr; False stops it. A process still verbose when it exits says so
    if nothing ran on twinlearn (:func:`report_idle`)."""
    global _verbose_handler, _exit_hook
    with _lock:
        if verbose and not _exit_hook:
            atexit.register(_report_if_verbose)
            _exit_hook = True
        if verbose and _verbose_handler is None:
            h = _StderrHandler()
            h.setFormatter(logging.Formatter("[twinlearn.accel] %(message)s"))
            logger.addHandler(h)
            logger.setLevel(logging.INFO)
            _verbose_handler = h
        elif not verbose and _verbose_handler is not None:
            logger.removeHandler(_verbose_handler)
            logger.setLevel(logging.NOTSET)
            _verbose_handler = None


def get_verbose() -> bool:
    return _verbose_handler is not None


def report_idle() -> None:
    """Say once, as a warning of the ``twinlearn.accel`` logger (printed to
    stderr when nothing handles it), that nothing ran on twinlearn in this
    process and why (see ``_profile.idle_summary``). Worker processes say
    nothing: their parent speaks for the run."""
    global _reported
    if _reported:
        return
    _reported = True
    import multiprocessing

    if multiprocessing.parent_process() is not None or _origin is not None:
        return
    msg = _profile.idle_summary()
    if msg is None or not logger.isEnabledFor(logging.WARNING):
        return
    if logger.hasHandlers():
        logger.warning(msg)
    else:
        sys.stderr.write(f"twinlearn.accel: {msg}\n")


def _report_if_verbose() -> None:
    if get_verbose():
        report_idle()


# -- across processes ---------------------------------------------------------------
def snapshot() -> dict:
    """The settings, for a worker process (:func:`apply_snapshot`)."""
    with _lock:
        return {
            "origin": os.getpid() if _origin is None else _origin,
            "device": _device,
            "threshold": _global_rows,
            "overrides": dict(_overrides),
            "verbose": _verbose_handler is not None,
        }


def apply_snapshot(snap: dict) -> bool:
    """Take the settings of :func:`snapshot` made in another process; False
    (and nothing changes) for a snapshot of this process's own settings,
    as when an estimator comes back from a worker."""
    global _device, _global_rows, _origin, _applied
    if snap["origin"] == os.getpid():
        return False
    if snap != _applied:
        with _lock:
            _device = snap["device"]
            _global_rows = snap["threshold"]
            _overrides.clear()
            _overrides.update(snap["overrides"])
            _origin = snap["origin"]
            _applied = snap
        set_verbose(snap["verbose"])
    return True


def export_environ(environ=os.environ) -> None:
    """Write the settings to the TWINLEARN_ACCEL_* variables (with
    TWINLEARN_ACCEL=1) for the processes started from now on."""
    environ["TWINLEARN_ACCEL"] = "1"
    environ[ENV_DEVICE] = _device
    if _global_rows is None:
        environ.pop(ENV_THRESHOLD, None)
    else:
        environ[ENV_THRESHOLD] = str(_global_rows)
    environ[ENV_VERBOSE] = "1" if get_verbose() else "0"


def _from_environ(environ) -> None:
    global _global_rows
    dev = environ.get(ENV_DEVICE, "").strip()
    if dev:
        try:
            set_device(dev)
        except ValueError as exc:
            warnings.warn(f"{ENV_DEVICE} ignored: {exc}", RuntimeWarning, stacklevel=2)
    rows = environ.get(ENV_THRESHOLD, "").strip()
    if rows:
        try:
            _global_rows = _check_count(int(rows), ENV_THRESHOLD)
        except ValueError:
            warnings.warn(f"{ENV_THRESHOLD} ignored: a number of rows (0 or more) is expected; got {rows!r}",
                          RuntimeWarning, stacklevel=2)
    if environ.get(ENV_VERBOSE, "").strip().lower() not in ("", "0", "false", "no", "off"):
        set_verbose(True)


_from_environ(os.environ)
