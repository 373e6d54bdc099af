"""The mapping from scikit-learn estimators to their twinlearn twins.

Every supported estimator is one declarative ``_entry.Entry`` (see
``_estimators.py``): the scikit-learn class, the twinlearn class, which
parameter values twinlearn serves, how parameters translate, which fitted
attributes are mirrored back onto the scikit-learn object, which methods are
routed, and the default size threshold. An entry whose twinlearn class (or
scikit-learn class) cannot be imported is skipped, with the reason kept for
:func:`skipped` and the support matrix.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Mapping

from . import _estimators
from ._entry import Entry

#: Methods that (re)fit the estimator. Every other routed method uses the
#: fitted state and runs on twinlearn only when the fit did.
FIT_METHODS = frozenset({"fit", "partial_fit", "fit_transform", "fit_predict"})

#: Fitted attributes every estimator gets from scikit-learn's input validation.
COMMON_ATTRIBUTES = ("n_features_in_", "feature_names_in_")


def _same_value(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # arrays, estimators...: only identity counts
        return False


class Resolved:
    """An entry whose classes imported, with what dispatch needs precomputed."""

    def __init__(self, entry: Entry, sklearn_cls: type, twinlearn_cls: type):
        self.entry = entry
        self.name = entry.name
        self.sklearn_cls = sklearn_cls
        self.twinlearn_cls = twinlearn_cls
        sig = inspect.signature(sklearn_cls.__init__)
        self.param_names = tuple(
            p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )
        self.defaults = {
            p.name: p.default for p in sig.parameters.values()
            if p.name in self.param_names
        }
        self.tl_param_names = frozenset(twinlearn_cls._get_param_names())
        extra = tuple(a for a in COMMON_ATTRIBUTES if a not in entry.attributes)
        self.attributes = tuple(entry.attributes) + extra
        self.methods = tuple(
            m for m in entry.methods if hasattr(sklearn_cls, m) and hasattr(twinlearn_cls, m)
        )
        self.kwargs = frozenset(entry.kwargs)
        # (type, value) of primitive parameter sets -> unsupported reason or
        # None; filled only with sets scikit-learn validated.
        self.param_cache: dict = {}
        self.accel_cls = None

    def example_params(self) -> dict:
        """The defaults with ``entry.example`` applied: parameters twinlearn serves."""
        return {**self.defaults, **self.entry.example}

    def unsupported_param(self, params: Mapping) -> str | None:
        """The reason twinlearn cannot serve these parameter values, or None."""
        rules = self.entry.params
        for name in self.param_names:
            value = params.get(name)
            rule = rules.get(name)
            if rule is None:
                default = self.defaults.get(name)
                if not _same_value(value, default):
                    return (
                        f"parameter {name}={value!r} unsupported "
                        f"(twinlearn serves only the default {default!r})"
                    )
            elif not rule(value):
                return f"parameter {name}={value!r} unsupported (supported: {rule.doc})"
        if self.entry.check is not None:
            return self.entry.check(params)
        return None

    def translate(self, params: Mapping) -> dict:
        """Keyword arguments for the twinlearn class."""
        if self.entry.translate is not None:
            return dict(self.entry.translate(dict(params)))
        return {k: v for k, v in params.items() if k in self.tl_param_names}

    def __repr__(self):
        return f"Resolved({self.entry.sklearn} -> {self.entry.twinlearn})"


_lock = threading.RLock()
_resolved: dict[str, Resolved | None] = {}
_skipped: dict[str, str] = {}


def _import_attr(path: str):
    module, _, attr = path.rpartition(".")
    mod = importlib.import_module(module)
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ImportError(f"{module} has no attribute {attr!r}") from None


def entries() -> tuple[Entry, ...]:
    """Every declared entry, available or not."""
    return _estimators.ENTRIES


def resolve(entry: Entry) -> Resolved | None:
    """The resolved entry, or None (reason in :func:`skipped`) when a class is missing."""
    key = entry.sklearn
    if key in _resolved:
        return _resolved[key]
    try:
        tl_cls = _import_attr(entry.twinlearn)
    except ImportError as exc:
        reason = f"twinlearn class {entry.twinlearn} is not available: {exc}"
        tl_cls = None
    if tl_cls is not None:
        try:
            sk_cls = _import_attr(entry.sklearn)
        except ImportError as exc:
            reason = f"scikit-learn class {entry.sklearn} is not available: {exc}"
            sk_cls = None
    with _lock:
        if key in _resolved:
            return _resolved[key]
        if tl_cls is None or sk_cls is None:
            _skipped[key] = reason
            _resolved[key] = None
        else:
            _resolved[key] = Resolved(entry, sk_cls, tl_cls)
        return _resolved[key]


def available() -> list[Resolved]:
    """The entries whose classes import (importing their modules)."""
    return [r for r in (resolve(e) for e in entries()) if r is not None]


def skipped() -> dict[str, str]:
    """Declared entries that are not available, with the reason."""
    available()
    return dict(_skipped)


def for_class(cls) -> Resolved | None:
    """The resolved entry for a scikit-learn class (exactly that class), or None."""
    name = getattr(cls, "__name__", None)
    for e in entries():
        if e.name == name:
            r = resolve(e)
            if r is not None and r.sklearn_cls is cls:
                return r
    return None


def for_module(module_name: str) -> list[Resolved]:
    """Resolved entries whose public scikit-learn module is `module_name`."""
    return [r for r in (resolve(e) for e in entries() if e.module == module_name) if r is not None]


def lookup(name: str) -> Resolved:
    """The available entry named ``"StandardScaler"`` or ``"sklearn.preprocessing.StandardScaler"``."""
    for e in entries():
        if name in (e.name, e.sklearn):
            r = resolve(e)
            if r is None:
                raise ValueError(f"{name} is not available: {_skipped[e.sklearn]}")
            return r
    known = ", ".join(sorted(e.name for e in entries()))
    raise ValueError(f"no accelerated estimator named {name!r}; known: {known}")
