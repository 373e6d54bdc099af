"""Early stopping and verbose lines of the scikit-learn-shaped boosters, as
scikit-learn's HistGradientBoosting has them (twinlearn.ensemble._early_stopping)."""

import io
import contextlib

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import train_test_split

from twinlearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from twinlearn.ensemble import _early_stopping as es

from gb_helpers import assert_same_model


def _data(n=3000, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    s = X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.standard_normal(n)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y, s


def _hgb_should_stop(scores, n, tol):
    """scikit-learn's own rule, run on a bare object."""
    h = HistGradientBoostingClassifier(n_iter_no_change=n, tol=tol)
    return h._should_stop(list(scores))


# -- the rule on synthetic score lists ------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("tol", [0.0, 1e-7, 0.05])
def test_rule_is_scikit_learns_on_synthetic_scores(n, tol):
    rng = np.random.default_rng(n)
    for _ in range(200):
        scores = list(np.cumsum(rng.choice([-0.1, 0.0, 1e-8, 0.04, 0.1], size=rng.integers(0, 12))))
        assert es.should_stop(scores, n, tol) == _hgb_should_stop(scores, n, tol), scores


def test_rule_reference_is_n_plus_one_back():
    assert not es.should_stop([1.0, 1.0], 2, 0.0)  # fewer than n + 1 scores: never
    assert not es.should_stop([0.0, 1.0, 1.0], 2, 0.0)  # 1.0 beats the reference 0.0
    assert es.should_stop([1.0, 1.0, 1.0], 2, 0.0)  # nothing beats the first
    # Separating: a rule against the best score so far (5.0, unbeaten for 3
    # rounds) or against the score n back (1.0, then 0.5) would stop here.
    assert not es.should_stop([5.0, 0.0, 1.0, 0.5], 2, 0.0)


def test_rule_improvement_must_exceed_tol():
    assert es.should_stop([0.0, 0.1, 0.1], 2, 0.1)  # 0.1 is not > 0.0 + 0.1
    assert not es.should_stop([0.0, 0.1, 0.10001], 2, 0.1)


# -- the rule on a recorded fit ---------------------------------------------------------
@pytest.mark.parametrize("scoring", ["loss", "accuracy", "roc_auc", "neg_log_loss"])
def test_fit_stops_where_the_rule_says_on_its_scores(scoring):
    X, y, _ = _data()
    clf = GradientBoostingClassifier(n_estimators=400, learning_rate=0.5, early_stopping=True, scoring=scoring,
                                     n_iter_no_change=4, random_state=0, device="cpu").fit(X, y)
    scores = list(clf.validation_score_)
    n = clf.n_iter_
    assert len(scores) == n + 1 and len(clf.train_score_) == n + 1 and n < 400
    assert clf.n_estimators_ == n and len(clf.tree_depth_) == n
    # Stopped at the first round where the rule says so, not before.
    assert es.should_stop(scores, 4, 1e-7)
    assert not any(es.should_stop(scores[:k], 4, 1e-7) for k in range(1, n + 1))


def test_validation_score_is_the_models_score_on_the_validation_rows():
    X, y, _ = _data()
    clf = GradientBoostingClassifier(n_estimators=30, early_stopping=True, n_iter_no_change=50, random_state=3,
                                     device="cpu").fit(X, y)
    seed = es.split_seed(3)
    tr, va = train_test_split(np.arange(len(y)), test_size=0.1, stratify=y, random_state=seed)
    p = clf.predict_proba(X[va]).astype(np.float64)
    p /= p.sum(axis=1, keepdims=True)
    assert_allclose(-clf.validation_score_[-1], log_loss(y[va], p), rtol=1e-5)
    staged = list(clf.staged_predict_proba(X[tr]))
    assert_allclose(-clf.train_score_[5], log_loss(y[tr], staged[4].astype(np.float64)), rtol=1e-5)
    # Entry 0 is the model before any tree: the base score.
    p0 = 1.0 / (1.0 + np.exp(-clf.base_score_[0]))
    assert_allclose(-clf.validation_score_[0], log_loss(y[va], np.full(len(va), p0)), rtol=1e-12)
    auc = GradientBoostingClassifier(n_estimators=10, early_stopping=True, scoring="roc_auc", random_state=3,
                                     device="cpu").fit(X, y)
    assert_allclose(auc.validation_score_[-1], roc_auc_score(y[va], auc.decision_function(X[va])), rtol=1e-6)


def test_validation_split_is_scikit_learns():
    """The same rows as scikit-learn's HistGradientBoosting holds out: its
    train_test_split under its seed, stratified for classifiers."""
    X, y, s = _data(n=500, classes=3)
    for rs in (0, 7, np.random.RandomState(5)):
        state = rs if isinstance(rs, int) else np.random.RandomState(5)
        hgb = HistGradientBoostingClassifier(max_iter=2, early_stopping=True, random_state=state).fit(X, y)
        seed = es.split_seed(rs if isinstance(rs, int) else np.random.RandomState(5))
        assert seed == hgb._random_seed
        tr, va = es.split_indices(len(y), y, 0.1, seed, stratify=True)
        ref_tr, ref_va = train_test_split(np.arange(len(y)), test_size=0.1, stratify=y, random_state=seed)
        assert_array_equal(tr, ref_tr)
        assert_array_equal(va, ref_va)
        # Separating arm: unstratified, the rows differ.
        assert not np.array_equal(es.split_indices(len(y), y, 0.1, seed, stratify=False)[1], va)
    # The estimator's validation rows are these: its entry 0 is the base score's loss on them.
    reg = GradientBoostingRegressor(n_estimators=3, early_stopping=True, validation_fraction=50, random_state=7,
                                    device="cpu").fit(X, s)
    tr, va = train_test_split(np.arange(len(s)), test_size=50, random_state=es.split_seed(7))
    assert_allclose(reg.base_score_[0], np.mean(s[tr]), rtol=1e-12)
    assert_allclose(-reg.validation_score_[0], 0.5 * np.mean((s[va] - reg.base_score_[0]) ** 2), rtol=1e-12)


def test_auto_turns_on_above_10000_rows():
    X, y, s = _data(n=10_001)
    on = GradientBoostingRegressor(n_estimators=5, max_depth=3, device="cpu").fit(X, s)
    off = GradientBoostingRegressor(n_estimators=5, max_depth=3, device="cpu").fit(X[:10_000], s[:10_000])
    assert on.do_early_stopping_ and on.validation_score_.shape == (on.n_iter_ + 1,)
    assert not off.do_early_stopping_ and off.train_score_.shape == (0,) and off.validation_score_.shape == (0,)
    assert off.n_iter_ == 5


def test_off_keeps_the_bits():
    """early_stopping=False (and 'auto' at most 10 000 rows) is the fit without these options, bit for bit."""
    from twinlearn.ensemble import GradientBoosting

    X, y, s = _data(n=2000)
    for kw in ({"early_stopping": False}, {}, {"early_stopping": False, "verbose": 1}):
        with contextlib.redirect_stdout(io.StringIO()):
            a = GradientBoostingRegressor(n_estimators=20, learning_rate=0.2, device="cpu", **kw).fit(X, s)
        b = GradientBoosting(loss="RMSE", n_estimators=20, learning_rate=0.2, border_count=254, device="cpu").fit(X, s)
        assert_same_model(a, b)
    on = GradientBoostingRegressor(n_estimators=20, learning_rate=0.2, early_stopping=True, n_iter_no_change=100, device="cpu",
                                   random_state=0).fit(X, s)
    with pytest.raises(AssertionError):  # separating: trained on 90 % of the rows, the model differs
        assert_same_model(on, b)


def test_validation_fraction_none_scores_the_training_data():
    X, y, s = _data()
    reg = GradientBoostingRegressor(n_estimators=300, learning_rate=0.5, early_stopping=True,
                                    validation_fraction=None, n_iter_no_change=3, tol=1e-3, device="cpu").fit(X, s)
    assert reg.validation_score_.shape == (0,) and reg.train_score_.shape == (reg.n_iter_ + 1,)
    assert es.should_stop(list(reg.train_score_), 3, 1e-3)
    pred = reg.predict(X).astype(np.float64)
    assert_allclose(-reg.train_score_[-1], 0.5 * np.mean((s - pred) ** 2), rtol=1e-5)
    r2 = GradientBoostingRegressor(n_estimators=300, learning_rate=0.5, early_stopping=True, scoring=None,
                                   validation_fraction=None, n_iter_no_change=3, tol=1e-3, device="cpu").fit(X, s)
    # scoring=None: the estimator's score (R^2), on HGB's small training set (all rows below 10 000).
    assert_allclose(r2.train_score_[-1], r2.score(X, s), rtol=1e-5)


def test_stop_against_the_initial_score_cuts_the_model():
    """The check whose reference is entry 0 (after n_iter_no_change trees) is
    made after the fit; a stop there leaves exactly those trees."""
    X, y, s = _data(n=1000)
    # A tiny learning rate with a tolerance no round beats: stop after n trees.
    reg = GradientBoostingRegressor(n_estimators=50, learning_rate=1e-6, early_stopping=True, n_iter_no_change=4,
                                    tol=1.0, random_state=0, device="cpu").fit(X, s)
    assert reg.n_iter_ == 4 and reg.validation_score_.shape == (5,) and len(reg.tree_depth_) == 4
    full = GradientBoostingRegressor(n_estimators=4, learning_rate=1e-6, early_stopping=True, n_iter_no_change=99, random_state=0,
                                     device="cpu").fit(X, s)
    assert_same_model(reg, full)


def test_bad_parameters_name_themselves():
    X, y, s = _data(n=200)
    for kw, match in (({"early_stopping": "yes"}, "early_stopping"), ({"validation_fraction": 1.5},
                      "validation_fraction"), ({"n_iter_no_change": 0}, "n_iter_no_change"), ({"tol": -1.0}, "tol"),
                      ({"verbose": "loud"}, "verbose")):
        with pytest.raises(ValueError, match=match):
            GradientBoostingRegressor(device="cpu", **kw).fit(X, s)
    with pytest.raises(ValueError, match="scoring='f1' is not supported"):
        GradientBoostingClassifier(early_stopping=True, scoring="f1", device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="scoring='accuracy' does not apply"):
        GradientBoostingRegressor(early_stopping=True, scoring="accuracy", device="cpu").fit(X, s)
    X3, y3, _ = _data(n=300, classes=3)
    with pytest.raises(ValueError, match="3 classes"):
        GradientBoostingClassifier(early_stopping=True, scoring="roc_auc", device="cpu").fit(X3, y3)


def test_verbose_prints_hgbs_lines_to_stdout():
    X, y, _ = _data(n=1000)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        clf = GradientBoostingClassifier(n_estimators=5, early_stopping=True, n_iter_no_change=50, verbose=2,
                                         device="cpu").fit(X, y)
    lines = out.getvalue().splitlines()
    assert lines[0] == "Fitting gradient boosted rounds:"
    assert lines[1].startswith("[1/5] 1 tree, train loss: ") and ", val loss: " in lines[1]
    loss = float(lines[5].split("val loss: ")[1].split(",")[0])
    assert loss == pytest.approx(-clf.validation_score_[5], abs=1e-5)
    assert lines[6].startswith("Fit 5 trees in ") and lines[6].endswith(" total leaves)")
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):
        GradientBoostingClassifier(n_estimators=5, verbose=1, device="cpu").fit(X, y)
    assert len(quiet.getvalue().splitlines()) == 2  # verbose=1: no per-round lines


@pytest.mark.gpu
@pytest.mark.parametrize("cls, scoring, classes", [(GradientBoostingClassifier, "loss", 2),
                                                   (GradientBoostingClassifier, "accuracy", 3),
                                                   (GradientBoostingClassifier, "roc_auc", 2),
                                                   (GradientBoostingRegressor, "loss", 0),
                                                   (GradientBoostingRegressor, "r2", 0)])
@pytest.mark.parametrize("device_input", [False, True])
def test_early_stopping_cpu_and_gpu_give_identical_bits(cls, scoring, classes, device_input):
    """The split is drawn on the host and the scores are the backends' canonical
    losses and host metrics: the same stop, the same trees, the same scores."""
    X, y, s = _data(n=12_000, classes=max(classes, 2))
    target = y if classes else s
    kw = dict(n_estimators=300, learning_rate=0.5, scoring=scoring, n_iter_no_change=3, random_state=1,
              numeric_mode="identical")  # 'auto': on with 12 000 rows
    cpu = cls(device="cpu", **kw).fit(X, target)
    Xg = X
    if device_input:
        cp = pytest.importorskip("cupy")
        Xg = cp.asarray(X)
    gpu = cls(device="cuda:0", **kw).fit(Xg, target)
    assert cpu.do_early_stopping_ and gpu.do_early_stopping_ and cpu.n_iter_ < 300
    assert_same_model(cpu, gpu)
    assert cpu.n_iter_ == gpu.n_iter_
    assert cpu.train_score_.tobytes() == gpu.train_score_.tobytes()
    assert cpu.validation_score_.tobytes() == gpu.validation_score_.tobytes()
