"""GradientBoosting and its scikit-learn-shaped pair: scikit-learn conformance,
quality against HistGradientBoosting, the numeric contract, behaviour and bad
input. Losses, model files, sampling, progress reporting and split
constraints have files of their own (test_gb_*.py)."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, make_classification, make_friedman1
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import accuracy_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from gb_helpers import cv_scores, split, assert_same_model, bits, higgs_like


# Borders are quantiles of the (unweighted) rows, as in HistGradientBoosting:
# repeating a row changes the quantiles, so weights are not equivalent to
# repetition (scikit-learn's own HistGradientBoosting* waive this check too).
WAIVED = {
    "check_sample_weight_equivalence_on_dense_data": "borders are quantiles of the unweighted rows, "
    "so repeating rows is not the same as weighting them",
}


# ---------------------------------------------------------------------------
# scikit-learn conformance
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "est",
    [
        GradientBoostingClassifier(n_estimators=10, device="cpu"),
        GradientBoostingRegressor(n_estimators=10, device="cpu"),
        GradientBoosting(loss="Logloss", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="MultiClass", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="RMSE", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoostingRegressor(loss="poisson", n_estimators=10, device="cpu"),
        GradientBoosting(loss="CrossEntropy", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="MultiClassOneVsAll", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="Poisson", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="Tweedie:variance_power=1.5", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="Huber:delta=1.0", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="MAE", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoosting(loss="Quantile:alpha=0.7", n_estimators=10, learning_rate=0.3, device="cpu"),
        GradientBoostingRegressor(loss="absolute_error", n_estimators=20, learning_rate=0.5, device="cpu"),
        GradientBoostingRegressor(loss="quantile", alpha=0.3, n_estimators=20, learning_rate=0.5, device="cpu"),
        GradientBoosting(loss="Logloss", n_estimators=10, learning_rate=0.3, eval_metric="AUC",
                         min_child_weight=1.0, min_split_gain=0.0, device="cpu"),
    ],
    ids=["classifier", "regressor", "Logloss", "default-loss", "MultiClass", "RMSE", "regressor-poisson",
         "CrossEntropy", "MultiClassOneVsAll", "Poisson", "Tweedie", "Huber", "MAE", "Quantile",
         "regressor-absolute_error", "regressor-quantile", "Logloss-new-parameters"],
)
def test_check_estimator(est):
    waived = dict(WAIVED)
    if isinstance(est, GradientBoostingRegressor) and est.loss == "quantile":
        # The check sets any `alpha` to 0.01 (it takes it for a linear model's regularization);
        # here alpha is the quantile predicted, and a 1% quantile scores R^2 < 0.5 by design.
        waived["check_regressors_train"] = "sets alpha=0.01: the 1% quantile has a poor R^2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(est, expected_failed_checks=waived)


# ---------------------------------------------------------------------------
# Quality against scikit-learn's HistGradientBoosting (same number of trees,
# same depth, same learning rate), averaged over cross-validation folds so
# that one lucky split does not decide.
# ---------------------------------------------------------------------------
def _hgb_clf(n):
    return HistGradientBoostingClassifier(max_iter=n, max_depth=6, learning_rate=0.1, early_stopping=False,
                                          random_state=0)


@pytest.mark.parametrize("dataset", ["higgs_like", "breast_cancer", "make_classification"])
def test_classification_quality_matches_hist_gradient_boosting(dataset):
    if dataset == "higgs_like":
        X, y = higgs_like(n=4000)
    elif dataset == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = make_classification(n_samples=3000, n_features=20, n_informative=8, random_state=1)
    cv = StratifiedKFold(5 if dataset == "breast_cancer" else 3, shuffle=True, random_state=0)
    ours = cv_scores(GradientBoostingClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, device="cpu"),
                      X, y, cv, ("accuracy", "roc_auc"))
    ref = cv_scores(_hgb_clf(100), X, y, cv, ("accuracy", "roc_auc"))
    assert ours["roc_auc"] >= ref["roc_auc"] - 0.005, (ours, ref)
    assert ours["accuracy"] >= ref["accuracy"] - 0.01, (ours, ref)


def test_multiclass_quality_matches_hist_gradient_boosting():
    X, y = make_classification(n_samples=3000, n_features=12, n_informative=6, n_classes=4, random_state=2)
    Xtr, Xte, ytr, yte = split(X, y)
    ours = GradientBoostingClassifier(n_estimators=100, device="cpu").fit(Xtr, ytr)
    ref = _hgb_clf(100).fit(Xtr, ytr)
    assert ours.n_outputs_ == 4 and ours.predict_proba(Xte).shape == (len(yte), 4)
    assert accuracy_score(yte, ours.predict(Xte)) >= accuracy_score(yte, ref.predict(Xte)) - 0.02


@pytest.mark.parametrize("dataset", ["diabetes", "friedman"])
def test_regression_quality_matches_hist_gradient_boosting(dataset):
    if dataset == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        n, lr, folds = 100, 0.05, 5
    else:
        X, y = make_friedman1(n_samples=2000, noise=0.5, random_state=3)
        n, lr, folds = 200, 0.1, 3
    cv = KFold(folds, shuffle=True, random_state=0)
    scoring = "neg_root_mean_squared_error"
    ours = cv_scores(GradientBoostingRegressor(n_estimators=n, learning_rate=lr, device="cpu"), X, y, cv, scoring)
    ref = cv_scores(HistGradientBoostingRegressor(max_iter=n, max_depth=6, learning_rate=lr, early_stopping=False),
                     X, y, cv, scoring)
    assert -ours["score"] <= -ref["score"] * 1.02, (ours, ref)


# ---------------------------------------------------------------------------
# The numeric contract
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression", "CrossEntropy", "MultiClassOneVsAll",
                                  "Poisson", "Tweedie", "Huber", "MAE", "Quantile", "regressor-quantile",
                                  "AUC-metric", "Accuracy-metric"])
def test_cpu_and_device_give_identical_bits(device, kind):
    X, y = higgs_like(n=9000, d=8, seed=4)
    x0 = np.nan_to_num(X[:, 0])
    if kind in ("multiclass", "MultiClassOneVsAll", "Accuracy-metric"):
        y = (x0 > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5) + y
        est = GradientBoosting(loss="MultiClassOneVsAll" if kind == "MultiClassOneVsAll" else "MultiClass",
                               n_estimators=15, learning_rate=0.3,
                               eval_metric="Accuracy" if kind == "Accuracy-metric" else None)
    elif kind in ("MAE", "Quantile", "regressor-quantile"):
        noise = np.random.default_rng(2).standard_normal(len(y))
        y = x0 * 3.0 + y * 2.0 + (0.5 + np.abs(x0)) * noise
        if kind == "regressor-quantile":
            est = GradientBoostingRegressor(loss="quantile", alpha=0.3, n_estimators=15, learning_rate=0.3)
        else:
            est = GradientBoosting(loss="MAE" if kind == "MAE" else "Quantile:alpha=0.8", n_estimators=15,
                                   learning_rate=0.3, eval_metric="RMSE" if kind == "MAE" else None)
    elif kind == "AUC-metric":
        est = GradientBoosting(n_estimators=15, learning_rate=0.3, eval_metric="AUC")
    elif kind in ("regression", "Huber"):
        y = x0 * 3.0 + y * 10.0 + 1e3
        est = GradientBoosting(loss="RMSE" if kind == "regression" else "Huber:delta=2.5", n_estimators=15,
                               learning_rate=0.3)
    elif kind in ("Poisson", "Tweedie"):
        y = np.random.default_rng(1).poisson(np.exp(0.5 * np.clip(x0, -3, 3)) + y).astype(float)
        est = GradientBoosting(loss="Poisson" if kind == "Poisson" else "Tweedie:variance_power=1.3",
                               n_estimators=15, learning_rate=0.3)
    elif kind == "CrossEntropy":
        y = 1 / (1 + np.exp(-x0 - y))
        est = GradientBoosting(loss="CrossEntropy", n_estimators=15, learning_rate=0.3)
    else:
        est = GradientBoosting(n_estimators=15, learning_rate=0.3, nan_mode="Max")
    Xe, ye = X[:3000], y[:3000]
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    if isinstance(est, GradientBoostingRegressor):  # no eval_set in the scikit-learn shape
        ref = est.set_params(device="cpu", numeric_mode="identical").fit(X, y, sample_weight=w)
        other = pickle.loads(pickle.dumps(est)).set_params(device=device).fit(X, y, sample_weight=w)
        assert other.device_used() == device
        assert_same_model(ref, other)
        assert bits(other.predict(Xe)) == bits(ref.predict(Xe))
        return
    ref = est.set_params(device="cpu", numeric_mode="identical").fit(X, y, sample_weight=w, eval_set=(Xe, ye),
                                                                      use_best_model=False)
    ref_raw = ref.predict_raw(Xe)
    other = pickle.loads(pickle.dumps(est)).set_params(device=device).fit(X, y, sample_weight=w, eval_set=(Xe, ye),
                                                                          use_best_model=False)
    if est.eval_metric is not None:
        assert len(ref.evals_result_["validation"]) == 2
        assert ref.best_iteration_ == other.best_iteration_
    assert other.device_used() == device
    assert other.numeric_mode_used() == "identical"
    assert_same_model(ref, other)
    assert ref.evals_result_ == other.evals_result_
    assert bits(other.predict_raw(Xe)) == bits(ref_raw)
    assert bits(other.predict(Xe)) == bits(ref.predict(Xe))
    if hasattr(ref, "predict_proba"):
        assert bits(other.predict_proba(Xe)) == bits(ref.predict_proba(Xe))
    # a model fitted on the device predicts the same bits on the CPU
    on_cpu = pickle.loads(pickle.dumps(other)).set_params(device="cpu")
    assert bits(on_cpu.predict_raw(Xe)) == bits(ref_raw)


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_bits_do_not_depend_on_thread_count(threads):
    X, y = higgs_like(n=40000, d=6, seed=5)
    with twinlearn.config_context(n_threads=4):
        ref = GradientBoostingClassifier(n_estimators=8, early_stopping=False, device="cpu").fit(X, y)
    with twinlearn.config_context(n_threads=threads):
        other = GradientBoostingClassifier(n_estimators=8, early_stopping=False, device="cpu").fit(X, y)
        assert bits(other.predict_proba(X)) == bits(ref.predict_proba(X))
    assert_same_model(ref, other)


def test_every_numeric_mode_delivers_identical():
    X, y = higgs_like(n=500, d=4)
    for mode in ("fast", "deterministic", "identical"):
        m = GradientBoosting(n_estimators=3, numeric_mode=mode, device="cpu").fit(X, y)
        assert m.numeric_mode_used() == "identical"


def test_float32_and_float64_inputs():
    X, y = higgs_like(n=2000, d=5)
    a = GradientBoostingClassifier(n_estimators=10, device="cpu").fit(X, y)
    b = GradientBoostingClassifier(n_estimators=10, device="cpu").fit(X.astype(np.float64), y)
    # float32 values are exact in float64: the same borders and model
    assert_same_model(a, b)
    assert bits(a.predict_proba(X)) == bits(b.predict_proba(X.astype(np.float64)))


# ---------------------------------------------------------------------------
# Behaviour
# ---------------------------------------------------------------------------
def test_staged_predictions_end_at_predict():
    X, y = load_iris(return_X_y=True)
    clf = GradientBoostingClassifier(n_estimators=12, device="cpu").fit(X, y)
    stages = list(clf.staged_predict_proba(X))
    assert len(stages) == 12
    assert bits(stages[-1]) == bits(clf.predict_proba(X))
    assert np.array_equal(list(clf.staged_predict(X))[-1], clf.predict(X))
    assert bits(list(clf.staged_decision_function(X))[-1]) == bits(clf.decision_function(X))
    reg = GradientBoosting(loss="RMSE", n_estimators=7, device="cpu").fit(X, y.astype(float))
    assert bits(list(reg.staged_predict(X))[-1]) == bits(reg.predict(X))
    assert bits(reg.predict(X, n_trees=3)) == bits(list(reg.staged_predict(X))[2])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sklearn_shaped_stages_follow_the_python_rule(n_classes):
    # The scikit-learn-shaped staged outputs are shaped in the core binding
    # (gbdt_link's sklearn_shape); each stage must equal the float64 rule of
    # _proba_from_core / _raw_to_decision applied to the plain stage.
    X, y = make_classification(n_samples=600, n_features=6, n_informative=4, n_classes=n_classes,
                               random_state=3)
    clf = GradientBoostingClassifier(n_estimators=9, device="cpu").fit(X, y)
    plain_p = list(clf._staged_core(X, "probability"))
    plain_r = list(clf._staged_core(X, "raw"))
    proba, dec = list(clf.staged_predict_proba(X)), list(clf.staged_decision_function(X))
    assert len(proba) == len(dec) == 9
    for p, r, sp_, sd in zip(plain_p, plain_r, proba, dec):
        assert sp_.dtype == np.float64 and sd.dtype == np.float64
        assert bits(sp_) == bits(clf._proba_from_core(p))
        assert bits(sd) == bits(clf._raw_to_decision(r))
    assert bits(proba[-1]) == bits(clf.predict_proba(X))
    reg = GradientBoostingRegressor(n_estimators=5, device="cpu").fit(X, y.astype(float))
    vals = list(reg.staged_predict(X))
    assert vals[-1].dtype == np.float64 and vals[-1].shape == (600,) and bits(vals[-1]) == bits(reg.predict(X))


def test_early_stopping_and_best_model():
    X, y = higgs_like(n=4000, d=8, seed=7)
    Xtr, Xte, ytr, yte = split(X, y)
    m = GradientBoosting(n_estimators=2000, learning_rate=0.5, device="cpu").fit(
        Xtr, ytr, eval_set=(Xte, yte), early_stopping_rounds=10)
    hist = m.evals_result_["validation"]["Logloss"]
    assert len(hist) < 2000 and len(hist) == m.best_iteration_ + 11
    assert m.n_estimators_ == m.best_iteration_ + 1
    assert np.argmin(hist) == m.best_iteration_
    full = GradientBoosting(n_estimators=len(hist), learning_rate=0.5, device="cpu").fit(
        Xtr, ytr, eval_set=[(Xte, yte)], use_best_model=False)
    assert full.n_estimators_ == len(hist)
    # the kept trees are the first trees of the full run
    assert bits(full.predict_raw(Xte, n_trees=m.n_estimators_)) == bits(m.predict_raw(Xte))
    logloss = -np.mean(yte * np.log(m.predict_proba(Xte)[:, 1]) + (1 - yte) * np.log(m.predict_proba(Xte)[:, 0]))
    assert abs(logloss - hist[m.best_iteration_]) < 1e-5


@pytest.mark.parametrize("nan_mode", ["Min", "Max"])
def test_missing_values_carry_signal(nan_mode):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((3000, 3))
    y = (X[:, 0] > 0).astype(int)
    missing = rng.random(3000) < 0.3
    y[missing] = 1 - y[missing] * 0  # every row with a missing X[:, 1] is class 1
    X[missing, 1] = np.nan
    m = GradientBoosting(n_estimators=60, learning_rate=0.3, nan_mode=nan_mode, device="cpu").fit(X, y)
    f1 = m.border_offsets_[1], m.border_offsets_[2]
    nan_border = m.borders_[f1[0]] if nan_mode == "Min" else m.borders_[f1[1] - 1]
    assert np.isinf(nan_border)
    assert m.score(X, y) > 0.97
    Xq = np.array([[-1.0, np.nan, 0.0], [-1.0, 0.5, 0.0]])
    p = m.predict_proba(Xq)[:, 1]
    assert p[0] > 0.8 and p[1] < 0.2
    with pytest.raises(ValueError, match="NaN"):
        GradientBoosting(n_estimators=2, nan_mode="Forbidden", device="cpu").fit(X, y)


def test_sample_weight():
    X, y = higgs_like(n=3000, d=6, seed=9)
    a = GradientBoostingClassifier(n_estimators=10, device="cpu").fit(X, y)
    b = GradientBoostingClassifier(n_estimators=10, device="cpu").fit(X, y, sample_weight=np.ones(len(y)))
    assert_same_model(a, b)
    w = np.where(y == 1, 5.0, 1.0)
    c = GradientBoostingClassifier(n_estimators=10, device="cpu").fit(X, y, sample_weight=w)
    assert c.predict(X).mean() > a.predict(X).mean()
    with pytest.raises(ValueError):
        GradientBoostingClassifier(n_estimators=2, device="cpu").fit(X, y, sample_weight=-np.ones(len(y)))


def test_string_labels_and_feature_importances():
    X, y = load_breast_cancer(return_X_y=True)
    labels = np.array(["benign", "malignant"])[y]
    clf = GradientBoostingClassifier(n_estimators=20, device="cpu").fit(X, labels)
    assert list(clf.classes_) == ["benign", "malignant"]
    assert set(clf.predict(X)) <= set(labels)
    imp = clf.feature_importances_
    assert imp.shape == (30,) and abs(imp.sum() - 1) < 1e-12 and imp.min() >= 0
    X2 = np.column_stack([np.random.default_rng(0).standard_normal(len(y)), X[:, 27]])
    clf2 = GradientBoostingClassifier(n_estimators=20, device="cpu").fit(X2, labels)
    assert clf2.feature_importances_[1] > clf2.feature_importances_[0]


def test_regression_predicts_float64_and_fits_training_data():
    X, y = load_diabetes(return_X_y=True)
    reg = GradientBoostingRegressor(n_estimators=50, device="cpu").fit(X, y)
    pred = reg.predict(X)
    assert pred.dtype == np.float64 and pred.shape == (len(y),)
    assert reg.score(X, y) > 0.6
    assert abs(reg.base_score_[0] - y.mean()) < 1e-9


def test_pickle_round_trip():
    X, y = higgs_like(n=1000, d=4)
    m = GradientBoosting(n_estimators=5, device="cpu").fit(X, y)
    m2 = pickle.loads(pickle.dumps(m))
    assert bits(m2.predict_proba(X)) == bits(m.predict_proba(X))


def test_identity_trace_records_model_stages(tmp_path, monkeypatch):
    from twinlearn import identity

    path = tmp_path / "t.trace"
    monkeypatch.setenv("TWINLEARN_IDENTITY_TRACE", str(path))
    X, y = higgs_like(n=500, d=4)
    GradientBoosting(n_estimators=3, device="cpu").fit(X, y).predict_proba(X)
    tags = [r["tag"] for r in identity.read(path)]
    assert "GradientBoosting.leaf_values_" in tags and "GradientBoosting.predict_probability" in tags


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------
def test_bad_labels():
    X, y = higgs_like(n=300, d=4)
    with pytest.raises(ValueError, match="NaN"):
        GradientBoostingRegressor(n_estimators=2, device="cpu").fit(X, np.where(y == 1, np.nan, 1.0))
    y3 = np.arange(300) % 3
    with pytest.raises(ValueError, match="Only binary classification.*MultiClass"):
        GradientBoosting(loss="Logloss", n_estimators=2, device="cpu").fit(X, y3)
    GradientBoosting(loss="MultiClass", n_estimators=2, device="cpu").fit(X, y3)
    with pytest.raises(ValueError, match="Unknown label type"):
        GradientBoostingClassifier(n_estimators=2, device="cpu").fit(X, np.linspace(0, 1, 300))
    with pytest.raises(ValueError, match="only one class"):
        GradientBoostingClassifier(n_estimators=2, device="cpu").fit(X, np.zeros(300))


def test_wrong_feature_count_and_bad_X(device):
    X, y = higgs_like(n=300, d=4)
    m = GradientBoosting(n_estimators=3, device=device).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features"):
        m.predict(X[:, :3])
    Xi = X.copy()
    Xi[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        GradientBoosting(n_estimators=2, device=device).fit(Xi, y)
    with pytest.raises(ValueError, match="infinity"):
        m.predict(Xi)
    with pytest.raises(ValueError, match="0 sample"):
        GradientBoosting(n_estimators=2, device=device).fit(np.empty((0, 4)), [])
    with pytest.raises(TypeError, match="[Ss]parse"):
        GradientBoosting(n_estimators=2, device=device).fit(sp.csr_matrix(np.eye(4)), [0, 1, 0, 1])


@pytest.mark.parametrize(
    "params,match",
    [
        ({"border_count": 256}, "border_count"),
        ({"border_count": 0}, "border_count"),
        ({"max_depth": 17}, "max_depth"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"l2_leaf_reg": -1.0}, "l2_leaf_reg"),
        ({"loss": "Huber"}, "loss"),
        ({"grow_policy": "Leafwise"}, "grow_policy"),
        ({"min_data_in_leaf": 5}, "min_data_in_leaf"),
        ({"nan_mode": "Middle"}, "nan_mode"),
        ({"device": "tpu"}, "device"),
        ({"numeric_mode": "exact"}, "numeric_mode"),
    ],
)
def test_bad_parameters(params, match):
    X, y = higgs_like(n=100, d=3)
    with pytest.raises(ValueError, match=match):
        GradientBoosting(**{"n_estimators": 2, "device": "cpu", **params}).fit(X, y)


def test_bad_sklearn_shaped_parameters():
    X, y = higgs_like(n=100, d=3)
    with pytest.raises(ValueError, match="max_bins"):
        GradientBoostingClassifier(max_bins=300, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        GradientBoostingRegressor(loss="huber", device="cpu").fit(X, y)
    for alpha in (0.0, 1.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="alpha"):
            GradientBoostingRegressor(loss="quantile", alpha=alpha, device="cpu").fit(X, y)


def test_fit_options_are_checked():
    X, y = higgs_like(n=100, d=3)
    m = GradientBoosting(n_estimators=2, device="cpu")
    with pytest.raises(ValueError, match="eval_set"):
        m.fit(X, y, early_stopping_rounds=5)
    with pytest.raises(ValueError, match="early_stopping_rounds"):
        m.fit(X, y, eval_set=(X, y), early_stopping_rounds=0)
    with pytest.raises(ValueError, match="not seen"):
        m.fit(X, y, eval_set=(X, y + 5))
    with pytest.raises(AttributeError, match="predict_proba"):
        GradientBoosting(loss="RMSE", n_estimators=2, device="cpu").fit(X, y).predict_proba(X)


def test_class_weight_multiplies_the_sample_weights():
    """GradientBoostingClassifier(class_weight=...) fits the model of the
    sample weights scikit-learn's compute_sample_weight gives, times any given."""
    from sklearn.utils.class_weight import compute_sample_weight

    X, y = make_classification(n_samples=3000, n_features=8, weights=[0.8, 0.2], random_state=4)
    kw = dict(n_estimators=10, max_depth=4, device="cpu")
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    for cw in ({0: 1.0, 1: 3.0}, "balanced"):
        weighted = GradientBoostingClassifier(class_weight=cw, **kw).fit(X, y, sample_weight=w)
        ref = GradientBoostingClassifier(**kw).fit(X, y, sample_weight=w * compute_sample_weight(cw, y))
        assert_same_model(weighted, ref)
    plain = GradientBoostingClassifier(**kw).fit(X, y)
    assert bits(plain.leaf_values_) != bits(GradientBoostingClassifier(class_weight="balanced", **kw).fit(
        X, y).leaf_values_)
    with pytest.raises(ValueError, match="class_weight"):
        GradientBoostingClassifier(class_weight="other", **kw).fit(X, y)


@pytest.mark.parametrize("make", [
    lambda: GradientBoosting(loss="RMSE", nan_mode="Min"),
    lambda: GradientBoosting(loss="RMSE", nan_mode="Max"),
    lambda: GradientBoosting(loss="Logloss", nan_mode="Learned", grow_policy="Depthwise"),
    lambda: GradientBoosting(loss="MultiClass", nan_mode="Learned", grow_policy="Lossguide"),
    lambda: GradientBoostingRegressor(),
    lambda: GradientBoostingClassifier(),
], ids=["Min", "Max", "Learned-Depthwise", "Learned-Lossguide", "Regressor", "Classifier"])
def test_all_nan_column_is_a_column_never_split_on(make):
    """An all-NaN column is accepted and never split on: the predictions are
    those of the model fitted without it, whatever the column holds at
    predict; all-NaN X fits the base score. (scikit-learn 1.9's
    HistGradientBoosting fails on such a column inside its binning: 'window
    shape cannot be larger than input array shape'.)"""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3))
    y = X[:, 0] + 0.3 * rng.standard_normal(300)
    est = make().set_params(n_estimators=8, random_state=0, device="cpu")
    if est._is_classifier() or getattr(est, "loss", None) in ("Logloss", "MultiClass"):
        y = np.digitize(y, [0.0] if getattr(est, "loss", None) != "MultiClass" else [-0.5, 0.5])
    Xn = X.copy()
    Xn[:, 1] = np.nan
    with_nan = est.fit(Xn, y)
    without = make().set_params(n_estimators=8, random_state=0, device="cpu").fit(X[:, [0, 2]], y)
    expected = bits(without.predict(X[:, [0, 2]]))
    assert bits(with_nan.predict(Xn)) == expected
    assert bits(with_nan.predict(X)) == expected
    assert not np.any(with_nan.split_feature_[with_nan.split_gain_ > 0] == 1)
    all_nan = make().set_params(n_estimators=3, random_state=0, device="cpu").fit(np.full_like(X, np.nan), y)
    out = np.asarray(all_nan.predict(np.full_like(X, np.nan)))
    assert len(np.unique(out)) == 1
