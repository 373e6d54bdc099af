"""The mapping from scikit-learn estimators to their twinlearn twins.

Every supported estimator is one declarative :class:`Entry` (see
``_estimators.py``): the scikit-learn class, the twinlearn class, which
parameter values twinlearn serves, how parameters translate, which fitted
attributes are mirrored back onto the scikit-learn object, which methods are
routed, and the default size threshold. An entry whose twinlearn class (or
scikit-learn class) cannot be imported is skipped, with the reason kept for
:func:`skipped` and the support matrix.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

#: Methods that (re)fit the estimator. Every other routed method uses the
#: fitted state and runs on twinlearn only when the fit did.
FIT_METHODS = frozenset({"fit", "partial_fit", "fit_transform", "fit_predict"})

#: Fitted attributes every estimator gets from scikit-learn's input validation.
COMMON_ATTRIBUTES = ("n_features_in_", "feature_names_in_")

#: Placeholder size threshold (rows) below which scikit-learn runs. It is not
#: a measurement. The measured defaults come from
#: ``python -m twinlearn.accel --measure-thresholds --device cuda`` (see
#: ``_calibrate.py``): run on the target GPU, it times scikit-learn against
#: the accelerated estimator at doubling row counts and writes
#: ``thresholds.json`` beside this module with the machine, date and commit;
#: an estimator measured there on a GPU takes its default from that file, and
#: the others keep this placeholder (the support matrix says which).
DEFAULT_MIN_ROWS = 10_000


class ParamSupport:
    """Which values of one scikit-learn parameter twinlearn serves."""

    doc = ""

    def __call__(self, value) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.doc})"


class _Any(ParamSupport):
    doc = "all values"

    def __call__(self, value) -> bool:
        return True


class _OneOf(ParamSupport):
    def __init__(self, values):
        self.values = tuple(values)
        self.doc = ", ".join(f"`{v!r}`" for v in self.values)

    def __call__(self, value) -> bool:
        for v in self.values:
            if value is v:
                return True
            # bool is an int: True must not stand for 1, nor 1.0 for True.
            if type(value) is type(v) and value == v:
                return True
        return False


class _Where(ParamSupport):
    def __init__(self, predicate, doc):
        self.predicate = predicate
        self.doc = doc

    def __call__(self, value) -> bool:
        return bool(self.predicate(value))


#: Every value scikit-learn accepts is served by twinlearn.
ANY = _Any()


def one_of(*values) -> ParamSupport:
    """Only these values (compared by type and value) are served."""
    return _OneOf(values)


def where(predicate: Callable[[Any], bool], doc: str) -> ParamSupport:
    """Values for which ``predicate(value)`` is true; `doc` says which in words."""
    return _Where(predicate, doc)


def _same_value(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # arrays, estimators...: only identity counts
        return False


class Lazy:
    """A derived attribute's value, computed by ``make()`` when first read."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


@dataclasses.dataclass(frozen=True)
class Entry:
    """One scikit-learn estimator served by twinlearn.

    sklearn : str
        Public path of the scikit-learn class, e.g. ``"sklearn.preprocessing.StandardScaler"``.
    twinlearn : str
        Path of the twinlearn class, e.g. ``"twinlearn.preprocessing.StandardScaler"``.
    methods : tuple of str
        Methods routed to twinlearn (those the scikit-learn class has).
    attributes : tuple of str
        Fitted attributes copied (as NumPy) from the twinlearn estimator onto
        the scikit-learn object after a twinlearn fit; ``n_features_in_`` and
        ``feature_names_in_`` are always added. Together they must be enough
        for scikit-learn's own methods to work on the mirrored object.
    params : mapping of str to ParamSupport
        Values served per scikit-learn parameter. A parameter not listed is
        served only at its scikit-learn default.
    check, check_doc :
        Optional joint condition over all parameters (``params -> reason or
        None``) and its description for the support matrix.
    check_rows :
        Optional condition of a fit on the parameters and the number of rows
        (``(params, n_rows) -> reason or None``), for a parameter whose
        meaning depends on the data's size; described in check_doc.
    translate :
        ``params -> twinlearn keyword arguments``. Default: the parameters the
        twinlearn class also has, unchanged.
    kwargs : tuple of str
        Keyword arguments of routed methods (besides X and y) twinlearn
        accepts; any other one given with a value other than None runs scikit-learn.
    allow_nan : bool
        The twinlearn estimator accepts NaN in X.
    min_rows, min_cols : int
        Default size threshold: twinlearn runs from this many rows and columns.
    task : {None, "classifier", "regressor"}
        What ``y`` is, for generated data (overhead measurement, tests).
    conformance : tuple of (str, str)
        scikit-learn test modules (``pytest --pyargs``) exercising the
        estimator, each with a ``pytest -k`` expression ("" = the whole
        module), run by ``make test-sklearn``. The first is the estimator's
        own test module.
    conformance_k : str
        ``pytest -k`` expression selecting this estimator's tests in the
        first module: the bounded run of ``make test``.
    derive :
        ``(twinlearn estimator, params) -> {name: value}``: further fitted
        attributes set on the scikit-learn object after a twinlearn fit
        (scikit-learn's names for state twinlearn keeps under other names,
        or private state scikit-learn's own methods read), mirrored like
        ``attributes``. A value given as :class:`Lazy` is computed on first
        read (and before the object is pickled or deep-copied), so a fit
        does not pay for state only scikit-learn's own methods use.
    output :
        ``(method, value) -> value`` applied to what a routed twinlearn call
        returns (for example float32 predictions given as scikit-learn's float64).
    configure :
        ``(twinlearn estimator) -> None`` called on each twinlearn estimator
        the accelerator creates, before its fit (for example to ask for
        outputs in scikit-learn's dtype).
    example : mapping
        Parameters (over the defaults) that twinlearn serves, for generated
        runs (overhead measurement, tests), when the defaults are not served.
    notes : str
        What differs from scikit-learn when twinlearn serves the estimator,
        for the support matrix.
    """

    sklearn: str
    twinlearn: str
    methods: tuple
    attributes: tuple
    params: Mapping = dataclasses.field(default_factory=dict)
    check: Callable | None = None
    check_doc: str = ""
    check_rows: Callable | None = None
    translate: Callable | None = None
    kwargs: tuple = ()
    allow_nan: bool = False
    min_rows: int = DEFAULT_MIN_ROWS
    min_cols: int = 1
    task: str | None = None
    conformance: tuple = ()
    conformance_k: str = ""
    derive: Callable | None = None
    #: names ``derive`` may return as :class:`Lazy`
    lazy: tuple = ()
    output: Callable | None = None
    configure: Callable | None = None
    example: Mapping = dataclasses.field(default_factory=dict)
    notes: str = ""

    @property
    def name(self) -> str:
        return self.sklearn.rpartition(".")[2]

    @property
    def module(self) -> str:
        return self.sklearn.rpartition(".")[0]


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
    from ._estimators import ENTRIES

    return ENTRIES


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
