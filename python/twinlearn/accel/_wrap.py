"""``twinlearn.accelerate``: accelerate one estimator, class, factory or meta-estimator."""

from __future__ import annotations

import functools

from . import _proxy, _registry
from ._config import logger

_MISSING = object()


def _is_estimator(obj) -> bool:
    return not isinstance(obj, type) and hasattr(obj, "get_params") and hasattr(obj, "set_params")


def _accelerate_class(cls):
    if _proxy.is_accelerated_class(cls):
        return cls
    rs = _registry.for_class(cls)
    if rs is None:
        logger.info("%s: no twinlearn implementation; scikit-learn runs it", cls.__name__)
        return cls
    return _proxy.accelerated_class(rs)


def _copy_with(est, cls, changes):
    new = object.__new__(cls)
    new.__dict__.update(est.__dict__)
    new.__dict__.update(changes)
    return new


def _accelerate_value(v):
    """`v` with every estimator inside (lists, tuples, dicts) accelerated; `v`
    itself when nothing changed."""
    if _is_estimator(v):
        return _accelerate_estimator(v, top=False)
    if isinstance(v, (list, tuple)):
        items = [_accelerate_value(x) for x in v]
        if all(a is b for a, b in zip(items, v)):
            return v
        if isinstance(v, tuple):
            return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
        return items
    if isinstance(v, dict):
        items = {k: _accelerate_value(x) for k, x in v.items()}
        if all(items[k] is v[k] for k in v):
            return v
        return type(v)(items) if type(v) is not dict else items
    return v


def _accelerate_estimator(est, top=True):
    cls = type(est)
    target = cls
    if not _proxy.is_accelerated_class(cls):
        rs = _registry.for_class(cls)
        if rs is not None:
            target = _proxy.accelerated_class(rs)
    try:
        params = est.get_params(deep=False)
    except Exception:  # not a well-formed estimator: leave its parameters alone
        params = {}
    changes = {}
    for k, v in params.items():
        v2 = _accelerate_value(v)
        if v2 is not v:
            changes[k] = v2
    if target is cls and not changes:
        if top and not _proxy.is_accelerated_class(cls):
            logger.info("%s: no twinlearn implementation; scikit-learn runs it", cls.__name__)
        return est
    return _copy_with(est, target, changes)


def _accelerate_factory(fn):
    @functools.wraps(fn)
    def accelerated_factory(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, type):
            return _accelerate_class(out)
        if _is_estimator(out):
            return _accelerate_estimator(out)
        return out

    return accelerated_factory


def accelerate(obj=_MISSING, /):
    """Run scikit-learn code on twinlearn where twinlearn serves it.

    - an estimator instance: an accelerated copy (same parameters, and the
      same fitted state when fitted);
    - an estimator class: the accelerated class, a subclass usable exactly like it;
    - a meta-estimator (``Pipeline``, ``ColumnTransformer``, ``FeatureUnion``,
      ``GridSearchCV``...): a copy whose inner estimators are accelerated, at
      any depth;
    - a function returning any of these: a function returning them
      accelerated (usable as ``@accelerate`` and ``@accelerate()``).

    Estimators twinlearn does not implement are returned unchanged (logged
    on the ``twinlearn.accel`` logger).

    >>> import numpy as np, twinlearn
    >>> from sklearn.preprocessing import StandardScaler
    >>> scaler = twinlearn.accelerate(StandardScaler(with_std=False))
    >>> isinstance(scaler, StandardScaler), scaler
    (True, StandardScaler(with_std=False))
    >>> scaler.fit(np.array([[1.0], [3.0]])).mean_
    array([2.])
    """
    if obj is _MISSING:
        return accelerate
    if isinstance(obj, type):
        return _accelerate_class(obj)
    if _is_estimator(obj):
        return _accelerate_estimator(obj)
    if callable(obj):
        return _accelerate_factory(obj)
    raise TypeError(
        "twinlearn.accelerate expects an estimator, an estimator class or a "
        f"function returning one; got {type(obj).__name__}"
    )


def is_accelerated(obj) -> bool:
    """True for an accelerated estimator or accelerated class."""
    cls = obj if isinstance(obj, type) else type(obj)
    return _proxy.is_accelerated_class(cls)
