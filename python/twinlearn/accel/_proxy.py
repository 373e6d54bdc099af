"""Accelerated classes: scikit-learn estimators whose routed methods run on
twinlearn when they can, and scikit-learn's own code otherwise.

The accelerated class of a scikit-learn class is a subclass of it, with the
same name, module, parameters and docstring, so ``isinstance``,
``get_params``/``set_params``, ``clone``, ``repr`` and the rest of
scikit-learn see the original estimator. Only the routed methods are
overridden. A routed call runs on twinlearn when

- for a fitting method: scikit-learn validates the parameters (raising its own
  errors) and twinlearn serves every value; no callbacks are set;
- for any other method: the last fit ran on twinlearn, and neither the fitted
  attributes nor the parameters changed since in a way twinlearn cannot follow;
- X is served (``_inputs.inspect_X``) and keyword arguments are ones twinlearn takes;
- a device is usable (``_config.target_device``);
- X reaches the size threshold (device arrays and the later batches of a
  twinlearn ``partial_fit`` are exempt).

Otherwise the scikit-learn method runs, and the reason goes to the
``twinlearn.accel`` logger. After a twinlearn fit the fitted attributes are
copied onto the object as NumPy values, so scikit-learn's own methods work
on it too (they serve every call twinlearn does not). Pickling produces the
plain scikit-learn class, loadable where twinlearn is not installed (sending
to a worker process is the exception, see ``_workers``).
"""

from __future__ import annotations

import copy
import copyreg
import functools
import importlib
import inspect
import logging
import threading
import time
import types

import numpy as np
import sklearn
from sklearn.utils._available_if import _AvailableIfDescriptor, available_if
from sklearn.utils._set_output import _SetOutputMixin, _wrap_data_with_container

from .. import _io
from . import _config, _entry, _inputs, _profile, _registry
from ._config import logger

_MISSING = object()
_PRIMITIVES = (bool, int, float, str, type(None), np.generic)
_INFO = logging.INFO
_lock = threading.RLock()
_local = threading.local()
# Called with each accelerated class once it exists (_workers registers it
# with the picklers of worker processes).
class_hooks: list = []


class _Record:
    """A twinlearn fit: the twinlearn estimator, its device, the attribute
    values mirrored onto the scikit-learn object, and the parameters it used."""

    __slots__ = ("est", "device", "mirrored", "params", "lazy")

    def __init__(self, est, device, mirrored, params, lazy=None):
        self.est = est
        self.device = device
        self.mirrored = mirrored
        self.params = params
        self.lazy = lazy if lazy is not None else {}  # name -> make(), not read yet

    def __repr__(self):
        return f"<twinlearn fit on {self.device}>"


def _busy() -> set:
    """ids of the objects running a scikit-learn method in this thread: their
    nested routed calls (scikit-learn's fit calling partial_fit) go straight
    to scikit-learn."""
    try:
        return _local.busy
    except AttributeError:
        _local.busy = set()
        return _local.busy


def _frozen(v):
    """A hashable stand-in for a parameter value that names its type (so 1,
    1.0 and True differ, as do a list and a tuple), or None. Containers are
    read at call time, so a list mutated later gets a new key."""
    if isinstance(v, _PRIMITIVES):
        return (type(v), v)
    if type(v) in (tuple, list):
        items = tuple(_frozen(x) for x in v)
        return None if any(x is None for x in items) else (type(v), items)
    return None


def _param_key(params):
    key = []
    for v in params.values():
        f = _frozen(v)
        if f is None:
            return None
        key.append(f)
    return tuple(key)


def _check_params(est, rs, params):
    """Validate the parameters as scikit-learn does (raising its errors) and
    return why twinlearn cannot serve them, or None. Validated sets of
    immutable values are cached per class."""
    key = _param_key(params)
    if key is not None:
        hit = rs.param_cache.get(key, _MISSING)
        if hit is not _MISSING:
            return hit
    validated = not sklearn.get_config()["skip_parameter_validation"]
    if validated:
        est._validate_params()
    reason = rs.unsupported_param(params)
    if key is not None and validated:
        if len(rs.param_cache) >= 1024:
            rs.param_cache.clear()
        rs.param_cache[key] = reason
    return reason


def _is_fitted(d, rs) -> bool:
    # n_features_in_ too: an entry may mirror no attribute of its own
    # (its fitted state is derived, see Entry.derive).
    return "n_features_in_" in d or any(a in d for a in rs.entry.attributes)


def _stale(d, rec) -> bool:
    for k, v in rec.mirrored.items():
        if d.get(k, _MISSING) is not v:
            return True
    return False


def _params_changed(params, rec) -> bool:
    old = rec.params
    for k, v in params.items():
        if old.get(k, _MISSING) is not v:
            return True
    return False


def _mirror(est, rs, tl, device, params):
    d = est.__dict__
    mirrored = {}
    for a in rs.attributes:
        v = getattr(tl, a, _MISSING)
        if v is _MISSING:
            d.pop(a, None)
            continue
        if not isinstance(v, (np.ndarray, np.generic, int, float, str, type(None))) and _io.is_device_array(v):
            v = _io.to_numpy(v)
        d[a] = v
        mirrored[a] = v
    lazy = {}
    if rs.entry.derive is not None:
        for a, v in rs.entry.derive(tl, params).items():
            if isinstance(v, _entry.Lazy):
                d.pop(a, None)  # a value of an earlier fit must not shadow the new one
                lazy[a] = v.make
                continue
            d[a] = v
            mirrored[a] = v
    d["_twinlearn"] = _Record(tl, device, mirrored, params, lazy)


class _LazyAttribute:
    """A derived fitted attribute (Entry.lazy) computed on first read. A
    non-data descriptor: once computed, the value lives in the instance
    dict like any mirrored attribute, and a scikit-learn fit's own value
    there takes precedence."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        d = obj.__dict__
        rec = d.get("_twinlearn")
        make = rec.lazy.pop(self.name, None) if rec is not None else None
        if make is None:
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {self.name!r}")
        value = d[self.name] = make()
        rec.mirrored[self.name] = value
        return value


def _materialize(est) -> None:
    """Compute the lazy derived attributes not read yet (before a pickle or copy)."""
    rec = est.__dict__.get("_twinlearn")
    if rec is not None:
        for name in list(rec.lazy):
            getattr(est, name)


def _run_sklearn(est, base_fn, rs_name, method, is_fit, kind, reason, args, kwargs):
    _profile.note_fallback(rs_name, method, kind, reason)
    if logger.isEnabledFor(_INFO):
        logger.info("%s.%s: scikit-learn: %s", rs_name, method, reason)
    if is_fit:
        est.__dict__.pop("_twinlearn", None)
    busy = _busy()
    key = id(est)
    busy.add(key)
    try:
        if _profile.enabled:
            t0 = time.perf_counter()
            out = base_fn(est, *args, **kwargs)
            _profile.record(rs_name, method, "scikit-learn", time.perf_counter() - t0, kind)
            return out
        return base_fn(est, *args, **kwargs)
    finally:
        busy.discard(key)


def _fitted_reason(d, rs) -> str:
    return "fitted by scikit-learn" if _is_fitted(d, rs) else "not fitted"


def _make_method(rs, name, holder):
    """The routed version of scikit-learn method `name`."""
    base_fn = getattr(rs.sklearn_cls, name)
    is_fit = name in _registry.FIT_METHODS
    wrap_output = name in ("transform", "fit_transform") and "transform" in getattr(
        rs.sklearn_cls, "_sklearn_auto_wrap_output_keys", ()
    )
    est_name = rs.name
    allow_nan = rs.entry.allow_nan
    accepted = rs.kwargs | {"X", "y"}
    param_names = rs.param_names
    has_device = "device" in rs.tl_param_names
    has_set_output = hasattr(rs.twinlearn_cls, "set_output")
    convert = rs.entry.output
    configure = rs.entry.configure

    def fallback(self, kind, reason, args, kwargs):
        return _run_sklearn(self, base_fn, est_name, name, is_fit, kind, reason, args, kwargs)

    @functools.wraps(base_fn)
    def method(self, *args, **kwargs):
        if type(self) is not holder[0] or id(self) in _busy():
            return base_fn(self, *args, **kwargs)
        if args:
            X = args[0]
        elif "X" in kwargs:
            X = kwargs["X"]
        else:
            return fallback(self, "input", "no X given", args, kwargs)
        for k, v in kwargs.items():
            if v is not None and k not in accepted:
                return fallback(self, "argument", f"argument {k} unsupported", args, kwargs)

        d = self.__dict__
        rec = d.get("_twinlearn")
        params = {k: d.get(k) for k in param_names}
        continuing = False
        if is_fit:
            reason = _check_params(self, rs, params)
            if reason is not None:
                return fallback(self, "param", reason, args, kwargs)
            if d.get("_skl_callbacks"):
                return fallback(self, "callbacks", "callbacks are set", args, kwargs)
            if name == "partial_fit" and _is_fitted(d, rs):
                if rec is None:
                    return fallback(self, "state", "partial_fit continues a scikit-learn fit", args, kwargs)
                if _stale(d, rec):
                    return fallback(self, "state", "fitted attributes changed since the twinlearn fit", args, kwargs)
                continuing = True
        else:
            if rec is None:
                return fallback(self, "state", _fitted_reason(d, rs), args, kwargs)
            if _stale(d, rec):
                return fallback(self, "state", "fitted attributes changed since the twinlearn fit", args, kwargs)
        if rec is not None and (continuing or not is_fit) and _params_changed(params, rec):
            reason = rs.unsupported_param(params)
            if reason is not None:
                return fallback(self, "param", reason, args, kwargs)
            tl_params = rs.translate(params)
            tl_params.pop("device", None)
            rec.est.set_params(**tl_params)
            rec.params = params

        Xc, n, nf, on_device, reason = _inputs.inspect_X(X, allow_nan)
        if reason is not None:
            return fallback(self, "sparse" if reason == "X is sparse" else "input", reason, args, kwargs)
        device, reason = _config.target_device(X, on_device)
        if reason is not None:
            return fallback(self, "device", reason, args, kwargs)
        if not (on_device or continuing):
            reason = _config.below_threshold(rs, n, nf)
            if reason is not None:
                return fallback(self, "threshold", reason, args, kwargs)
        if is_fit and rs.entry.check_rows is not None:
            reason = rs.entry.check_rows(params, n)
            if reason is not None:
                return fallback(self, "param", reason, args, kwargs)

        if is_fit and not continuing:
            if rec is not None and not _stale(d, rec):
                # A refit reuses the twinlearn estimator of the last fit.
                tl = rec.est
                if _params_changed(params, rec):
                    tl_params = rs.translate(params)
                    tl_params.pop("device", None)
                    tl.set_params(**tl_params)
            else:
                tl = rs.twinlearn_cls(**rs.translate(params))
                if configure is not None:
                    configure(tl)
                if has_set_output:
                    # The output container follows this object's configuration (below).
                    tl.set_output(transform="default")
        else:
            tl = rec.est
        if has_device and tl.device != device:
            tl.device = device
        if Xc is not X:
            if args:
                args = (Xc,) + args[1:]
            else:
                kwargs = dict(kwargs, X=Xc)
        t0 = time.perf_counter() if _profile.enabled else 0.0
        try:
            out = getattr(tl, name)(*args, **kwargs)
        except Exception as exc:
            msg = f"twinlearn raised {type(exc).__name__}: {exc}"
            if not isinstance(exc, (ValueError, TypeError)):
                logger.warning("%s.%s: %s; running scikit-learn", est_name, name, msg)
            return fallback(self, "error", msg, args, kwargs)
        if is_fit:
            _mirror(self, rs, tl, device, params)
            if out is tl:
                out = self
        if convert is not None and out is not self:
            out = convert(name, out)
        if wrap_output:
            out = _wrap_data_with_container("transform", out, X, self)
        _profile.ran += 1
        if _profile.enabled:
            _profile.record(est_name, name, f"twinlearn:{device}", time.perf_counter() - t0)
        if logger.isEnabledFor(_INFO):
            logger.info(
                "%s.%s: twinlearn on %s (n_samples=%d, n_features=%d%s)",
                est_name, name, device, n, nf, ", device array" if on_device else "",
            )
        return out

    static = inspect.getattr_static(rs.sklearn_cls, name)
    if isinstance(static, _AvailableIfDescriptor):
        return available_if(static.check)(method)
    return method


class _ModuleRef:
    """Pickles as ``importlib.import_module(name)``."""

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (importlib.import_module, (self.name,))


class _ClassRef:
    """Pickles as ``getattr(importlib.import_module(module), name)``.

    A class is normally pickled by reference, and pickle refuses when the
    module attribute is no longer that class, as happens to a scikit-learn
    class while the accelerator is installed. This spelling names the class
    the same way without that check, and needs only the standard library
    and scikit-learn to load: where twinlearn is absent (or the accelerator
    not installed) it yields the plain scikit-learn class; where the
    accelerator is installed, the accelerated one.
    """

    def __init__(self, cls):
        self.module = cls.__module__
        self.name = cls.__qualname__

    def __reduce__(self):
        return (getattr, (_ModuleRef(self.module), self.name))


def _class_methods(plain):
    """__reduce__, __copy__ and __deepcopy__ of an accelerated class of `plain`."""
    ref = _ClassRef(plain)

    def __reduce__(self):
        _materialize(self)
        state = plain.__getstate__(self)
        if isinstance(state, dict):
            state = dict(state)
            state.pop("_twinlearn", None)
        # copyreg._reconstructor (what protocols 0 and 1 use for every
        # object) builds an instance of the class it is given with
        # object.__new__; copyreg.__newobj__ would insist on type(self).
        return (copyreg._reconstructor, (ref, object, None), state)

    def __reduce_ex__(self, protocol):
        return __reduce__(self)

    def __copy__(self):
        _materialize(self)
        new = object.__new__(type(self))
        d = dict(self.__dict__)
        rec = d.get("_twinlearn")
        if rec is not None:
            d["_twinlearn"] = _Record(copy.copy(rec.est), rec.device, rec.mirrored, rec.params)
        new.__dict__.update(d)
        return new

    def __deepcopy__(self, memo):
        _materialize(self)
        new = object.__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            new.__dict__[k] = copy.deepcopy(v, memo)
        return new

    __reduce__.__doc__ = f"Pickle as the plain :class:`{plain.__module__}.{plain.__qualname__}`."
    return {
        "__reduce__": __reduce__,
        "__reduce_ex__": __reduce_ex__,
        "__copy__": __copy__,
        "__deepcopy__": __deepcopy__,
    }


def accelerated_class(rs):
    """The accelerated subclass for a resolved registry entry (built once)."""
    if rs.accel_cls is not None:
        return rs.accel_cls
    with _lock:
        if rs.accel_cls is not None:
            return rs.accel_cls
        plain = rs.sklearn_cls
        holder = [None]
        ns = {
            "__module__": plain.__module__,
            "__qualname__": plain.__qualname__,
            "__doc__": plain.__doc__,
            "_twinlearn_accelerated": rs,
        }
        ns.update(_class_methods(plain))
        for name in rs.entry.lazy:
            ns[name] = _LazyAttribute(name)
        for m in rs.methods:
            ns[m] = _make_method(rs, m, holder)
        kw = {"auto_wrap_output_keys": None} if issubclass(plain, _SetOutputMixin) else {}
        # scikit-learn wraps transform/fit_transform of subclasses for
        # set_output; the routed methods do that themselves (the scikit-learn
        # methods they fall back on are already wrapped).
        cls = types.new_class(plain.__name__, (plain,), kw, lambda n: n.update(ns))
        if kw:
            cls._sklearn_auto_wrap_output_keys = set(plain._sklearn_auto_wrap_output_keys)
        holder[0] = cls
        rs.accel_cls = cls
        for hook in class_hooks:
            hook(cls)
        return cls


def is_accelerated_class(cls) -> bool:
    return isinstance(cls, type) and "_twinlearn_accelerated" in cls.__dict__


def plain_class(cls):
    """The scikit-learn class behind an accelerated class (else `cls`)."""
    if is_accelerated_class(cls):
        return cls.__dict__["_twinlearn_accelerated"].sklearn_cls
    return cls


def fitted_on(est) -> str | None:
    """Where the last fit of an accelerated estimator ran: ``"twinlearn:cpu"``,
    ``"twinlearn:cuda:0"``..., ``"scikit-learn"``, or None when not fitted."""
    cls = type(est)
    rs = None
    for c in cls.__mro__:
        if "_twinlearn_accelerated" in c.__dict__:
            rs = c.__dict__["_twinlearn_accelerated"]
            break
    d = getattr(est, "__dict__", {})
    rec = d.get("_twinlearn")
    if rec is not None:
        return f"twinlearn:{rec.device}"
    if rs is not None:
        return "scikit-learn" if _is_fitted(d, rs) else None
    return "scikit-learn" if any(k.endswith("_") and not k.startswith("__") for k in d) else None
