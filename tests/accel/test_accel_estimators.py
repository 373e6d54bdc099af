"""Every accelerated estimator beyond the scalers: it runs on twinlearn for
served parameters and matches scikit-learn, falls back with the reason for
each unserved value, and keeps scikit-learn's interface (isinstance,
get_params, clone, pickle, scikit-learn's own methods on the mirrored state)."""

from __future__ import annotations

import logging
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score

import twinlearn.accel as accel
from accel_helpers import accel_state  # noqa: F401 (fixture)
from twinlearn.accel import _registry

LOGGER = "twinlearn.accel"


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def _blobs(n=600, d=5, seed=0):
    from sklearn.datasets import make_blobs

    return make_blobs(n_samples=n, n_features=d, centers=4, cluster_std=0.6, random_state=seed)[0]


def _regression(n=600, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n)


def _classification(n=600, d=6, seed=0, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    score = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def _low_rank(n=600, d=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)) @ rng.standard_normal((3, d)) * 4 + 0.01 * rng.standard_normal((n, d))


# Per estimator: parameters, data, and how results are compared with
# scikit-learn's ("exact": same values within rounding; "quality": same
# quality within the estimator's tolerance).
HGB = {"max_depth": 4, "max_leaf_nodes": None, "min_samples_leaf": 1, "early_stopping": False, "max_iter": 40,
       "random_state": 0}
CASES = {
    "KMeans": ({"n_clusters": 4, "random_state": 0}, _blobs, None),
    "MiniBatchKMeans": ({"n_clusters": 4, "random_state": 0, "batch_size": 128}, _blobs, None),
    "NearestNeighbors": ({"n_neighbors": 4}, _blobs, None),
    "KNeighborsClassifier": ({"n_neighbors": 5}, _classification, "y"),
    "KNeighborsRegressor": ({"n_neighbors": 5, "weights": "distance"}, _regression, "y"),
    "LinearRegression": ({}, _regression, "y"),
    "Ridge": ({"alpha": 2.0}, _regression, "y"),
    "RidgeClassifier": ({"alpha": 2.0}, _classification, "y"),
    "LogisticRegression": ({"C": 0.5}, _classification, "y"),
    "Lasso": ({"alpha": 0.05}, _regression, "y"),
    "ElasticNet": ({"alpha": 0.05, "l1_ratio": 0.3}, _regression, "y"),
    "PCA": ({"n_components": 3}, _low_rank, None),
    "TruncatedSVD": ({"n_components": 3, "algorithm": "arpack"}, _low_rank, None),
    "IncrementalPCA": ({"n_components": 3, "batch_size": 100}, _low_rank, None),
    "HistGradientBoostingClassifier": (HGB, _classification, "y"),
    "HistGradientBoostingRegressor": (HGB, _regression, "y"),
}
NEW = sorted(CASES)


def _setup(name):
    rs = _registry.lookup(name)
    params, make, has_y = CASES[name]
    data = make()
    X, y = (data if has_y else (data, None))
    Acc = accel.accelerate(rs.sklearn_cls)
    return rs, Acc, params, X, y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X) if y is None else est.fit(X, y)


def test_every_twinlearn_estimator_is_mapped():
    mapped = {e.twinlearn for e in _registry.entries()}
    import twinlearn.cluster
    import twinlearn.decomposition
    import twinlearn.linear_model
    import twinlearn.neighbors

    for mod in (twinlearn.cluster, twinlearn.neighbors, twinlearn.linear_model, twinlearn.decomposition):
        for name in mod.__all__:
            if isinstance(getattr(mod, name), type):
                assert f"{mod.__name__}.{name}" in mapped, name
    assert {"twinlearn.ensemble.GradientBoostingClassifier",
            "twinlearn.ensemble.GradientBoostingRegressor"} <= mapped
    assert set(NEW) <= {e.name for e in _registry.entries()}


@pytest.mark.parametrize("name", NEW)
def test_runs_on_twinlearn_and_matches_scikit_learn(name, caplog):
    rs, Acc, params, X, y = _setup(name)
    caplog.set_level(logging.INFO, logger=LOGGER)
    if name.startswith("Hist"):
        # Another tree family: compare the quality on held-out rows.
        Xt, yt, X, y = X[:400], y[:400], X[400:], y[400:]
    else:
        Xt, yt = X, y
    acc = _fit(Acc(**params), Xt, yt)
    ref = _fit(rs.sklearn_cls(**params), Xt, yt)
    assert accel.fitted_on(acc) == "twinlearn:cpu", messages(caplog)
    assert any(f"{name}.fit: twinlearn on cpu" in m for m in messages(caplog))
    # The mirrored attributes are NumPy values with scikit-learn's shapes and dtypes.
    for a in rs.attributes:
        if a.startswith("_") or not hasattr(ref, a):
            continue
        got, want = getattr(acc, a), getattr(ref, a)
        if isinstance(want, np.ndarray):
            assert isinstance(got, np.ndarray), a
            assert got.shape == want.shape, a
            assert got.dtype == want.dtype or (got.dtype.kind == want.dtype.kind == "f"), a
    _compare(name, acc, ref, X, y)


def _compare(name, acc, ref, X, y):
    if name in ("KMeans", "MiniBatchKMeans"):
        # Other initial draws: the same clusters (well separated blobs), not the same numbering.
        assert adjusted_rand_score(ref.labels_, acc.labels_) == 1.0
        assert acc.labels_.dtype == np.int32 and acc.predict(X).dtype == ref.predict(X).dtype
        assert_allclose(np.sort(acc.transform(X).min(axis=1)), np.sort(ref.transform(X).min(axis=1)),
                        rtol=1e-6 if name == "KMeans" else 0.05, atol=1e-6 if name == "KMeans" else 0.05)
        assert acc.score(X) == pytest.approx(ref.score(X), rel=1e-6 if name == "KMeans" else 0.05)
    elif name == "NearestNeighbors":
        dist, ind = acc.kneighbors(X[:50])
        rdist, rind = ref.kneighbors(X[:50])
        assert_allclose(dist, rdist, rtol=1e-10)
        assert_array_equal(ind, rind)
        assert ind.dtype == rind.dtype
        assert (acc.kneighbors_graph(X[:50]) != ref.kneighbors_graph(X[:50])).nnz == 0
        d1, i1 = acc.radius_neighbors(X[:20], radius=1.0, sort_results=True)
        d2, i2 = ref.radius_neighbors(X[:20], radius=1.0, sort_results=True)
        for a, b, c, e in zip(d1, d2, i1, i2):
            assert_allclose(a, b, rtol=1e-10)
            assert_array_equal(c, e)
    elif name in ("KNeighborsClassifier", "RidgeClassifier", "LogisticRegression",
                  "HistGradientBoostingClassifier"):
        pred, rpred = acc.predict(X), ref.predict(X)
        assert pred.dtype == rpred.dtype
        agreement = {"KNeighborsClassifier": 1.0, "RidgeClassifier": 1.0, "LogisticRegression": 0.99,
                     "HistGradientBoostingClassifier": 0.75}[name]
        assert np.mean(pred == rpred) >= agreement
        assert acc.score(X, y) >= ref.score(X, y) - (0.05 if name.startswith("Hist") else 0.01)
        if hasattr(ref, "predict_proba"):
            proba, rproba = acc.predict_proba(X), ref.predict_proba(X)
            assert proba.dtype == rproba.dtype == np.float64 and proba.shape == rproba.shape
            if name == "KNeighborsClassifier":
                assert_array_equal(proba, rproba)
            elif name == "LogisticRegression":
                assert_allclose(proba, rproba, atol=1e-3)
        if name == "RidgeClassifier":
            assert_allclose(acc.decision_function(X), ref.decision_function(X), rtol=1e-8, atol=1e-10)
    elif name in ("KNeighborsRegressor", "LinearRegression", "Ridge", "Lasso", "ElasticNet",
                  "HistGradientBoostingRegressor"):
        pred, rpred = acc.predict(X), ref.predict(X)
        assert pred.dtype == rpred.dtype == np.float64
        if name.startswith("Hist"):
            assert acc.score(X, y) >= ref.score(X, y) - 0.05
        else:
            assert_allclose(pred, rpred, rtol=1e-6, atol=1e-6)
            if hasattr(ref, "coef_"):
                assert_allclose(acc.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
                assert_allclose(acc.intercept_, ref.intercept_, rtol=1e-5, atol=1e-6)
    else:  # decompositions: the same subspace; components equal up to sign (svd_flip)
        assert_allclose(acc.explained_variance_, ref.explained_variance_, rtol=1e-6)
        assert_allclose(np.abs(acc.components_), np.abs(ref.components_), atol=1e-6)
        Z, rZ = acc.transform(X), ref.transform(X)
        assert_allclose(np.abs(Z), np.abs(rZ), rtol=1e-6, atol=1e-6)
        assert_allclose(acc.inverse_transform(Z), ref.inverse_transform(rZ), rtol=1e-6, atol=1e-6)


# (estimator, parameters, expected reason): each unserved value runs scikit-learn.
UNSERVED = [
    ("KMeans", {"n_clusters": 4, "verbose": 1}, "verbose=1 unsupported"),
    ("KMeans", {"n_clusters": 1, "algorithm": "elkan"}, "algorithm='elkan' with n_clusters=1"),
    ("MiniBatchKMeans", {"n_clusters": 4, "verbose": 1}, "verbose=1 unsupported"),
    ("NearestNeighbors", {"metric": "correlation"}, "metric='correlation' unsupported"),
    ("NearestNeighbors", {"metric": "cosine", "algorithm": "kd_tree"}, "scikit-learn refuses it"),
    ("NearestNeighbors", {"p": 0.5}, "p=0.5 unsupported with metric='minkowski'"),
    ("NearestNeighbors", {"metric_params": {"w": np.ones(5)}}, "metric_params="),
    ("KNeighborsClassifier", {"weights": lambda d: 1 / (1 + d)}, "weights=<function"),
    ("KNeighborsRegressor", {"metric": "hamming"}, "metric='hamming' unsupported"),
    ("Ridge", {"solver": "sag", "random_state": 0}, "solver='sag' unsupported"),
    ("RidgeClassifier", {"solver": "lsqr"}, "solver='lsqr' unsupported"),
    ("LogisticRegression", {"solver": "liblinear"}, "solver='liblinear' unsupported"),
    ("LogisticRegression", {"warm_start": True}, "warm_start=True unsupported"),
    ("Lasso", {"warm_start": True}, "warm_start=True unsupported"),
    ("ElasticNet", {"precompute": np.eye(6)}, "precompute=array"),
    ("HistGradientBoostingClassifier", {**HGB, "early_stopping": True, "scoring": "f1"}, "scoring='f1' unsupported"),
    ("HistGradientBoostingClassifier", {"early_stopping": False}, "max_depth=None unsupported"),
    ("HistGradientBoostingClassifier", {**HGB, "max_depth": 17}, "max_depth=17 unsupported"),
    ("HistGradientBoostingClassifier", {**HGB, "max_features": 0.5}, "max_features=0.5 unsupported"),
    ("HistGradientBoostingClassifier", {**HGB, "warm_start": True}, "warm_start=True unsupported"),
    ("HistGradientBoostingRegressor", {**HGB, "loss": "absolute_error"}, "loss='absolute_error' unsupported"),
    ("HistGradientBoostingRegressor", {**HGB, "categorical_features": [0]}, "categorical_features=[0]"),
]


@pytest.mark.parametrize("name, params, reason", UNSERVED,
                         ids=[f"{n}-{'-'.join(p for p in ps if p not in HGB or ps[p] != HGB[p]) or 'defaults'}"
                              for n, ps, _ in UNSERVED])
def test_unserved_parameter_runs_scikit_learn_and_says_why(name, params, reason, caplog):
    rs, Acc, _, X, y = _setup(name)
    caplog.set_level(logging.INFO, logger=LOGGER)
    try:
        ref = _fit(rs.sklearn_cls(**params), X, y)
    except ValueError as exc:  # scikit-learn refuses these values: so does the accelerated estimator
        with pytest.raises(type(exc)):
            _fit(Acc(**params), X, y)
        assert any(f"{name}.fit: scikit-learn: " in m and reason in m for m in messages(caplog)), messages(caplog)
        return
    acc = _fit(Acc(**params), X, y)
    assert accel.fitted_on(acc) == "scikit-learn"
    assert any(f"{name}.fit: scikit-learn: " in m and reason in m for m in messages(caplog)), messages(caplog)
    # scikit-learn ran: its own results.
    out = acc.predict(X) if hasattr(ref, "predict") and name != "KMeans" else acc.transform(X) \
        if hasattr(ref, "transform") else acc.kneighbors(X[:10])[1]
    want = ref.predict(X) if hasattr(ref, "predict") and name != "KMeans" else ref.transform(X) \
        if hasattr(ref, "transform") else ref.kneighbors(X[:10])[1]
    if "random_state" not in params and name in ("KMeans", "MiniBatchKMeans"):
        return  # unseeded: nothing to compare
    assert_allclose(np.asarray(out, dtype=float), np.asarray(want, dtype=float))


@pytest.mark.parametrize("name", NEW)
def test_sparse_input_runs_scikit_learn(name, caplog):
    rs, Acc, params, X, y = _setup(name)
    if name.startswith("Hist"):
        pytest.skip("HistGradientBoosting refuses sparse X")
    caplog.set_level(logging.INFO, logger=LOGGER)
    _fit(Acc(**params), sp.csr_matrix(X), y)
    assert any(f"{name}.fit: scikit-learn: X is sparse" in m for m in messages(caplog))


@pytest.mark.parametrize("name", NEW)
def test_nan_is_served_only_where_twinlearn_takes_it(name, caplog):
    rs, Acc, params, X, y = _setup(name)
    X = X.copy()
    X[3, 1] = np.nan
    caplog.set_level(logging.INFO, logger=LOGGER)
    if rs.entry.allow_nan:
        acc = _fit(Acc(**params), X, y)
        assert accel.fitted_on(acc) == "twinlearn:cpu"
        assert np.all(np.isfinite(acc.predict(X[:10])))
    else:
        with pytest.raises(ValueError, match="NaN"):
            _fit(Acc(**params), X, y)
        assert any(f"{name}.fit: scikit-learn: X contains NaN" in m for m in messages(caplog))


@pytest.mark.parametrize("name", NEW)
def test_interface_clone_and_pickle(name):
    rs, Acc, params, X, y = _setup(name)
    acc = Acc(**params)
    assert isinstance(acc, rs.sklearn_cls) and accel.is_accelerated(acc)
    assert acc.get_params() == rs.sklearn_cls(**params).get_params()
    c = clone(acc)
    assert type(c) is Acc and c.get_params() == acc.get_params()
    _fit(acc, X, y)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    loaded = pickle.loads(pickle.dumps(acc))
    assert type(loaded) is rs.sklearn_cls  # the plain class: scikit-learn's own methods
    Q = X[:40]
    if name.startswith("KNeighbors"):
        # Off the training rows: with weights="distance" a row's rounding-level
        # distance to itself (0 here, 1.7e-7 in scikit-learn 1.9 for some rows)
        # decides between an infinite and a finite weight.
        Q = Q + np.random.default_rng(0).normal(scale=1e-2, size=Q.shape).astype(Q.dtype)
    for m in ("predict", "predict_proba", "decision_function", "transform", "kneighbors", "score_samples"):
        if m in rs.methods:
            want = getattr(acc, m)(Q)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = getattr(loaded, m)(Q)
            if isinstance(want, tuple):
                want, got = want[1], got[1]
            # twinlearn's float64 predictions against scikit-learn's evaluation of
            # the mirrored state, within rounding.
            tol = 1e-9
            assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=tol, atol=tol)


def test_kmeans_after_twinlearn_fit_scikit_learn_serves_sparse_queries(caplog):
    from sklearn.cluster import KMeans

    X = _blobs()
    acc = _fit(accel.accelerate(KMeans)(n_clusters=4, random_state=0), X, None)
    caplog.set_level(logging.INFO, logger=LOGGER)
    assert_array_equal(acc.predict(sp.csr_matrix(X)), acc.labels_)
    assert any("KMeans.predict: scikit-learn: X is sparse" in m for m in messages(caplog))


def test_neighbors_effective_metric_is_scikit_learns():
    from sklearn.neighbors import NearestNeighbors

    X = _blobs()
    for kw in ({}, {"p": 1}, {"p": 3}, {"metric": "l2"}, {"metric": "cityblock"}, {"p": np.inf}):
        acc = accel.accelerate(NearestNeighbors)(**kw).fit(X)
        ref = NearestNeighbors(**kw).fit(X)
        assert accel.fitted_on(acc) == "twinlearn:cpu"
        assert acc.effective_metric_ == ref.effective_metric_, kw
        assert acc.effective_metric_params_ == ref.effective_metric_params_, kw
        assert_allclose(acc.kneighbors(X[:5])[0], ref.kneighbors(X[:5])[0], rtol=1e-10)


def test_minibatch_kmeans_partial_fit_stays_on_twinlearn(caplog):
    from sklearn.cluster import MiniBatchKMeans

    X = _blobs()
    acc = accel.accelerate(MiniBatchKMeans)(n_clusters=4, random_state=0)
    caplog.set_level(logging.INFO, logger=LOGGER)
    for chunk in np.array_split(X, 6):
        acc.partial_fit(chunk)
    assert accel.fitted_on(acc) == "twinlearn:cpu" and acc.n_steps_ == 6
    assert sum("MiniBatchKMeans.partial_fit: twinlearn on cpu" in m for m in messages(caplog)) == 6
    ref = MiniBatchKMeans(n_clusters=4, random_state=0).fit(X)
    assert -acc.score(X) <= 1.2 * -ref.score(X)


def test_hist_gradient_boosting_state_serves_scikit_learns_methods():
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _classification(n_classes=3)
    X = X.copy()
    X[::17, 2] = np.nan
    acc = _fit(accel.accelerate(HistGradientBoostingClassifier)(**HGB), X, y)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    assert acc.n_iter_ == HGB["max_iter"] and acc.n_trees_per_iteration_ == 3
    assert not acc.do_early_stopping_ and acc.train_score_.shape == (0,)
    assert_array_equal(acc.classes_, [0, 1, 2])
    # scikit-learn's own code on the mirrored state gives twinlearn's predictions.
    plain = HistGradientBoostingClassifier.predict_proba(acc, X)
    assert_allclose(plain, acc.predict_proba(X), rtol=1e-5, atol=1e-6)
    staged = list(acc.staged_predict_proba(X))
    assert len(staged) == HGB["max_iter"] and staged[-1].dtype == np.float64
    assert_allclose(staged[-1], acc.predict_proba(X))
    # The accelerated stages are the native estimator's float64 stages, as they are.
    native = acc.__dict__["_twinlearn"].est
    decision = list(acc.staged_decision_function(X))
    for a, b in zip(staged, native.staged_predict_proba(X)):
        assert b.dtype == np.float64 and a.tobytes() == b.tobytes()
    for a, b in zip(decision, native.staged_decision_function(X)):
        assert a.dtype == np.float64 and a.tobytes() == b.tobytes()
    # A separating arm: without the leaf ordering the mirrored trees would not agree.
    acc._predictors[0][0].nodes["value"][-1] += 1.0
    assert not np.allclose(HistGradientBoostingClassifier.predict_proba(acc, X), plain)


def test_hist_gradient_boosting_served_with_non_binding_leaf_limit():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _regression()
    acc = _fit(accel.accelerate(HistGradientBoostingRegressor)(**{**HGB, "max_leaf_nodes": 16}), X, y)
    assert accel.fitted_on(acc) == "twinlearn:cpu"  # 16 == 2**4 leaves: the limit does not bind
    assert acc.__dict__["_twinlearn"].est.grow_policy_ == "SymmetricTree"


@pytest.mark.parametrize("kw", [{"monotonic_cst": [1, 0, 0, 0, 0, 0]}, {"monotonic_cst": [0, -1, 0, 0, 0, 0]},
                                {"interaction_cst": "pairwise"}, {"interaction_cst": [[0, 1], [2, 3]]}])
def test_hist_gradient_boosting_constraints_run_on_twinlearn(kw):
    """monotonic_cst and interaction_cst translate to the twinlearn estimator
    (per-node trees under the same constraint); the mirrored predictors give
    its predictions."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _regression(n=2000)
    acc = _fit(accel.accelerate(HistGradientBoostingRegressor)(**{**HGB, **kw}), X, y)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    native = acc.__dict__["_twinlearn"].est
    assert native.grow_policy_ == "Lossguide"
    for k, v in kw.items():
        assert getattr(native, k) == v
    assert_allclose(HistGradientBoostingRegressor.predict(acc, X), acc.predict(X), rtol=1e-5, atol=1e-5)
    if "monotonic_cst" in kw:
        f = int(np.flatnonzero(kw["monotonic_cst"])[0])
        sign = kw["monotonic_cst"][f]
        Z = np.repeat(X[:20], 50, axis=0)
        Z[:, f] = np.tile(np.linspace(-3, 3, 50), 20)
        assert (sign * np.diff(acc.predict(Z).reshape(20, 50), axis=1)).min() >= 0.0


def test_hist_gradient_boosting_multiclass_monotonic_cst_is_refused_as_scikit_learn_does():
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _classification()
    params = {**HGB, "monotonic_cst": [1, 0, 0, 0, 0, 0]}
    with pytest.raises(ValueError, match="multiclass"):
        HistGradientBoostingClassifier(**params).fit(X, y)
    with pytest.raises(ValueError, match="multiclass"):
        accel.accelerate(HistGradientBoostingClassifier)(**params).fit(X, y)


@pytest.mark.parametrize("kw", [{"max_depth": 6, "max_leaf_nodes": 12}, {"max_depth": 4, "min_samples_leaf": 40},
                                {"max_depth": 6}])  # the last: scikit-learn's defaults 31 and 20
def test_hist_gradient_boosting_per_node_trees(kw):
    """A binding leaf limit or min_samples_leaf > 1: best-first per-node trees
    with a learned NaN side, mirrored exactly into scikit-learn's predictors."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    for cls, data in ((HistGradientBoostingClassifier, _classification), (HistGradientBoostingRegressor, _regression)):
        X, y = data(n=2000)
        X, y = X.copy(), y.copy()
        X[::6, 0] = np.nan  # NaN in the strongest feature, on rows that act like its high values
        y[::6] = y.max()
        params = {"early_stopping": False, "max_iter": 15, "random_state": 0, **kw}
        acc = _fit(accel.accelerate(cls)(**params), X, y)
        assert accel.fitted_on(acc) == "twinlearn:cpu"
        native = acc.__dict__["_twinlearn"].est
        assert native.grow_policy_ == "Lossguide" and native._nan_mode == "Learned"
        assert native.split_nan_right_.any()
        leaves = [int((native.split_feature_[ss] >= 0).sum()) + 1 for _, ss, _ in _trees(native)]
        assert max(leaves) <= params.get("max_leaf_nodes", 31)
        # The mirrored trees hold the nodes that split, as scikit-learn's would.
        assert [p[0].get_n_leaf_nodes() for p in acc._predictors] == leaves
        assert max(p[0].get_max_depth() for p in acc._predictors) <= params["max_depth"]
        method = "predict_proba" if cls is HistGradientBoostingClassifier else "predict"
        ours = getattr(acc, method)(X)
        plain = getattr(cls, method)(acc, X)  # scikit-learn's code on the mirrored state
        assert_allclose(plain, ours, rtol=1e-5, atol=1e-5)
        again = pickle.loads(pickle.dumps(acc))
        assert_allclose(getattr(cls, method)(again, X), ours, rtol=1e-5, atol=1e-5)
        # Separating arm: NaN sent the other way changes the mirrored predictions.
        for per_output in acc._predictors:
            for p in per_output:
                inner = p.nodes["is_leaf"] == 0
                p.nodes["missing_go_to_left"][inner] ^= 1
        assert not np.allclose(getattr(cls, method)(acc, X), plain, rtol=1e-5, atol=1e-5)


def test_hist_gradient_boosting_auto_early_stopping_depends_on_rows(caplog):
    """early_stopping='auto' (scikit-learn's default) stops early above 10 000
    rows only; twinlearn serves both sides, with scikit-learn's rule."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    accel.set_verbose(True)
    caplog.set_level(logging.INFO, logger=LOGGER)
    for n, on in ((10_000, False), (10_001, True)):
        X, y = _regression(n=n)
        acc = _fit(accel.accelerate(HistGradientBoostingRegressor)(max_iter=5, max_depth=3), X, y)
        assert accel.fitted_on(acc) == "twinlearn:cpu", n
        assert acc.do_early_stopping_ is on
        assert acc.train_score_.shape == ((acc.n_iter_ + 1,) if on else (0,))
        assert acc.validation_score_.shape == acc.train_score_.shape
    native = acc.__dict__["_twinlearn"].est
    assert native.early_stopping == "auto" and native.do_early_stopping_


def test_hist_gradient_boosting_early_stopping_translates():
    """early_stopping, scoring, validation_fraction, n_iter_no_change, tol and
    verbose reach the twinlearn estimator; its fit stops by scikit-learn's rule."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _classification(n=3000)
    params = {**HGB, "max_iter": 200, "learning_rate": 0.5, "early_stopping": True, "scoring": "accuracy",
              "validation_fraction": 0.2, "n_iter_no_change": 3, "tol": 0.0, "random_state": 0}
    acc = _fit(accel.accelerate(HistGradientBoostingClassifier)(**params), X, y)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    native = acc.__dict__["_twinlearn"].est
    for k in ("early_stopping", "scoring", "validation_fraction", "n_iter_no_change", "tol", "verbose"):
        assert getattr(native, k) == params.get(k, 0), k
    assert acc.n_iter_ < 200 and acc.do_early_stopping_
    assert acc.validation_score_.shape == (acc.n_iter_ + 1,)
    assert_array_equal(acc.validation_score_, native.validation_score_)


def _trees(est):
    """Per tree of a per-node model: (depth, its split slice, its leaf slice)."""
    out, s, l = [], 0, 0
    for d in np.asarray(est.tree_depth_, dtype=np.int64):
        c, nl = (1 << int(d)) - 1, (1 << int(d)) * est.n_outputs_
        out.append((int(d), slice(s, s + c), slice(l, l + nl)))
        s, l = s + c, l + nl
    return out


def test_hist_gradient_boosting_class_weight_runs_on_twinlearn():
    """class_weight multiplies the sample weights, as in scikit-learn: served."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.utils.class_weight import compute_sample_weight

    X, y = _classification(n=1500, n_classes=2)
    cls = accel.accelerate(HistGradientBoostingClassifier)
    weighted = _fit(cls(**{**HGB, "class_weight": "balanced"}), X, y)
    assert accel.fitted_on(weighted) == "twinlearn:cpu"
    ref = cls(**HGB).fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    assert weighted.decision_function(X).tobytes() == ref.decision_function(X).tobytes()
