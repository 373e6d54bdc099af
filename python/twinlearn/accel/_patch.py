"""Process-wide acceleration: ``install()`` / ``uninstall()`` and ``with enabled():``.

While active, for every available registry entry:

- each imported ``sklearn`` module attribute bound to the scikit-learn class
  is rebound to the accelerated class (so ``from sklearn.preprocessing
  import StandardScaler`` yields it, and ``type(est) is StandardScaler``
  holds in scikit-learn's own modules);
- the scikit-learn class's ``__new__`` returns an instance of the accelerated
  class, so a name bound before activation (``from sklearn.preprocessing
  import StandardScaler`` at the top of a script, then ``with enabled():
  StandardScaler()``) also creates accelerated estimators; subclasses of
  the scikit-learn class are left alone (see ``_redirect_new``);
- a ``sys.meta_path`` finder patches the entry's public scikit-learn module
  (e.g. ``sklearn.preprocessing``) right after it is first imported.

Accelerated estimators pickle as their plain scikit-learn class by a path
that works while the module attribute is patched; a *plain* estimator
created before activation cannot be pickled while it is active (pickle
finds the accelerated class under the plain class's name and refuses).

Deactivation restores the module attributes (those still bound to the
accelerated class) and ``__new__``; estimators created meanwhile stay
accelerated. Activation is reference-counted: ``install()`` holds it until
``uninstall()``, each ``enabled()`` block for its duration.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import inspect
import sys
import threading

from .._config import check_device
from . import _config, _proxy, _registry

_lock = threading.RLock()
_installed = False
_depth = 0
_active = False
_finder = None
# (module, attribute, scikit-learn class, accelerated class)
_bindings: list = []
# scikit-learn class -> {"accel": accelerated class while active, else None}
_shims: dict = {}


def _redirect_new(plain, accel) -> None:
    """Make ``plain(...)`` build an ``accel`` instance (accel None: stop).

    The ``__new__`` put on the scikit-learn class stays there after
    deactivation, only forwarding to ``object.__new__``: CPython cannot
    restore a class's original allocator once ``__new__`` was assigned
    (deleting it leaves a slot that rejects constructor arguments).
    """
    state = _shims.get(plain)
    if state is None:
        own = plain.__dict__.get("__new__")
        own_new = own.__func__ if isinstance(own, staticmethod) else own
        state = {"accel": None}

        def __new__(cls, *args, **kwargs):
            target = state["accel"]
            if target is not None and cls is plain:
                cls = target
            if own_new is None:
                return object.__new__(cls)
            return own_new(cls, *args, **kwargs)

        # inspect.signature(cls) prefers a class's own __new__ to __init__:
        # keep reporting the constructor parameters.
        __new__.__signature__ = inspect.signature(plain.__init__)
        plain.__new__ = staticmethod(__new__)
        _shims[plain] = state
    state["accel"] = accel


def _sklearn_modules():
    return [
        m for name, m in list(sys.modules.items())
        if (name == "sklearn" or name.startswith("sklearn.")) and m is not None
    ]


def _patch(resolved) -> None:
    """Patch the classes of `resolved` entries (lock held, active)."""
    todo = {}
    for rs in resolved:
        plain = rs.sklearn_cls
        state = _shims.get(plain)
        if state is not None and state["accel"] is not None:
            continue
        accel = _proxy.accelerated_class(rs)
        _redirect_new(plain, accel)
        todo[id(plain)] = (plain, accel)
    if todo:
        _rebind(todo)


def _rebind(todo) -> None:
    for mod in _sklearn_modules():
        d = getattr(mod, "__dict__", None)
        if not isinstance(d, dict):
            continue
        for attr, value in list(d.items()):
            hit = todo.get(id(value))
            if hit is not None and value is hit[0]:
                setattr(mod, attr, hit[1])
                _bindings.append((mod, attr, hit[0], hit[1]))


def _unpatch() -> None:
    for mod, attr, plain, accel in reversed(_bindings):
        if getattr(mod, attr, None) is accel:
            setattr(mod, attr, plain)
    _bindings.clear()
    for state in _shims.values():
        state["accel"] = None


def _on_module_loaded(module_name: str) -> None:
    resolved = _registry.for_module(module_name)  # imports outside the lock
    with _lock:
        if _active:
            _patch(resolved)
            # Modules bound to an already-patched class during this import.
            todo = {
                id(rs.sklearn_cls): (rs.sklearn_cls, rs.accel_cls)
                for rs in resolved if rs.accel_cls is not None
            }
            _rebind(todo)


class _PatchingLoader:
    """Runs the real loader, then patches the module's accelerated classes."""

    def __init__(self, real, spec):
        self._real = real
        self._spec = spec

    def __getattr__(self, name):
        return getattr(self._real, name)

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module):
        try:
            self._real.exec_module(module)
        finally:
            self._spec.loader = self._real
            if getattr(module, "__loader__", None) is self:
                module.__loader__ = self._real
        _on_module_loaded(module.__name__)


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps the loader of the scikit-learn modules that host accelerated classes."""

    def __init__(self, watched):
        self.watched = frozenset(watched)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.watched:
            return None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, _Finder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(spec.loader, spec)
        return spec


def _activate() -> None:
    global _active, _finder
    loaded = [e for e in _registry.entries() if e.module in sys.modules]
    resolved = [r for r in (_registry.resolve(e) for e in loaded) if r is not None]
    with _lock:
        if _active:
            return
        _active = True
        _finder = _Finder({e.module for e in _registry.entries()})
        sys.meta_path.insert(0, _finder)
        _patch(resolved)


def _deactivate() -> None:
    global _active, _finder
    with _lock:
        if not _active:
            return
        _active = False
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        _finder = None
        _unpatch()


def install() -> None:
    """Accelerate scikit-learn process-wide until :func:`uninstall`.

    Estimators created afterwards (also through names imported before) are
    accelerated; ``from sklearn.preprocessing import StandardScaler`` yields
    the accelerated class.
    """
    global _installed
    with _lock:
        _installed = True
    _activate()


def uninstall() -> None:
    """Undo :func:`install` (an enclosing ``enabled()`` block stays in force)."""
    global _installed
    with _lock:
        _installed = False
        if _depth == 0:
            _deactivate()


def is_installed() -> bool:
    return _installed


def is_active() -> bool:
    return _active


@contextlib.contextmanager
def enabled():
    """Accelerate scikit-learn estimators created inside the block.

    >>> import twinlearn.accel
    >>> from sklearn.preprocessing import StandardScaler
    >>> with twinlearn.accel.enabled():
    ...     scaler = StandardScaler()
    >>> twinlearn.accel.is_accelerated(scaler), isinstance(scaler, StandardScaler)
    (True, True)
    >>> twinlearn.accel.is_accelerated(StandardScaler())
    False
    """
    global _depth
    with _lock:
        _depth += 1
    _activate()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and not _installed:
                _deactivate()


_KEEP = object()


@contextlib.contextmanager
def accelerate_context(device=None, threshold=_KEEP, verbose=None):
    """Accelerate scikit-learn inside the block, with these settings; the
    previous ones (and the unaccelerated classes) are back after it.

    As :func:`enabled`, with, for the block only: `device` as
    :func:`twinlearn.accel.set_device`, `threshold` as
    ``twinlearn.accel.set_threshold(n)`` (None: the measured defaults) and
    `verbose` as :func:`twinlearn.accel.set_verbose`; those left out stay as
    they are. The settings are process-wide, as those functions' are.

    >>> import numpy as np, twinlearn.accel
    >>> from sklearn.preprocessing import StandardScaler
    >>> with twinlearn.accel.accelerate_context(device="cpu", threshold=0):
    ...     scaler = StandardScaler().fit(np.ones((4, 2)))
    >>> twinlearn.accel.fitted_on(scaler)
    'twinlearn:cpu'
    """
    if device is not None:
        device = check_device(device, "twinlearn.accel.accelerate_context: device")
    if threshold is not _KEEP and threshold is not None:
        _config._check_count(threshold, "threshold")
    old = (_config.get_device(), _config.global_threshold(), _config.get_verbose())
    try:
        if device is not None:
            _config.set_device(device)
        if threshold is not _KEEP:
            _config.set_threshold(threshold)
        if verbose is not None:
            _config.set_verbose(verbose)
        with enabled():
            yield
    finally:
        _config.set_device(old[0])
        _config.set_threshold(old[1])
        _config.set_verbose(old[2])
