"""Start the accelerator at interpreter start when ``TWINLEARN_ACCEL`` is set.

A wheel installs this file as the top-level module ``_twinlearn_accel_boot``
beside ``twinlearn_accel.pth``, whose one line calls :func:`boot` while
``site`` processes site-packages. It imports nothing but the standard
library: scikit-learn and twinlearn may not even be importable yet (later
``.pth`` files can still extend ``sys.path``). :func:`boot` only adds a
finder that waits for the first ``import sklearn``; once that module has
executed, ``twinlearn.accel.install()`` runs. If twinlearn itself is being
imported at that moment, ``twinlearn/__init__.py`` installs the accelerator
when it finishes (it checks ``TWINLEARN_ACCEL`` too).
"""

import os
import sys

ENV = "TWINLEARN_ACCEL"


def wanted(environ=os.environ) -> bool:
    """True when TWINLEARN_ACCEL asks for the accelerator (anything but '', 0, false, no, off)."""
    return environ.get(ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def _install():
    tl = sys.modules.get("twinlearn")
    spec = getattr(tl, "__spec__", None)
    if tl is not None and getattr(spec, "_initializing", False):
        return  # twinlearn/__init__.py installs it when it finishes
    try:
        import twinlearn.accel

        twinlearn.accel.install()
    except Exception as exc:  # never break the interpreter for the accelerator
        import warnings

        warnings.warn(f"{ENV} is set but the twinlearn accelerator could not start: {exc!r}",
                      RuntimeWarning, stacklevel=2)


class _Loader:
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
        _install()


class _Finder:
    """Waits for the first ``import sklearn``, then removes itself."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "sklearn":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, spec)
        return spec


def boot():
    """Arrange for the accelerator to start, if TWINLEARN_ACCEL asks for it."""
    if not wanted():
        return
    if "sklearn" in sys.modules:
        _install()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
