"""What one accelerated estimator declares: an :class:`Entry`, with the
values of each parameter twinlearn serves (:data:`ANY`, :func:`one_of`,
:func:`where`). The entries are in ``_estimators.py``; ``_registry.py``
resolves them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

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
