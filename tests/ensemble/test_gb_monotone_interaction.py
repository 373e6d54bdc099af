"""Monotonic and interaction constraints of per-node trees (Depthwise,
Lossguide): scikit-learn's monotonic_cst / interaction_cst on the
scikit-learn-shaped estimators, CatBoost's monotone_constraints on
GradientBoosting. Each rule is checked on data where the unconstrained model
breaks it (the separating arm), and the constrained paths against the
unconstrained bits where the constraint cannot bind."""

import numpy as np
import pytest

from twinlearn import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from gb_helpers import assert_same_bits_across_thread_counts, assert_same_model, bits, check_booster_estimator, trees


def wavy(n=3000, seed=0):
    """y rises with x0 overall but oscillates (sin), and x0 interacts with x2:
    an unconstrained model is neither monotone in x0 nor free of interactions."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = X[:, 0] + np.sin(4 * X[:, 0]) + 0.5 * X[:, 1] + X[:, 0] * X[:, 2] + 0.1 * rng.standard_normal(n)
    return X, y


def along(est, X, feature, n_base=25, n_grid=120):
    """Predictions on a grid of `feature` (rows: base points taken from X)."""
    base = X[:: max(1, len(X) // n_base)][:n_base]
    grid = np.linspace(X[:, feature].min() - 0.5, X[:, feature].max() + 0.5, n_grid)
    Z = np.repeat(base, n_grid, axis=0)
    Z[:, feature] = np.tile(grid, len(base))
    return np.asarray(est.predict(Z), dtype=np.float64).reshape(len(base), n_grid)


def path_feature_sets(est):
    """The set of features split on along every root-to-leaf path of every tree."""
    out = []
    for d, ss, _ in trees(est):
        feat = est.split_feature_[ss]
        stack = [(0, 0, frozenset())]
        while stack:
            level, p, used = stack.pop()
            f = feat[(1 << level) - 1 + p] if level < d else -1
            if f < 0:
                out.append(used)
                continue
            used = used | {int(f)}
            stack += [(level + 1, p, used), (level + 1, p + (1 << level), used)]
    return out


def regressor(**kw):
    kw.setdefault("n_estimators", 40)
    kw.setdefault("max_depth", 5)
    kw.setdefault("learning_rate", 0.3)
    kw.setdefault("device", "cpu")
    return GradientBoostingRegressor(**kw)


def catboost(**kw):
    kw.setdefault("loss", "RMSE")
    kw.setdefault("n_estimators", 30)
    kw.setdefault("max_depth", 5)
    kw.setdefault("learning_rate", 0.3)
    kw.setdefault("device", "cpu")
    return GradientBoosting(**kw)


# -- monotonic ---------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("make", ["sklearn", "Depthwise", "Lossguide"])
def test_monotonic_constraint_makes_predictions_monotone(sign, make):
    X, y = wavy()
    y = sign * y
    cst = [sign, 0, 0, 0]
    if make == "sklearn":
        free, held = regressor(max_leaf_nodes=31), regressor(monotonic_cst=cst)
    else:
        free = catboost(grow_policy=make)
        held = catboost(grow_policy=make, monotone_constraints=cst)
    steps_free = sign * np.diff(along(free.fit(X, y), X, 0), axis=1)
    steps_held = sign * np.diff(along(held.fit(X, y), X, 0), axis=1)
    assert steps_free.min() < -1e-3  # the separating arm: unconstrained, it is not monotone
    assert steps_held.min() >= 0.0
    assert held.grow_policy_ == ("Lossguide" if make == "sklearn" else make)
    # Still a useful model of the other features.
    assert held.score(X, y) > 0.5


def test_monotonic_constraint_on_several_features_and_classification():
    X, y = wavy(seed=1)
    yc = (y + 0.5 * X[:, 3] > 0).astype(int)
    m = GradientBoostingClassifier(n_estimators=30, max_depth=4, learning_rate=0.3, device="cpu",
                                   monotonic_cst=[1, 0, 0, -1]).fit(X, yc)
    p0 = np.asarray(m.decision_function(along_rows(X, 0)), dtype=np.float64).reshape(25, 120)
    p3 = np.asarray(m.decision_function(along_rows(X, 3)), dtype=np.float64).reshape(25, 120)
    assert np.diff(p0, axis=1).min() >= 0.0 and np.diff(p3, axis=1).max() <= 0.0


def along_rows(X, feature, n_base=25, n_grid=120):
    base = X[:: max(1, len(X) // n_base)][:n_base]
    Z = np.repeat(base, n_grid, axis=0)
    Z[:, feature] = np.tile(np.linspace(X[:, feature].min() - 0.5, X[:, feature].max() + 0.5, n_grid), n_base)
    return Z


def test_monotonic_dict_by_feature_name():
    pd = pytest.importorskip("pandas")
    X, y = wavy(seed=2)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_name = regressor(monotonic_cst={"a": 1}).fit(df, y)
    by_index = regressor(monotonic_cst=[1, 0, 0, 0]).fit(df, y)
    assert_same_model(by_name, by_index)
    cb_name = catboost(grow_policy="Depthwise", monotone_constraints={"a": 1}).fit(df, y)
    cb_list = catboost(grow_policy="Depthwise", monotone_constraints="(1,0,0,0)").fit(df, y)
    cb_str = catboost(grow_policy="Depthwise", monotone_constraints=["a:1"]).fit(df, y)
    assert_same_model(cb_name, cb_list)
    assert_same_model(cb_name, cb_str)


@pytest.mark.parametrize("grow_policy", ["Depthwise", "Lossguide"])
def test_constraint_that_cannot_bind_keeps_the_unconstrained_bits(grow_policy):
    """A monotonic constraint on a constant feature (never split) scores every
    candidate by the bounded gain with unbounded nodes; an interaction group
    of every feature allows every split. Both give the unconstrained model bit
    for bit (the bounded gain and leaf are the plain ones when nothing clips)."""
    X, y = wavy(seed=3)
    X = np.column_stack([X, np.ones(len(X))])
    free = catboost(grow_policy=grow_policy, nan_mode="Learned").fit(X, y)
    mono = catboost(grow_policy=grow_policy, nan_mode="Learned", monotone_constraints=[0, 0, 0, 0, 1]).fit(X, y)
    assert_same_model(free, mono)
    assert bits(free.predict(X)) == bits(mono.predict(X))
    a = regressor(max_leaf_nodes=2 ** 5).fit(X, y)
    b = regressor(max_leaf_nodes=2 ** 5, interaction_cst=[[0, 1, 2, 3, 4]]).fit(X, y)
    assert_same_model(a, b)


def test_default_is_unchanged_and_oblivious():
    X, y = wavy(seed=4)
    m = regressor().fit(X, y)
    assert m.grow_policy_ == "SymmetricTree"
    assert regressor(monotonic_cst=[0, 0, 0, 0]).fit(X, y).grow_policy_ == "Lossguide"


# -- interaction -------------------------------------------------------------------------------
@pytest.mark.parametrize("cst, groups", [
    ([[0, 1], [2, 3]], [{0, 1}, {2, 3}]),
    ([{0}, [1, 2]], [{0}, {1, 2}, {3}]),  # 3 is listed nowhere: a group of its own
    ("no_interactions", [{0}, {1}, {2}, {3}]),
    ("pairwise", [{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}]),
])
@pytest.mark.parametrize("make", ["Lossguide", "Depthwise"])
def test_interaction_constraint_keeps_every_path_in_one_group(cst, groups, make):
    X, y = wavy(seed=5)
    y = y + X[:, 1] * X[:, 3] + X[:, 2] * X[:, 3]
    if make == "Lossguide":
        free, held = regressor(max_leaf_nodes=31).fit(X, y), regressor(interaction_cst=cst).fit(X, y)
    else:
        # The core's Depthwise trees (the scikit-learn-shaped estimators grow Lossguide ones).
        free, held = catboost(grow_policy="Depthwise").fit(X, y), _fit_depthwise_interaction(X, y, cst)

    def within(paths):
        return all(any(s <= g for g in groups) for s in paths)

    assert not within(path_feature_sets(free))  # the separating arm
    paths = path_feature_sets(held)
    assert within(paths)
    assert max(len(s) for s in paths) >= (1 if cst == "no_interactions" else 2)


def _fit_depthwise_interaction(X, y, cst):
    """A Depthwise fit under interaction_cst through the core directly
    (GradientBoosting has no such parameter); returned as a fitted-looking
    object with split_feature_ and tree_depth_."""
    from twinlearn import _backend, _native
    from twinlearn.ensemble._params import catboost_core_params

    est = catboost(grow_policy="Depthwise")
    params = catboost_core_params(est)
    groups = {"no_interactions": [[i] for i in range(X.shape[1])],
              "pairwise": [[i, j] for i in range(X.shape[1]) for j in range(i + 1, X.shape[1])]}.get(cst, cst) \
        if isinstance(cst, str) else [sorted(g) for g in cst]
    params.update(loss="RMSE", loss_param=0.0, n_classes=2, early_stopping_rounds=0, eval_metric="Loss",
                  boost_from_average=True, interaction_constraints=groups)
    core = _backend.core()
    ctx = core.Context("cpu", 1, "identical")
    fit = core.gbdt_fit(ctx, np.ascontiguousarray(X), y.astype(np.float64), None,
                        _native.params(core.GbdtParams, **params))

    class Fitted:
        split_feature_ = np.asarray(fit.split_feature)
        tree_depth_ = np.asarray(fit.tree_depth)
        n_outputs_ = 1

    return Fitted()


def test_interaction_constraint_with_categorical_columns():
    """A categorical column's encoded columns (one-hot) belong to its groups."""
    X, y = wavy(seed=6)
    X[:, 3] = (X[:, 3] > 0).astype(float)
    y = y + 2 * X[:, 3] * X[:, 1]
    m = regressor(interaction_cst=[[0, 2], [1, 3]], categorical_features=[3]).fit(X, y)
    src = m._cat_encoder.sources()
    for s in path_feature_sets(m):
        inputs = {int(src[f]) for f in s}
        assert inputs <= {0, 2} or inputs <= {1, 3}


# -- determinism -------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{"monotonic_cst": [1, 0, -1, 0]}, {"interaction_cst": [[0, 1], [2, 3]]},
                                {"monotonic_cst": [1, 0, 0, 0], "interaction_cst": "pairwise",
                                 "min_samples_leaf": 20, "max_leaf_nodes": 15}])
def test_fits_are_the_same_bits_across_thread_counts(kw):
    X, y = wavy(n=5000, seed=7)
    X[np.random.default_rng(1).random(X.shape) < 0.03] = np.nan
    assert_same_bits_across_thread_counts(lambda: regressor(**kw), X, y)
    assert_same_bits_across_thread_counts(
        lambda: catboost(grow_policy="Depthwise", monotone_constraints=[1, 0, -1, 0]), X, y)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["identical", "fast"])
@pytest.mark.parametrize("kw", [
    {"grow_policy": "Depthwise", "monotone_constraints": [1, 0, -1, 0, 0, 0]},
    {"grow_policy": "Lossguide", "max_leaves": 13, "monotone_constraints": [0, -1, 0, 1, 0, 0],
     "nan_mode": "Learned", "min_data_in_leaf": 10},
    {"grow_policy": "Depthwise", "monotone_constraints": [1, 0, 0, 0, 0, 0], "nan_mode": "Learned"},
])
def test_cpu_and_gpu_give_identical_bits_monotone(mode, kw):
    X, y = wavy(n=20000, seed=8)
    X = np.column_stack([X, X[:, :2] ** 2])
    X[np.random.default_rng(3).random(X.shape) < 0.02] = np.nan
    Xe, ye = X[:3000], y[:3000]
    cpu = catboost(numeric_mode=mode, **kw).fit(X, y, eval_set=(Xe, ye))
    gpu = catboost(device="cuda:0", numeric_mode=mode, **kw).fit(X, y, eval_set=(Xe, ye))
    assert gpu.numeric_mode_used() == "identical"
    assert_same_model(cpu, gpu)
    assert bits(gpu.predict(X)) == bits(cpu.predict(X))


@pytest.mark.gpu
@pytest.mark.parametrize("kw", [{"interaction_cst": [[0, 1], [2, 3]]},
                                {"interaction_cst": "pairwise", "monotonic_cst": [1, 0, 0, -1]},
                                {"monotonic_cst": [-1, 0, 1, 0], "max_leaf_nodes": 9, "min_samples_leaf": 20}])
@pytest.mark.parametrize("cls", ["regressor", "classifier"])
def test_cpu_and_gpu_give_identical_bits_scikit_learn_shaped(kw, cls):
    X, y = wavy(n=20000, seed=9)
    X[np.random.default_rng(4).random(X.shape) < 0.02] = np.nan
    if cls == "classifier":
        make = lambda device: GradientBoostingClassifier(n_estimators=20, max_depth=6, device=device,  # noqa: E731
                                                         random_state=0, **kw)
        y = (y > np.median(y)).astype(int)
    else:
        make = lambda device: regressor(n_estimators=20, max_depth=6, device=device, random_state=0, **kw)  # noqa: E731
    cpu, gpu = make("cpu").fit(X, y), make("cuda:0").fit(X, y)
    assert_same_model(cpu, gpu)


@pytest.mark.gpu
def test_cpu_and_gpu_give_identical_bits_multiclass_interaction():
    X, y = wavy(n=12000, seed=10)
    yc = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    make = lambda device: GradientBoostingClassifier(n_estimators=10, max_depth=5, device=device,  # noqa: E731
                                                     interaction_cst=[[0, 1], [2, 3]], random_state=0)
    assert_same_model(make("cpu").fit(X, yc), make("cuda:0").fit(X, yc))


# -- validation --------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, match", [
    ({"monotonic_cst": [1, 0]}, "monotonic_cst"),
    ({"monotonic_cst": [2, 0, 0, 0]}, "monotonic_cst"),
    ({"interaction_cst": [[0, 7]]}, "Interaction constraints must consist of integer indices"),
    ({"interaction_cst": [[0, 1.5]]}, "Interaction constraints must consist of integer indices"),
    ({"interaction_cst": [0, 1]}, "Interaction constraints must be a sequence"),
    ({"interaction_cst": "all"}, "interaction_cst"),
    ({"monotonic_cst": {"a": 1}}, "feature names"),
    ({"monotonic_cst": [1, 0, 0, 0], "loss": "absolute_error"}, "monotonic_cst is not supported with loss"),
    ({"monotonic_cst": [1, 0, 0, 0], "categorical_features": [0]}, "Categorical features cannot have monotonic"),
])
def test_bad_scikit_learn_constraints_raise(kw, match):
    X, y = wavy(n=500)
    with pytest.raises(ValueError, match=match):
        regressor(n_estimators=2, **kw).fit(X, y)


def test_multiclass_refuses_monotonic_cst():
    X, y = wavy(n=600)
    yc = np.digitize(y, [-1, 1])
    with pytest.raises(ValueError, match="monotonic constraints are not supported for multiclass"):
        GradientBoostingClassifier(n_estimators=2, monotonic_cst=[1, 0, 0, 0], device="cpu").fit(X, yc)
    GradientBoostingClassifier(n_estimators=2, interaction_cst="pairwise", device="cpu").fit(X, yc)


@pytest.mark.parametrize("kw, match", [
    ({"monotone_constraints": [1, 0, 0, 0]}, "grow_policy 'Depthwise' or 'Lossguide'"),
    ({"grow_policy": "Depthwise", "monotone_constraints": [1, 0]}, "has 2 entries"),
    ({"grow_policy": "Depthwise", "monotone_constraints": [1, 0, 0, 0.5]}, "-1, 0 or 1"),
    ({"grow_policy": "Depthwise", "monotone_constraints": "1,0,0,0"}, "'\\(1,0,-1\\)'"),
    ({"grow_policy": "Depthwise", "monotone_constraints": {9: 1}}, "column index"),
    ({"grow_policy": "Depthwise", "monotone_constraints": [1, 0, 0, 0], "loss": "MultiClass"}, "multiclass"),
    ({"grow_policy": "Depthwise", "monotone_constraints": [1, 0, 0, 0], "loss": "Quantile:alpha=0.3"},
     "not supported with loss"),
])
def test_bad_catboost_constraints_raise(kw, match):
    X, y = wavy(n=500)
    if kw.get("loss") == "MultiClass":
        y = np.digitize(y, [-1, 1])
    with pytest.raises(ValueError, match=match):
        catboost(n_estimators=2, **kw).fit(X, y)


def test_core_refuses_constraints_it_cannot_honour():
    """The core's own checks (the Python layer raises first for its estimators)."""
    from twinlearn import _backend, _native
    from twinlearn.ensemble._params import catboost_core_params

    X, y = wavy(n=300)
    core = _backend.core()
    ctx = core.Context("cpu", 1, "identical")
    base = catboost_core_params(catboost(n_estimators=2))
    base.update(loss="RMSE", loss_param=0.0, n_classes=2, early_stopping_rounds=0, eval_metric="Loss",
                boost_from_average=True)
    for extra, match in [({"monotone_constraints": [1, 0, 0, 0]}, "grow_policy"),
                         ({"interaction_constraints": [[0, 1]]}, "grow_policy"),
                         ({"grow_policy": "Depthwise", "interaction_constraints": [[0, 4]]}, "outside"),
                         ({"grow_policy": "Depthwise", "monotone_constraints": [1, 0, 3, 0]}, "-1, 0 or 1"),
                         ({"grow_policy": "Depthwise", "monotone_constraints": [1]}, "entries")]:
        with pytest.raises(ValueError, match=match):
            core.gbdt_fit(ctx, X, y, None, _native.params(core.GbdtParams, **{**base, **extra}))


# -- scikit-learn conformance ------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{"monotonic_cst": None, "interaction_cst": "pairwise"},
                                {"interaction_cst": "no_interactions"}])
def test_check_estimator(kw):
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    check_booster_estimator(regressor(n_estimators=5, **kw))
    # The classifier's waivers are those of the common tests (twinlearn.testing.estimators).
    waived = {"check_sample_weight_equivalence_on_dense_data": "borders are quantiles of the unweighted rows",
              "check_class_weight_classifiers": "leaves of only the light classes outvote class 0 on the "
                                                "3-blob fixture (no minimum hessian per leaf by default)"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(GradientBoostingClassifier(n_estimators=5, device="cpu", **kw), expected_failed_checks=waived)


@pytest.mark.parametrize("grow_policy", ["Depthwise", "Lossguide"])
def test_splits_breaking_the_constraint_are_never_made(grow_policy):
    """y falls with x0, constrained to rise: every split on x0 has children in
    the wrong order and is rejected, so no tree splits on x0 (unconstrained,
    x0 is the first split of every tree). Clipping alone (without the
    rejection) would still split on x0, into children of equal values."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((2000, 3))
    y = -2 * X[:, 0] + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(2000)
    free = catboost(grow_policy=grow_policy, n_estimators=10).fit(X, y)
    held = catboost(grow_policy=grow_policy, n_estimators=10, monotone_constraints=[1, 0, 0]).fit(X, y)
    assert np.all(free.split_feature_[[ss.start for _, ss, _ in trees(free)]] == 0)
    assert 0 not in set(held.split_feature_.tolist())
    assert held.n_estimators_ == 10
