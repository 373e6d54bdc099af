"""Row and feature sampling: bootstrap_type (No, Bernoulli, Bayesian),
subsample, bagging_temperature, rsm."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import twinlearn
from twinlearn import GradientBoosting, GradientBoostingClassifier
from gb_helpers import split, assert_same_model, bits, higgs_like


# ---------------------------------------------------------------------------
# Sampling: bootstrap_type (No, Bernoulli, Bayesian), subsample,
# bagging_temperature, rsm
# ---------------------------------------------------------------------------
SAMPLING = [
    dict(bootstrap_type="Bernoulli"),
    dict(bootstrap_type="Bernoulli", subsample=0.5),
    dict(bootstrap_type="Bayesian"),
    dict(bootstrap_type="Bayesian", bagging_temperature=3.0),
    dict(rsm=0.5),
    dict(bootstrap_type="Bernoulli", subsample=0.7, rsm=0.3),
    dict(bootstrap_type="Bayesian", rsm=0.6),
]


def _sampled(loss="Logloss", **kw):
    kw.setdefault("random_state", 7)
    return GradientBoosting(loss=loss, n_estimators=12, learning_rate=0.3, max_depth=5, device="cpu", **kw)


@pytest.mark.parametrize("kw", SAMPLING, ids=str)
def test_sampling_bits_do_not_depend_on_run_or_thread_count(kw):
    X, y = higgs_like(n=30000, d=8, seed=11)
    with twinlearn.config_context(n_threads=1):
        ref = _sampled(**kw).fit(X, y)
        again = _sampled(**kw).fit(X, y)
    with twinlearn.config_context(n_threads=4):
        other = _sampled(**kw).fit(X, y)
        assert bits(other.predict_proba(X)) == bits(ref.predict_proba(X))
    assert_same_model(ref, again)
    assert_same_model(ref, other)


@pytest.mark.parametrize("kw", SAMPLING, ids=str)
def test_sampling_changes_the_model_and_the_seed_matters(kw):
    X, y = higgs_like(n=4000, d=8, seed=12)
    plain = _sampled().fit(X, y)
    a = _sampled(**kw).fit(X, y)
    b = _sampled(**kw).set_params(random_state=8).fit(X, y)
    assert bits(a.leaf_values_) != bits(plain.leaf_values_)
    assert bits(a.leaf_values_) != bits(b.leaf_values_)
    c = _sampled(**kw).set_params(random_state=np.random.RandomState(7)).fit(X, y)
    assert c.n_estimators_ == a.n_estimators_  # a RandomState instance is accepted too


def test_neutral_sampling_equals_no_sampling():
    X, y = higgs_like(n=4000, d=8, seed=13)
    old = GradientBoosting(n_estimators=12, learning_rate=0.3, max_depth=5, device="cpu").fit(X, y)
    for kw in (dict(bootstrap_type="No"), dict(bootstrap_type="No", random_state=3),
               dict(bootstrap_type="Bernoulli", subsample=1.0, random_state=3),
               dict(bootstrap_type="Bayesian", bagging_temperature=0.0, random_state=3),
               dict(rsm=1.0, random_state=3)):
        assert_same_model(old, _sampled(**kw).fit(X, y))
    # the scikit-learn-shaped estimators: subsample=1.0 is the old fit; below 1.0 it samples
    clf = GradientBoostingClassifier(n_estimators=8, device="cpu").fit(X, y)
    assert_same_model(clf, GradientBoostingClassifier(n_estimators=8, subsample=1.0, random_state=0,
                                                      device="cpu").fit(X, y))
    sub = GradientBoostingClassifier(n_estimators=8, subsample=0.8, random_state=0, device="cpu").fit(X, y)
    same = GradientBoosting(n_estimators=8, learning_rate=0.1, l2_leaf_reg=1.0, border_count=254,
                            bootstrap_type="Bernoulli", subsample=0.8, random_state=0, device="cpu").fit(X, y)
    assert bits(sub.leaf_values_) != bits(clf.leaf_values_)
    assert_same_model(sub, same)


def test_rsm_splits_only_on_the_drawn_subset():
    from twinlearn import _backend

    X, y = higgs_like(n=4000, d=10, seed=14)
    X[:, 9] = 2.0  # a constant feature: no borders, never drawn
    for rsm in (0.2, 0.5):
        m = _sampled(rsm=rsm).fit(X, y)
        # the seed the fit used: the same draw from the same random_state
        from twinlearn.ensemble._params import sampling_seed

        params = _backend.core().GbdtParams()
        params.rsm, params.seed = rsm, sampling_seed(7)
        offsets = [int(v) for v in m.border_offsets_]
        k = max(1, int(np.floor(rsm * 9 + 0.5)))
        depth = int(m.tree_depth_[0])
        used = set()
        subsets = set()
        for t in range(m.n_estimators_):
            sub = np.asarray(_backend.core().gbdt_feature_subset(params, offsets, t))
            assert sub.sum() == k and sub[9] == 0
            feats = m.split_feature_[t * depth:(t + 1) * depth]
            assert np.all(sub[feats] == 1), (t, feats, sub)
            used.update(int(f) for f in feats)
            subsets.add(sub.tobytes())
            if t == 0:
                first = sub
        # the subsets change from tree to tree, and so do the features split on
        assert len(subsets) > 3 and any(first[f] == 0 for f in used)
    # separating arm: the unsampled fit splits on features the subsets exclude
    full = _sampled().fit(X, y)
    outside = 0
    for t in range(full.n_estimators_):
        sub = np.asarray(_backend.core().gbdt_feature_subset(params, offsets, t))
        outside += int(np.sum(sub[full.split_feature_[t * depth:(t + 1) * depth]] == 0))
    assert outside > 0


@pytest.mark.parametrize("kw", [dict(bootstrap_type="Bernoulli", subsample=0.8), dict(rsm=0.5),
                                dict(bootstrap_type="Bayesian")], ids=str)
def test_sampling_keeps_accuracy(kw):
    X, y = make_classification(n_samples=6000, n_features=20, n_informative=10, random_state=0)
    Xtr, Xte, ytr, yte = split(X, y)
    base = GradientBoosting(n_estimators=150, learning_rate=0.1, random_state=0, device="cpu")
    ref = base.fit(Xtr, ytr).score(Xte, yte)
    acc = GradientBoosting(n_estimators=150, learning_rate=0.1, random_state=0, device="cpu",
                           **kw).fit(Xtr, ytr).score(Xte, yte)
    assert ref > 0.85
    assert acc >= ref - 0.02, (acc, ref)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(bootstrap_type="Bernoulli", subsample=0.0), "subsample"),
        (dict(bootstrap_type="Bernoulli", subsample=1.5), "subsample"),
        (dict(bootstrap_type="Bayesian", bagging_temperature=-1.0), "bagging_temperature"),
        (dict(rsm=0.0), "rsm"),
        (dict(rsm=1.5), "rsm"),
        (dict(bootstrap_type="No", subsample=0.5), "subsample applies to bootstrap_type='Bernoulli' only"),
        (dict(bootstrap_type="Bayesian", subsample=0.5), "subsample applies to bootstrap_type='Bernoulli' only"),
        (dict(bootstrap_type="Bernoulli", bagging_temperature=1.0), "bagging_temperature applies"),
        (dict(bagging_temperature=1.0), "bagging_temperature applies"),
        (dict(bootstrap_type="MVS"), "MVS"),
        (dict(bootstrap_type="Poisson"), "bootstrap_type"),
    ],
)
def test_sampling_rejects_bad_parameters(kw, match):
    X, y = higgs_like(n=200, d=4, seed=15)
    with pytest.raises(ValueError, match=match):
        GradientBoosting(n_estimators=2, device="cpu", **kw).fit(X, y)
    if "subsample" in kw and kw.get("bootstrap_type") == "Bernoulli":
        with pytest.raises(ValueError, match="subsample"):
            GradientBoostingClassifier(n_estimators=2, subsample=kw["subsample"], device="cpu").fit(X, y)


def test_sampling_parameters_round_trip_through_save_and_get_params(tmp_path):
    X, y = higgs_like(n=2000, d=6, seed=16)
    m = _sampled(bootstrap_type="Bernoulli", subsample=0.6, rsm=0.5).fit(X, y)
    p = m.get_params()
    assert (p["bootstrap_type"], p["subsample"], p["rsm"], p["bagging_temperature"]) == ("Bernoulli", 0.6, 0.5, None)
    m.save_model(tmp_path / "m.json")
    loaded = GradientBoosting().load_model(tmp_path / "m.json")
    assert loaded.get_params()["subsample"] == 0.6 and loaded.get_params()["rsm"] == 0.5
    assert bits(loaded.predict_raw(X)) == bits(m.predict_raw(X))


@pytest.mark.gpu
@pytest.mark.parametrize("kw", SAMPLING, ids=str)
@pytest.mark.parametrize("loss", ["Logloss", "MultiClass", "RMSE"])
def test_sampling_cpu_and_gpu_give_identical_bits(kw, loss):
    X, y = higgs_like(n=20000, d=8, seed=17)
    if loss == "MultiClass":
        y = y + (np.nan_to_num(X[:, 1]) > 0.5)
    elif loss == "RMSE":
        y = np.nan_to_num(X[:, 0]) * 3.0 + y * 10.0
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    Xe, ye = X[:3000], y[:3000]
    ref = _sampled(loss, **kw).set_params(numeric_mode="identical").fit(X, y, sample_weight=w, eval_set=(Xe, ye),
                                                                        use_best_model=False)
    gpu = _sampled(loss, **kw).set_params(device="cuda:0").fit(X, y, sample_weight=w, eval_set=(Xe, ye),
                                                               use_best_model=False)
    assert gpu.device_used() == "cuda:0"
    assert_same_model(ref, gpu)
    assert ref.evals_result_ == gpu.evals_result_
    assert bits(gpu.predict_raw(Xe)) == bits(ref.predict_raw(Xe))
    assert bits(gpu.predict(Xe)) == bits(ref.predict(Xe))
