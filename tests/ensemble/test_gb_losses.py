"""The losses beyond Logloss and RMSE (Poisson, Tweedie, Huber, CrossEntropy,
MultiClassOneVsAll, the pinball losses MAE and Quantile) and eval_metric."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import accuracy_score, mean_squared_error, roc_auc_score
from sklearn.model_selection import KFold

from twinlearn import GradientBoosting, GradientBoostingRegressor
from gb_helpers import cv_scores, split, assert_same_model, bits, higgs_like


# ---------------------------------------------------------------------------
# More losses
# ---------------------------------------------------------------------------
def _counts(n=3000, seed=14):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    mu = np.exp(0.6 * X[:, 0] - 0.4 * np.abs(X[:, 1]) + 0.3 * np.sin(2 * X[:, 2]))
    return X, rng.poisson(mu).astype(float)


def test_poisson_quality_matches_hist_gradient_boosting():
    from sklearn.metrics import make_scorer, mean_poisson_deviance

    X, y = _counts()
    cv = KFold(3, shuffle=True, random_state=0)
    scoring = make_scorer(mean_poisson_deviance, greater_is_better=False)
    ours = cv_scores(GradientBoostingRegressor(loss="poisson", n_estimators=100, device="cpu"), X, y, cv, scoring)
    ref = cv_scores(HistGradientBoostingRegressor(loss="poisson", max_iter=100, max_depth=6, early_stopping=False),
                     X, y, cv, scoring)
    assert -ours["score"] <= -ref["score"] * 1.03, (ours, ref)
    m = GradientBoosting(loss="Poisson", n_estimators=50, learning_rate=0.1, device="cpu").fit(X, y)
    pred = m.predict(X)
    assert pred.min() > 0
    np.testing.assert_allclose(pred, np.exp(m.predict_raw(X).astype(np.float64)), rtol=1e-6)
    assert bits(list(m.staged_predict(X))[-1]) == bits(pred)


def test_tweedie_beats_a_constant():
    from sklearn.metrics import mean_tweedie_deviance

    rng = np.random.default_rng(15)
    X = rng.standard_normal((3000, 5))
    mu = np.exp(1.2 * X[:, 0] - 0.6 * np.abs(X[:, 1]))
    y = rng.poisson(mu) * rng.gamma(4.0, 0.25, len(mu))  # compound: zeros and positive amounts
    Xtr, Xte, ytr, yte = split(X, y)
    m = GradientBoosting(loss="Tweedie:variance_power=1.5", n_estimators=100, learning_rate=0.1,
                         device="cpu").fit(Xtr, ytr)
    dev = mean_tweedie_deviance(yte, m.predict(Xte), power=1.5)
    dev0 = mean_tweedie_deviance(yte, np.full(len(yte), ytr.mean()), power=1.5)
    assert dev < 0.85 * dev0


def test_huber_resists_outliers():
    rng = np.random.default_rng(16)
    X = rng.standard_normal((3000, 5))
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + 0.1 * rng.standard_normal(3000)
    Xtr, Xte, ytr, yte = split(X, y)
    ytr = ytr + np.where(rng.random(len(ytr)) < 0.05, 50.0, 0.0)
    kw = dict(n_estimators=150, learning_rate=0.1, device="cpu")
    huber = GradientBoosting(loss="Huber:delta=0.5", **kw).fit(Xtr, ytr)
    rmse = GradientBoosting(loss="RMSE", **kw).fit(Xtr, ytr)
    err = lambda m: np.median(np.abs(m.predict(Xte) - yte))  # noqa: E731
    assert err(huber) < 0.5 * err(rmse)


def test_cross_entropy_with_probabilistic_targets():
    rng = np.random.default_rng(17)
    X = rng.standard_normal((2000, 4))
    p = 1 / (1 + np.exp(-(1.5 * X[:, 0] - X[:, 1])))
    m = GradientBoosting(loss="CrossEntropy", n_estimators=100, learning_rate=0.1, device="cpu").fit(X, p)
    assert list(m.classes_) == [0, 1]
    proba = m.predict_proba(X)[:, 1]
    assert np.corrcoef(proba, p)[0, 1] > 0.97
    # with class labels it is Logloss with another name
    y = (p > 0.5).astype(int)
    a = GradientBoosting(loss="CrossEntropy", n_estimators=5, device="cpu").fit(X, y)
    b = GradientBoosting(loss="Logloss", n_estimators=5, device="cpu").fit(X, y)
    assert_same_model(a, b)


def test_one_vs_all_classifies_like_softmax():
    X, y = make_classification(n_samples=2000, n_features=10, n_informative=6, n_classes=3, random_state=4)
    Xtr, Xte, ytr, yte = split(X, y)
    ova = GradientBoosting(loss="MultiClassOneVsAll", n_estimators=100, learning_rate=0.1, device="cpu").fit(Xtr, ytr)
    soft = GradientBoosting(loss="MultiClass", n_estimators=100, learning_rate=0.1, device="cpu").fit(Xtr, ytr)
    proba = ova.predict_proba(Xte)
    assert proba.shape == (len(yte), 3) and np.allclose(proba.sum(1), 1, atol=1e-6)
    assert ova.score(Xte, yte) >= soft.score(Xte, yte) - 0.03


@pytest.mark.parametrize(
    "loss,match",
    [
        ("Tweedie", "variance_power"),
        ("Tweedie:variance_power=2.5", r"\(1, 2\)"),
        ("Tweedie:power=1.5", "variance_power"),
        ("Huber:delta=-1", "delta"),
        ("Logloss:alpha=1", "no parameters"),
        ("MAE:alpha=0.5", "no parameters"),
        ("Quantile:alpha=1.5", r"alpha must be in \(0, 1\)"),
        ("Quantile:alpha=0", "alpha must be in"),
        ("Quantile:alpha=1", "alpha must be in"),
        ("Quantile:alpha=-0.1", "alpha must be in"),
        ("Quantile:alpha=nan", "alpha must be in"),
        ("Quantile:delta=0.1", "alpha"),
        ("MAPE", "not available yet"),
        ("logloss", "one of"),
    ],
)
def test_bad_loss_strings(loss, match):
    X, y = higgs_like(n=100, d=3)
    with pytest.raises(ValueError, match=match):
        GradientBoosting(loss=loss, n_estimators=2, device="cpu").fit(X, y)


def test_log_link_losses_need_non_negative_targets():
    X, y = higgs_like(n=100, d=3)
    with pytest.raises(ValueError, match=">= 0"):
        GradientBoosting(loss="Poisson", n_estimators=2, device="cpu").fit(X, y - 1.0)


# ---------------------------------------------------------------------------
# Pinball losses: MAE and Quantile (gradient steps; see the docstring)
# ---------------------------------------------------------------------------
def heteroscedastic(n=6000, seed=21):
    """y = f(x) + noise whose spread grows with |x2|: the quantiles are not a shifted mean."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, 4))
    y = 2 * X[:, 0] + np.sin(2 * X[:, 1]) + (0.2 + np.abs(X[:, 2])) * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_quantile_coverage_and_quality_match_scikit_learn(alpha):
    from sklearn.metrics import mean_pinball_loss

    X, y = heteroscedastic(n=20000)
    Xtr, Xte, ytr, yte = split(X, y)
    ours = GradientBoosting(loss=f"Quantile:alpha={alpha}", n_estimators=300, learning_rate=0.2,
                            device="cpu").fit(Xtr, ytr)
    pred = ours.predict(Xte)
    assert abs(np.mean(yte <= pred) - alpha) <= 0.05
    ref = HistGradientBoostingRegressor(loss="quantile", quantile=alpha, max_iter=300, max_depth=6,
                                        learning_rate=0.1, early_stopping=False, random_state=0).fit(Xtr, ytr)
    ours_loss = mean_pinball_loss(yte, pred, alpha=alpha)
    ref_loss = mean_pinball_loss(yte, ref.predict(Xte), alpha=alpha)
    const_loss = mean_pinball_loss(yte, np.full(len(yte), np.quantile(ytr, alpha)), alpha=alpha)
    assert ours_loss <= 1.1 * ref_loss, (ours_loss, ref_loss)
    assert ours_loss < 0.6 * const_loss
    # the scikit-learn-shaped regressor is the same model under scikit-learn's names
    sk = GradientBoostingRegressor(loss="quantile", alpha=alpha, n_estimators=300, learning_rate=0.2,
                                   early_stopping=False, device="cpu").fit(Xtr, ytr)
    same = GradientBoosting(loss=f"Quantile:alpha={alpha}", n_estimators=300, learning_rate=0.2,
                            border_count=254, device="cpu").fit(Xtr, ytr)
    assert_same_model(sk, same)


def test_mae_beats_the_constant_median_and_matches_scikit_learn():
    from sklearn.metrics import mean_absolute_error

    X, y = heteroscedastic(seed=22)
    y = y + np.where(np.random.default_rng(3).random(len(y)) < 0.03, 40.0, 0.0)  # outliers MAE shrugs off
    Xtr, Xte, ytr, yte = split(X, y)
    mae = GradientBoosting(loss="MAE", n_estimators=300, learning_rate=0.1, device="cpu").fit(Xtr, ytr)
    assert mae.base_score_[0] == np.sort(ytr)[(len(ytr) - 1) // 2]  # the lower median
    err = mean_absolute_error(yte, mae.predict(Xte))
    assert err < 0.7 * mean_absolute_error(yte, np.full(len(yte), np.median(ytr)))
    ref = HistGradientBoostingRegressor(loss="absolute_error", max_iter=300, max_depth=6, learning_rate=0.1,
                                        early_stopping=False).fit(Xtr, ytr)
    assert err <= 1.1 * mean_absolute_error(yte, ref.predict(Xte))
    rmse = GradientBoosting(loss="RMSE", n_estimators=300, learning_rate=0.1, device="cpu").fit(Xtr, ytr)
    assert err < mean_absolute_error(yte, rmse.predict(Xte))
    sk = GradientBoostingRegressor(loss="absolute_error", n_estimators=300, device="cpu").fit(Xtr, ytr)
    assert_same_model(sk, GradientBoosting(loss="MAE", n_estimators=300, learning_rate=0.1, border_count=254,
                                           device="cpu").fit(Xtr, ytr))


def test_pinball_loss_decreases_and_is_reported_as_pinball():
    from sklearn.metrics import mean_absolute_error, mean_pinball_loss

    X, y = heteroscedastic(n=3000, seed=23)
    Xtr, Xte, ytr, yte = split(X, y)
    w = np.random.default_rng(4).uniform(0.5, 2.0, len(yte))
    # exact leaves converge in a few rounds of a large step: a small one shows the descent
    q = GradientBoosting(loss="Quantile:alpha=0.8", n_estimators=60, learning_rate=0.05, device="cpu").fit(
        Xtr, ytr, eval_set=(Xte, yte, w), use_best_model=False)
    hist = q.evals_result_["validation"]["Quantile:alpha=0.8"]
    assert len(hist) == 60 and hist[-1] < 0.7 * hist[0]
    assert np.mean(np.diff(hist) < 0) > 0.8  # mostly decreasing round after round
    for t in (0, 29, 59):
        pred = q.predict(Xte, n_trees=t + 1).astype(np.float64)
        assert hist[t] == pytest.approx(mean_pinball_loss(yte, pred, alpha=0.8, sample_weight=w), rel=1e-5)
    mae = GradientBoosting(loss="MAE", n_estimators=60, learning_rate=0.2, device="cpu").fit(
        Xtr, ytr, eval_set=(Xte, yte), use_best_model=False)
    q5 = GradientBoosting(loss="Quantile", n_estimators=60, learning_rate=0.2, device="cpu").fit(
        Xtr, ytr, eval_set=(Xte, yte), use_best_model=False)
    # MAE is Quantile with alpha 0.5: the same trees; its loss (mean |y - f|) is twice the pinball loss
    assert_same_model(mae, q5)
    h_mae, h_q5 = mae.evals_result_["validation"]["MAE"], q5.evals_result_["validation"]["Quantile"]
    assert h_mae == [2 * v for v in h_q5]
    assert h_mae[-1] == pytest.approx(mean_absolute_error(yte, mae.predict(Xte)), rel=1e-5)


def test_quantile_alpha_changes_the_model_and_weights_move_the_base():
    X, y = heteroscedastic(n=2000, seed=24)
    lo = GradientBoosting(loss="Quantile:alpha=0.2", n_estimators=20, device="cpu").fit(X, y)
    hi = GradientBoosting(loss="Quantile:alpha=0.8", n_estimators=20, device="cpu").fit(X, y)
    assert lo.base_score_[0] < hi.base_score_[0]
    assert np.all(lo.predict(X) <= hi.predict(X) + 1e-6) or np.mean(lo.predict(X) < hi.predict(X)) > 0.99
    w = np.where(y > np.median(y), 10.0, 1.0)
    weighted = GradientBoosting(loss="MAE", n_estimators=1, device="cpu").fit(X, y, sample_weight=w)
    plain = GradientBoosting(loss="MAE", n_estimators=1, device="cpu").fit(X, y)
    assert weighted.base_score_[0] > plain.base_score_[0]
    no_avg = GradientBoosting(loss="MAE", n_estimators=1, boost_from_average=False, device="cpu").fit(X, y)
    assert no_avg.base_score_[0] == 0.0


# ---------------------------------------------------------------------------
# eval_metric
# ---------------------------------------------------------------------------
def test_eval_metric_auc_drives_early_stopping_and_the_best_model():
    X, y = higgs_like(n=5000, d=8, seed=31)
    Xtr, Xte, ytr, yte = split(X, y)
    kw = dict(n_estimators=400, learning_rate=0.3, max_depth=6, device="cpu")
    m = GradientBoosting(eval_metric="AUC", **kw).fit(Xtr, ytr, eval_set=(Xte, yte), early_stopping_rounds=20)
    hist = m.evals_result_["validation"]
    assert list(hist) == ["AUC", "Logloss"]
    auc, logloss = hist["AUC"], hist["Logloss"]
    assert len(auc) == len(logloss) == m.best_iteration_ + 21 < 400
    assert m.best_iteration_ == int(np.argmax(auc))  # higher is better; the first best round
    assert m.n_estimators_ == m.best_iteration_ + 1  # use_best_model follows the metric
    assert auc[m.best_iteration_] == pytest.approx(roc_auc_score(yte, m.predict_raw(Xte)), abs=2e-4)
    # separating arm: the loss alone picks another round (it overfits sooner)
    plain = GradientBoosting(**kw).fit(Xtr, ytr, eval_set=(Xte, yte), early_stopping_rounds=20)
    assert plain.best_iteration_ != m.best_iteration_
    plain_loss = plain.evals_result_["validation"]["Logloss"]
    n = min(len(plain_loss), len(logloss))
    assert plain_loss[:n] == logloss[:n]  # the same fit; only the stopping rule differs


def test_eval_metric_accuracy_equals_scikit_learn_on_each_stage():
    X, y = make_classification(n_samples=3000, n_features=10, n_informative=6, n_classes=3, random_state=5)
    Xtr, Xte, ytr, yte = split(X, y)
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(yte))
    m = GradientBoosting(loss="MultiClass", eval_metric="Accuracy", n_estimators=30, learning_rate=0.3,
                         device="cpu").fit(Xtr, ytr, eval_set=(Xte, yte, w), use_best_model=False)
    acc = m.evals_result_["validation"]["Accuracy"]
    for t, pred in enumerate(m.staged_predict(Xte)):
        assert acc[t] == pytest.approx(accuracy_score(yte, pred, sample_weight=w), abs=1e-12)
    assert m.best_iteration_ == int(np.argmax(acc))
    b = GradientBoosting(eval_metric="Accuracy", n_estimators=10, learning_rate=0.3, device="cpu")
    Xb, yb = higgs_like(n=2000, d=5, seed=32)
    labels = np.array(["no", "yes"])[yb]
    b.fit(Xb[:1500], labels[:1500], eval_set=(Xb[1500:], labels[1500:]), use_best_model=False)
    stages = list(b.staged_predict(Xb[1500:]))
    assert b.evals_result_["validation"]["Accuracy"] == [accuracy_score(labels[1500:], p) for p in stages]


@pytest.mark.parametrize("loss,metric", [("RMSE", "MAE"), ("Quantile:alpha=0.7", "RMSE"), ("Poisson", "MAE")])
def test_eval_metric_for_regression_is_computed_on_the_predictions(loss, metric):
    from sklearn.metrics import mean_absolute_error

    X, y = _counts(n=2000, seed=33)
    Xtr, Xte, ytr, yte = split(X, y)
    m = GradientBoosting(loss=loss, eval_metric=metric, n_estimators=25, learning_rate=0.2, device="cpu").fit(
        Xtr, ytr, eval_set=(Xte, yte), use_best_model=False)
    hist = m.evals_result_["validation"][metric]
    assert set(m.evals_result_["validation"]) == {metric, loss}
    for t, pred in enumerate(m.staged_predict(Xte)):
        pred = pred.astype(np.float64)
        want = mean_absolute_error(yte, pred) if metric == "MAE" else np.sqrt(mean_squared_error(yte, pred))
        assert hist[t] == pytest.approx(want, rel=1e-5)
    assert m.best_iteration_ == int(np.argmin(hist))


def test_eval_metric_equal_to_the_loss_is_the_loss():
    X, y = higgs_like(n=2000, d=5, seed=34)
    Xtr, Xte, ytr, yte = split(X, y)
    base = GradientBoosting(n_estimators=10, learning_rate=0.3, device="cpu").fit(Xtr, ytr, eval_set=(Xte, yte))
    for metric in ("Logloss", None):
        m = GradientBoosting(n_estimators=10, learning_rate=0.3, eval_metric=metric, device="cpu")
        m.fit(Xtr, ytr, eval_set=(Xte, yte))
        assert m.evals_result_ == base.evals_result_
        assert_same_model(m, base)
    # without an eval_set the metric is not used: the same model
    assert_same_model(GradientBoosting(n_estimators=10, eval_metric="AUC", device="cpu").fit(Xtr, ytr),
                      GradientBoosting(n_estimators=10, device="cpu").fit(Xtr, ytr))
    from sklearn.base import clone

    assert clone(GradientBoosting(eval_metric="AUC")).get_params()["eval_metric"] == "AUC"


@pytest.mark.parametrize(
    "loss,metric,match",
    [
        ("Logloss", "F1", "eval_metric must be"),
        ("Logloss", "auc", "eval_metric must be"),
        ("RMSE", "AUC", "AUC"),
        ("MultiClass", "AUC", "AUC"),
        ("Logloss", "RMSE", "regression loss"),
        ("Quantile:alpha=0.3", "Accuracy", "classification loss"),
        ("Logloss", 3, "eval_metric"),
    ],
)
def test_bad_eval_metric(loss, metric, match):
    X, y = higgs_like(n=300, d=4, seed=35)
    if loss == "MultiClass":
        y = y + (np.nan_to_num(X[:, 0]) > 1)
    with pytest.raises(ValueError, match=match):
        GradientBoosting(loss=loss, eval_metric=metric, n_estimators=2, device="cpu").fit(X, y, eval_set=(X, y))


def test_auc_needs_both_classes_in_the_eval_set():
    X, y = higgs_like(n=300, d=4, seed=36)
    with pytest.raises(ValueError, match="both classes"):
        GradientBoosting(eval_metric="AUC", n_estimators=2, device="cpu").fit(X, y, eval_set=(X[y == 1], y[y == 1]))


# -- the default loss: CatBoostClassifier's rule -----------------------------------------------
def _classes_data(k, n=400, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    return X, np.minimum((X[:, 0] * k).astype(int), k - 1)


def test_default_loss_is_multiclass_for_more_than_two_classes():
    X, y = _classes_data(3)
    m = GradientBoosting(n_estimators=5).fit(X, y)
    explicit = GradientBoosting(n_estimators=5, loss="MultiClass").fit(X, y)
    assert m.get_params()["loss"] is None and m.n_outputs_ == 3
    assert bits(m.leaf_values_) == bits(explicit.leaf_values_)
    assert bits(m.predict_proba(X)) == bits(explicit.predict_proba(X))
    assert set(m.evals_result_) <= set(explicit.evals_result_)


def test_default_loss_is_logloss_for_two_classes():
    X, y = _classes_data(2)
    m = GradientBoosting(n_estimators=5).fit(X, y)
    explicit = GradientBoosting(n_estimators=5, loss="Logloss").fit(X, y)
    assert m.n_outputs_ == 1
    assert bits(m.leaf_values_) == bits(explicit.leaf_values_)
    assert bits(m.predict_proba(X)) == bits(explicit.predict_proba(X))


def test_explicit_logloss_still_refuses_three_classes():
    X, y = _classes_data(3)
    with pytest.raises(ValueError, match="use loss='MultiClass'"):
        GradientBoosting(n_estimators=2, loss="Logloss").fit(X, y)


def test_default_loss_model_file_round_trip(tmp_path):
    X, y = _classes_data(4)
    m = GradientBoosting(n_estimators=4).fit(X, y)
    m.save_model(tmp_path / "m.json")
    back = GradientBoosting().load_model(tmp_path / "m.json")
    assert bits(back.predict_proba(X)) == bits(m.predict_proba(X))


def test_default_loss_refuses_monotone_constraints_with_many_classes():
    X, y = _classes_data(3)
    with pytest.raises(ValueError, match="multiclass"):
        GradientBoosting(n_estimators=2, grow_policy="Depthwise", monotone_constraints=[1, 0, 0, 0]).fit(X, y)
