"""Every estimator's parameters and the core's parameter structs agree.

An estimator that fills a parameter struct of the core declares, in
``_tl_native`` (twinlearn._native.Spec), which of its parameters set which
fields, which never reach the core (and why), and which fields come from
elsewhere. This checks the declaration against ``get_params()`` and the
bound struct's ``_fields``: a parameter added to either side without the
other fails here.
"""

import inspect

import pytest

import twinlearn
from twinlearn import _backend, _native

COMMON = {"device", "numeric_mode"}


def _estimators():
    for name in twinlearn.__all__:
        obj = getattr(twinlearn, name)
        if inspect.isclass(obj) and hasattr(obj, "get_params"):
            yield obj


NATIVE = [c for c in _estimators() if getattr(c, "_tl_native", ())]


def test_some_estimators_declare_native_params():
    assert NATIVE, "no estimator declares _tl_native"


@pytest.mark.parametrize("cls", NATIVE, ids=lambda c: c.__name__)
def test_parameters_and_struct_fields_agree(cls):
    core = _backend.core()
    params = set(cls().get_params()) - COMMON
    accounted = set()
    for spec in cls._tl_native:
        struct = getattr(core, spec.struct)
        fields = set(struct._fields)
        declared = spec.struct_fields()
        assert declared <= fields, f"{cls.__name__} -> {spec.struct}: not fields of the struct: {declared - fields}"
        assert fields <= declared, f"{cls.__name__} -> {spec.struct}: fields no parameter accounts for: {fields - declared}"
        both = set(spec.fields) & set(spec.python_only)
        assert not both, f"{cls.__name__}: parameters both mapped and Python-only: {both}"
        unknown = (set(spec.fields) | set(spec.python_only)) - params
        assert not unknown, f"{cls.__name__} -> {spec.struct}: not parameters of the estimator: {unknown}"
        accounted |= set(spec.fields) | set(spec.python_only)
    assert params <= accounted, f"{cls.__name__}: parameters no Spec accounts for: {params - accounted}"


def test_params_refuses_missing_and_unknown_fields():
    core = _backend.core()
    struct = getattr(core, NATIVE[0]._tl_native[0].struct)
    full = {f: getattr(struct(), f) for f in struct._fields}
    assert tuple(_native.params(struct, **full)._fields) == tuple(struct._fields)
    missing = dict(full)
    missing.pop(struct._fields[0])
    with pytest.raises(TypeError, match="not given"):
        _native.params(struct, **missing)
    with pytest.raises(TypeError, match="not fields"):
        _native.params(struct, **full, no_such_field=1)


def test_cluster_neighbors_linalg_results_are_named():
    import numpy as np

    core = _backend.core()
    ctx = core.Context("cpu", 1, "identical", 0)
    X = np.arange(12.0).reshape(6, 2)
    metric = _native.params(core.MetricParams, metric="euclidean", p=2.0, direct=False)
    knn = core.knn_search(ctx, X, X[:2], metric, 2)
    assert tuple(knn._fields) == ("distances", "indices") and knn.indices.shape == (2, 2)
    radius = core.radius_search(ctx, X, X[:2], metric, 3.0)
    assert tuple(radius._fields) == ("offsets", "indices", "distances") and radius.offsets.shape == (3,)
    centers = np.ascontiguousarray(X[:2])
    assert tuple(core.kmeans_predict(ctx, X, None, centers, True)._fields) == ("labels", "inertia")
    assert core.kmeans_predict(ctx, X, None, centers, False).inertia is None
    assert tuple(core.kmeans_assign_sums(ctx, X, None, centers)._fields) == ("labels", "inertia", "sums", "wsum")
    assert tuple(core.kmeans_plusplus(ctx, X, None, 2, 0, 0)._fields) == ("centers", "indices")
    g = core.linalg_gram(ctx, X, None, None)
    assert tuple(g._fields) == ("G", "delivered") and g.G.shape == (2, 2) and g.delivered == "identical"
