"""The estimators' side of the core's parameter structs.

The bindings bind each parameter struct of the core once, field by field
(python/bindings/convert.hpp, ``params_class``); every bound struct lists its
fields in ``_fields``. :func:`params` fills one by name and refuses a missing
or an unknown name, so a field added to the core cannot be left to its C++
default by accident. An estimator that fills a struct declares how its
parameters reach the fields in a :class:`Spec` (class attribute
``_tl_native``); the common tests check that declaration against both the
estimator's ``get_params()`` and the struct's ``_fields``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def params(struct, **values):
    """A `struct` (a bound parameter class, e.g. ``mod.KMeansParams``) with
    every field set from `values`."""
    fields = tuple(struct._fields)
    missing = [f for f in fields if f not in values]
    unknown = [k for k in values if k not in fields]
    if missing or unknown:
        raise TypeError(
            f"{struct.__name__}: "
            + "; ".join(s for s in (missing and f"fields not given: {missing}", unknown and f"not fields: {unknown}")
                        if s)
        )
    p = struct()
    for k, v in values.items():
        setattr(p, k, v)
    return p


@dataclass(frozen=True)
class Spec:
    """How an estimator's parameters reach one parameter struct of the core.

    struct: the bound class name (``"KMeansParams"``).
    fields: estimator parameter -> the struct field(s) it sets (a name, or a
        tuple of names when one parameter sets several).
    python_only: estimator parameter -> why it never reaches this struct
        (handled in Python, or by another struct of the same estimator).
    derived: struct field -> where its value comes from when no parameter
        sets it (the data, a fixed rule).
    """

    struct: str
    fields: dict = field(default_factory=dict)
    python_only: dict = field(default_factory=dict)
    derived: dict = field(default_factory=dict)

    def struct_fields(self):
        """The struct fields this declaration accounts for."""
        out = set(self.derived)
        for v in self.fields.values():
            out.update((v,) if isinstance(v, str) else v)
        return out
