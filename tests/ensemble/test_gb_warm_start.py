"""Continuing a fit: GradientBoosting's fit(init_model=...) and the
scikit-learn-shaped estimators' warm_start. n1 trees continued by n2 are the
model of one fit of n1 + n2 trees, bit for bit (CPU, any thread count, and
GPU)."""

import numpy as np
import pytest

import twinlearn
from twinlearn import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from gb_helpers import assert_same_model, bits, higgs_like

GROW = ["SymmetricTree", "Depthwise", "Lossguide"]


def _data(loss, n=3000, seed=0):
    X, y = higgs_like(n=n, d=8, seed=seed)
    if loss == "RMSE":
        y = np.nan_to_num(X[:, 0]) * 2.0 + np.nan_to_num(X[:, 1]) ** 2 + 0.1 * y
    elif loss == "MultiClass":
        y = y + (np.nan_to_num(X[:, 2]) > 0.5)
    return X, y


def _gb(loss, grow, n, **kw):
    p = dict(loss=loss, n_estimators=n, learning_rate=0.3, max_depth=4, grow_policy=grow,
             bootstrap_type="Bernoulli", subsample=0.7, rsm=0.5, random_state=11, device="cpu")
    if grow == "Lossguide":
        p["max_leaves"] = 9
    if grow != "SymmetricTree" and loss == "Logloss":
        p["nan_mode"] = "Learned"
    p.update(kw)
    return GradientBoosting(**p)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("loss", ["Logloss", "RMSE", "MultiClass"])
@pytest.mark.parametrize("grow", GROW)
def test_init_model_continuation_equals_one_fit(grow, loss, threads):
    X, y = _data(loss)
    w = 0.5 + (np.arange(len(y)) % 3) * 0.25
    with twinlearn.config_context(n_threads=threads):
        full = _gb(loss, grow, 9).fit(X, y, sample_weight=w)
        first = _gb(loss, grow, 4).fit(X, y, sample_weight=w)
        cont = _gb(loss, grow, 5).fit(X, y, sample_weight=w, init_model=first)
    assert cont.n_estimators_ == 9 and first.n_estimators_ == 4
    assert_same_model(full, cont)
    assert bits(cont.predict_raw(X)) == bits(full.predict_raw(X))
    # Prediction of the first trees is init_model's.
    assert bits(cont.predict_raw(X, n_trees=4)) == bits(first.predict_raw(X))


def test_init_model_from_a_saved_file_and_itself(tmp_path):
    X, y = _data("Logloss")
    full = _gb("Logloss", "Depthwise", 7).fit(X, y)
    first = _gb("Logloss", "Depthwise", 3).fit(X, y)
    kept = {k: getattr(first, k).copy() for k in ("tree_depth_", "leaf_values_")}
    path = tmp_path / "first.json"
    first.save_model(path)
    from_file = _gb("Logloss", "Depthwise", 4).fit(X, y, init_model=str(path))
    assert_same_model(full, from_file)
    # The model continues itself: init_model is a snapshot taken before the fit.
    first.set_params(n_estimators=4).fit(X, y, init_model=first)
    assert_same_model(full, first)
    other = _gb("Logloss", "Depthwise", 3).fit(X, y)
    _gb("Logloss", "Depthwise", 4).fit(X, y, init_model=other)
    for k, v in kept.items():  # init_model itself is not changed
        assert bits(getattr(other, k)) == bits(v)


def test_init_model_eval_set_history_and_best_iteration():
    X, y = _data("Logloss")
    Xe, ye = _data("Logloss", n=800, seed=1)
    full = _gb("Logloss", "SymmetricTree", 12).fit(X, y, eval_set=(Xe, ye), use_best_model=False)
    first = _gb("Logloss", "SymmetricTree", 5).fit(X, y, eval_set=(Xe, ye), use_best_model=False)
    cont = _gb("Logloss", "SymmetricTree", 7).fit(X, y, eval_set=(Xe, ye), use_best_model=False, init_model=first)
    assert_same_model(full, cont)
    hist = cont.evals_result_["validation"]["Logloss"]
    assert len(hist) == 7
    assert bits(np.array(hist)) == bits(np.array(full.evals_result_["validation"]["Logloss"][5:]))
    # The best iteration is searched among the new rounds, counted in the model's trees.
    assert cont.best_iteration_ == 5 + int(np.argmin(hist))
    best = _gb("Logloss", "SymmetricTree", 7).fit(X, y, eval_set=(Xe, ye), init_model=first)
    assert best.n_estimators_ == best.best_iteration_ + 1 >= 6
    # Early stopping counts from the continued trees.
    es = _gb("Logloss", "SymmetricTree", 50, learning_rate=0.9).fit(
        X, y, eval_set=(Xe, ye), early_stopping_rounds=2, use_best_model=False, init_model=first)
    hist = es.evals_result_["validation"]["Logloss"]
    assert es.n_estimators_ == 5 + len(hist) < 55
    assert len(hist) - 1 - int(np.argmin(hist)) == 2


def test_init_model_rejects_what_it_cannot_continue():
    X, y = _data("Logloss")
    first = _gb("Logloss", "SymmetricTree", 3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        _gb("Logloss", "SymmetricTree", 2).fit(X[:, :6], y, init_model=first)
    with pytest.raises(ValueError, match="classes"):
        _gb("Logloss", "SymmetricTree", 2).fit(X, y + 1, init_model=first)
    with pytest.raises(ValueError, match="loss"):
        _gb("CrossEntropy", "SymmetricTree", 2).fit(X, y, init_model=first)
    with pytest.raises(ValueError, match="grow_policy"):
        _gb("Logloss", "Depthwise", 2).fit(X, y, init_model=first)
    with pytest.raises(ValueError, match="nan_mode"):
        _gb("Logloss", "SymmetricTree", 2, nan_mode="Max").fit(X, y, init_model=first)
    with pytest.raises(ValueError, match="not fitted"):
        _gb("Logloss", "SymmetricTree", 2).fit(X, y, init_model=_gb("Logloss", "SymmetricTree", 2))
    with pytest.raises(TypeError, match="init_model"):
        _gb("Logloss", "SymmetricTree", 2).fit(X, y, init_model=GradientBoostingClassifier())
    Xc = X.copy()
    Xc[:, 7] = np.floor(np.nan_to_num(Xc[:, 7]) * 3)
    cat = _gb("Logloss", "SymmetricTree", 2, cat_features=[7]).fit(Xc, y)
    with pytest.raises(ValueError, match="categorical"):
        _gb("Logloss", "SymmetricTree", 2, cat_features=[7]).fit(Xc, y, init_model=cat)
    with pytest.raises(ValueError, match="categorical"):
        _gb("Logloss", "SymmetricTree", 2).fit(Xc, y, init_model=cat)


def _sk(cls, n, per_node, **kw):
    p = dict(n_estimators=n, subsample=0.7, random_state=5, device="cpu", max_depth=4)
    if per_node:
        p["max_leaf_nodes"] = 10
    p.update(kw)
    return cls(**p)


@pytest.mark.parametrize("per_node", [False, True])
@pytest.mark.parametrize("cls", [GradientBoostingClassifier, GradientBoostingRegressor])
def test_warm_start_adds_trees_as_one_fit(cls, per_node):
    X, y = _data("Logloss" if cls is GradientBoostingClassifier else "RMSE")
    if cls is GradientBoostingClassifier:
        y = y + (np.nan_to_num(X[:, 2]) > 0.5)  # three classes
    full = _sk(cls, 10, per_node).fit(X, y)
    est = _sk(cls, 4, per_node, warm_start=True).fit(X, y)
    est.set_params(n_estimators=7).fit(X, y)
    est.set_params(n_estimators=10).fit(X, y)
    assert est.n_estimators_ == 10
    assert_same_model(full, est)
    assert bits(est.predict(X)) == bits(full.predict(X))
    # warm_start=False refits from scratch.
    est.set_params(warm_start=False, n_estimators=4).fit(X, y)
    assert_same_model(_sk(cls, 4, per_node).fit(X, y), est)


def test_warm_start_equal_n_estimators_does_nothing_and_fewer_raises():
    X, y = _data("Logloss")
    est = _sk(GradientBoostingClassifier, 4, False, warm_start=True).fit(X, y)
    leaves = est.leaf_values_
    est.fit(X[::-1], y[::-1])  # nothing to add: not refitted
    assert est.leaf_values_ is leaves
    with pytest.raises(ValueError, match="n_estimators=3 must be larger or equal to n_estimators_=4"):
        est.set_params(n_estimators=3).fit(X, y)


def test_warm_start_rejects_other_features_and_classes():
    X, y = _data("Logloss")
    est = _sk(GradientBoostingClassifier, 3, False, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.set_params(n_estimators=5).fit(X[:, :7], y)
    with pytest.raises(ValueError, match="classes"):
        _sk(GradientBoostingClassifier, 3, False, warm_start=True).fit(X, y).set_params(n_estimators=5).fit(
            X, np.where(y == 1, 2, y))
    Xc = X.copy()
    Xc[:, 7] = np.floor(np.nan_to_num(Xc[:, 7]) * 3)
    cat = _sk(GradientBoostingClassifier, 3, False, warm_start=True, categorical_features=[7]).fit(Xc, y)
    with pytest.raises(ValueError, match="warm_start cannot continue a fit with categorical features"):
        cat.set_params(n_estimators=5).fit(Xc, y)
    with pytest.raises(ValueError, match="warm_start"):
        GradientBoostingRegressor(warm_start="yes").fit(X, y)


@pytest.mark.gpu
@pytest.mark.parametrize("loss", ["Logloss", "RMSE", "MultiClass"])
@pytest.mark.parametrize("grow", GROW)
def test_init_model_continuation_gpu_equals_one_fit_and_the_cpu(grow, loss):
    X, y = _data(loss)
    Xe, ye = _data(loss, n=700, seed=2)
    full_c = _gb(loss, grow, 9).fit(X, y, eval_set=(Xe, ye), use_best_model=False)
    first_c = _gb(loss, grow, 4).fit(X, y)
    cont_c = _gb(loss, grow, 5).fit(X, y, eval_set=(Xe, ye), use_best_model=False, init_model=first_c)
    gpu = dict(device="cuda:0")
    full_g = _gb(loss, grow, 9, **gpu).fit(X, y, eval_set=(Xe, ye), use_best_model=False)
    first_g = _gb(loss, grow, 4, **gpu).fit(X, y)
    cont_g = _gb(loss, grow, 5, **gpu).fit(X, y, eval_set=(Xe, ye), use_best_model=False, init_model=first_g)
    assert cont_g.device_used() == "cuda:0"
    assert_same_model(full_g, cont_g)
    assert_same_model(cont_c, cont_g)
    assert_same_model(full_c, cont_g)
    assert cont_c.evals_result_ == cont_g.evals_result_
    # A GPU fit continues a CPU model as the CPU does.
    mixed = _gb(loss, grow, 5, **gpu).fit(X, y, init_model=first_c)
    assert_same_model(cont_c, mixed)
    assert bits(mixed.predict_raw(Xe)) == bits(cont_c.predict_raw(Xe))


@pytest.mark.gpu
def test_warm_start_gpu_equals_one_fit():
    X, y = _data("RMSE")
    full = _sk(GradientBoostingRegressor, 8, True, device="cuda:0").fit(X, y)
    est = _sk(GradientBoostingRegressor, 3, True, device="cuda:0", warm_start=True).fit(X, y)
    est.set_params(n_estimators=8).fit(X, y)
    assert_same_model(full, est)
    assert_same_model(_sk(GradientBoostingRegressor, 8, True).fit(X, y), est)


def test_warm_start_with_early_stopping_on_is_refused_and_off_continues():
    X, y = _data("Logloss")
    est = _sk(GradientBoostingClassifier, 3, False, warm_start=True, early_stopping=True).fit(X, y)
    with pytest.raises(ValueError, match="warm_start=True with early stopping is not supported"):
        est.set_params(n_estimators=5).fit(X, y)
    est.set_params(early_stopping=False).fit(X, y)  # the first fit's trees, two more
    assert est.n_estimators_ == 5
