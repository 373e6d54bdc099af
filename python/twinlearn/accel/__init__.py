"""Run unchanged scikit-learn code on twinlearn.

Entry points (all give the same accelerated estimators):

- ``twinlearn.accelerate(obj)``: an estimator, a class, a factory function
  (``@twinlearn.accelerate``) or a meta-estimator (``Pipeline``...);
- ``with twinlearn.accel.enabled():``: estimators created in the block;
  ``with twinlearn.accel.accelerate_context(device=..., threshold=...,
  verbose=...):`` the same with those settings for the block, restored after;
- ``twinlearn.accel.install()`` / ``uninstall()``: process-wide, including
  ``from sklearn... import ...`` afterwards;
- ``python -m twinlearn.accel script.py [args]`` or ``-m module [args]``
  (``--profile`` prints where the time went, ``--verbose`` every decision);
- ``%load_ext twinlearn.accel`` in IPython / Jupyter;
- ``TWINLEARN_ACCEL=1`` in the environment of a Python started with
  twinlearn installed (a ``.pth`` file in site-packages), or before
  ``import twinlearn``.

An accelerated estimator is the scikit-learn estimator (a subclass of its
class, with exactly its parameters) whose fit and prediction methods run on
twinlearn when twinlearn serves the parameters, the input and its size, and
on scikit-learn otherwise, with the reason logged on the ``twinlearn.accel``
logger (:func:`set_verbose`). docs/SUPPORT_MATRIX.md lists what runs where.

Settings: :func:`set_device`; :func:`gpu_available` (whether a GPU is
usable); ``set_threshold(n)`` (every estimator from n rows on, in place of
the measured per-estimator thresholds; ``set_threshold(None)`` restores
them) or ``set_threshold(name, min_rows, min_cols)`` for one estimator;
:func:`set_verbose`. They start from ``TWINLEARN_ACCEL_DEVICE``,
``TWINLEARN_ACCEL_THRESHOLD`` and ``TWINLEARN_ACCEL_VERBOSE``, which
``python -m twinlearn.accel`` sets (with ``TWINLEARN_ACCEL=1``) for the
processes the program starts.

Worker processes: an accelerated estimator sent to another process by
joblib's loky backend (``n_jobs`` in scikit-learn) or by multiprocessing
arrives accelerated, with its twinlearn fit and the sender's settings
(``_workers``); ``pickle.dump`` / ``joblib.dump`` still write the plain
scikit-learn estimator.

Nothing accelerated: at the end of ``python -m twinlearn.accel`` (and at
exit of a process still verbose), when no call ran on twinlearn, one
warning on the ``twinlearn.accel`` logger (printed to stderr unless logging
is configured) gives the main reason. Silent otherwise, and in worker
processes.
"""

from __future__ import annotations

from . import _profile, _registry, _workers  # noqa: F401 (_workers: estimators sent to worker processes)
from ._config import (
    get_device,
    get_verbose,
    gpu_available,
    reset_thresholds,
    set_device,
    set_threshold,
    set_verbose,
    threshold,
    update_threshold,
)
from ._matrix import support_matrix
from ._overhead import measure_overhead
from ._patch import accelerate_context, enabled, install, is_active, is_installed, uninstall
from ._profile import format_profile, get_profile, reset_profile, set_profiling
from ._proxy import fitted_on, plain_class
from ._wrap import accelerate, is_accelerated

__all__ = [
    "accelerate",
    "accelerate_context",
    "device_info",
    "enabled",
    "fitted_on",
    "format_profile",
    "get_config",
    "get_device",
    "get_profile",
    "get_verbose",
    "gpu_available",
    "install",
    "is_accelerated",
    "is_active",
    "is_installed",
    "load_ipython_extension",
    "measure_overhead",
    "plain_class",
    "reset_profile",
    "reset_thresholds",
    "set_device",
    "set_profiling",
    "set_threshold",
    "set_verbose",
    "supported_estimators",
    "support_matrix",
    "threshold",
    "uninstall",
    "unload_ipython_extension",
    "update_threshold",
]


def supported_estimators() -> list[str]:
    """scikit-learn paths of the estimators twinlearn serves in this build."""
    return [r.entry.sklearn for r in _registry.available()]


def get_config() -> dict:
    """The accelerator's settings: device, whether a GPU is usable, verbosity,
    profiling, whether it is installed or active, the rows of
    ``set_threshold(n)`` (None: unset) and the size threshold in force for
    each estimator."""
    from ._config import global_threshold

    return {
        "device": get_device(),
        "gpu_available": gpu_available(),
        "verbose": get_verbose(),
        "profiling": _profile.enabled,
        "installed": is_installed(),
        "active": is_active(),
        "global_threshold": global_threshold(),
        "thresholds": {
            r.name: dict(zip(("min_rows", "min_cols"), threshold(r.name)))
            for r in _registry.available()
        },
        "estimators": supported_estimators(),
        "skipped": _registry.skipped(),
    }


def device_info() -> dict:
    """twinlearn's :func:`twinlearn.device_info` plus where the accelerator
    runs now: ``accel_device`` (the setting) and ``accel_target`` (the device
    used for NumPy input, or None with ``accel_reason``)."""
    from .. import _info
    from ._config import target_device

    info = _info.device_info()
    dev, reason = target_device(None, False)
    info.update(accel_device=get_device(), accel_target=dev, accel_reason=reason)
    return info


def load_ipython_extension(ipython) -> None:
    """``%load_ext twinlearn.accel``: install the accelerator in this kernel."""
    install()


def unload_ipython_extension(ipython) -> None:
    """``%unload_ext twinlearn.accel``: uninstall it."""
    uninstall()
