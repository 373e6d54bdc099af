"""Accelerated estimators sent to worker processes stay accelerated.

``pickle.dump`` / ``joblib.dump`` write an accelerated estimator as its
plain scikit-learn class (``_proxy``), so that the file loads anywhere. The
picklers that send objects to other processes of the same run are told
apart: multiprocessing's (``ForkingPickler``: every start method, Pool,
ProcessPoolExecutor) and the one of joblib's loky backend (``n_jobs`` of
scikit-learn's ``cross_val_score``, ``GridSearchCV``...). Through them an
accelerated estimator travels as ``rebuild(module, name, state, settings)``:

- the receiving process imports twinlearn and gets the accelerated
  estimator, with its twinlearn fit when it had one (a fit made in a worker
  comes back as that fit);
- ``settings`` are the sender's accelerator settings (device, thresholds,
  verbosity, whether installed: ``_config.snapshot``); a worker takes them
  before it runs anything, so it decides as its parent would. A process
  receiving its own settings back (an estimator returned by a worker)
  keeps its current ones.

Only the estimators themselves carry this: a worker that receives none
(a task creating its estimators itself) is accelerated when it starts with
``TWINLEARN_ACCEL=1`` and the TWINLEARN_ACCEL_* settings, which
``python -m twinlearn.accel`` sets for the processes it starts.
"""

from __future__ import annotations

import functools
import importlib
from multiprocessing.reduction import ForkingPickler

from joblib.externals.loky.backend import reduction as _loky_reduction

from . import _config, _patch, _profile, _proxy, _registry


def _settings() -> dict:
    snap = _config.snapshot()
    snap["installed"] = _patch.is_installed()
    return snap


def _apply(snap) -> None:
    if not _config.apply_snapshot(snap):
        return
    if snap["installed"] and not _patch.is_installed():
        _patch.install()
    elif not snap["installed"] and _patch.is_installed():
        _patch.uninstall()


def rebuild(module: str, qualname: str, state, settings):
    """The accelerated estimator sent by :func:`_reduce` (unpickling)."""
    _apply(settings)
    cls = functools.reduce(getattr, qualname.split("."), importlib.import_module(module))
    plain = _proxy.plain_class(cls)
    rs = _registry.for_class(plain)
    target = plain if rs is None else _proxy.accelerated_class(rs)
    if rs is None and isinstance(state, dict):
        state.pop("_twinlearn", None)
    est = object.__new__(target)
    setstate = getattr(est, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    else:
        est.__dict__.update(state)
    return est


def _reduce(est):
    _proxy._materialize(est)
    plain = _proxy.plain_class(type(est))
    state = plain.__getstate__(est)
    if isinstance(state, dict):
        state = dict(state)  # with its _twinlearn record
    _profile.shipped += 1
    return rebuild, (plain.__module__, plain.__qualname__, state, _settings())


def register(cls) -> None:
    """Send accelerated class `cls` to worker processes as itself."""
    ForkingPickler.register(cls, _reduce)
    _loky_reduction.register(cls, _reduce)


_proxy.class_hooks.append(register)
for _rs in list(_registry._resolved.values()):  # classes made before this import
    if _rs is not None and _rs.accel_cls is not None:
        register(_rs.accel_cls)
