"""Accelerator settings: device, per-estimator size thresholds, verbosity.

These are process-wide (the accelerated estimators of every thread follow
them) and separate from twinlearn's own configuration: ``set_device`` here
says where accelerated scikit-learn estimators run, not where native
twinlearn estimators do.
"""

from __future__ import annotations

import logging
import sys
import threading

from .. import _backend, _io
from .._config import check_device
from . import _registry, _thresholds

logger = logging.getLogger("twinlearn.accel")

_lock = threading.Lock()
_device = "auto"
_gpu_count: int | None = None
_overrides: dict[str, tuple[int, int]] = {}
_verbose_handler: logging.Handler | None = None


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


def set_threshold(name, min_rows=None, min_cols=None) -> None:
    """Run estimator `name` on twinlearn from `min_rows` rows and `min_cols`
    columns on (None: no minimum). `name` is a class name (``"StandardScaler"``),
    its scikit-learn path, or ``"*"`` for every accelerated estimator."""
    rows = 0 if min_rows is None else _check_count(min_rows, "min_rows")
    cols = 0 if min_cols is None else _check_count(min_cols, "min_cols")
    with _lock:
        for n in _targets(name):
            _overrides[n] = (rows, cols)


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
    with _lock:
        _overrides.clear()


def threshold(name: str) -> tuple[int, int]:
    """(min_rows, min_cols) in force for estimator `name` (class name); a
    default measured at several widths gives the narrowest width's here, and
    data of d columns takes the widest measured width <= d."""
    t = _overrides.get(name)
    if t is not None:
        return t
    return _thresholds.default_threshold(_registry.lookup(name).entry)


def below_threshold(rs, n_samples: int, n_features: int) -> str | None:
    """The reason X is too small for resolved entry `rs`, or None."""
    t = _overrides.get(rs.name)
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
    to stderr; False stops it."""
    global _verbose_handler
    with _lock:
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
