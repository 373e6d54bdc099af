"""IsolationForest: quality against scikit-learn, the isolation rules of the
trees, the score formula bit for bit, offset_ and predict, identity across
thread counts and devices, bad input."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_blobs
from sklearn.ensemble import IsolationForest as SkIsolationForest
from sklearn.ensemble._iforest import _average_path_length
from sklearn.metrics import roc_auc_score

import twinlearn
from twinlearn import _core
from twinlearn.ensemble import IsolationForest

EULER_GAMMA = 0.57721566490153286060651209008240243


def blobs_with_outliers(seed=0, n=1000, n_out=100, d=4):
    rng = np.random.RandomState(seed)
    X, _ = make_blobs(n_samples=n, centers=3, n_features=d, random_state=seed)
    out = rng.uniform(X.min() - 2, X.max() + 2, size=(n_out, d))
    return np.vstack([X, out]), np.r_[np.zeros(n), np.ones(n_out)]


def cancer_minority():
    X, y = load_breast_cancer(return_X_y=True)
    return X, (y == 0).astype(int)  # malignant (212 of 569) as the outlier class


def _ctx():
    return _core.Context("cpu", 1, "identical", 0, 0)


def tl_log(x):
    out = np.empty_like(x)
    _core.math_apply(_ctx(), "log", x, out)
    return out


def tl_pow2(y):
    out = np.empty_like(y)
    _core.math_pow(_ctx(), np.full_like(y, 2.0), y, out)
    return out


def c_spelled(n, log=tl_log):
    """c(n) with numpy's IEEE operations, one per step, and the given log."""
    n = np.asarray(n, dtype=np.float64)
    out = np.zeros_like(n)
    out[n == 2] = 1.0
    big = n > 2
    nm1 = n[big] - 1.0
    out[big] = 2.0 * (log(nm1) + EULER_GAMMA) - (2.0 * nm1) / n[big]
    return out


def node_depths(tree):
    t = tree.tree_
    depth = np.zeros(t.node_count, dtype=np.int64)
    for k in range(t.node_count):
        if t.children_left[k] >= 0:
            depth[t.children_left[k]] = depth[t.children_right[k]] = depth[k] + 1
    return depth


def per_tree_paths(est, X, log=tl_log):
    """(n_trees, rows) path lengths: leaf depth + c(n_node_samples)."""
    out = []
    for tree, feats in zip(est.estimators_, est.estimators_features_):
        leaf = tree.apply(X[:, feats])
        out.append(node_depths(tree)[leaf].astype(np.float64) + c_spelled(tree.tree_.n_node_samples, log)[leaf])
    return np.array(out)


# -- quality ------------------------------------------------------------------------
@pytest.mark.parametrize("data", ["blobs", "cancer"])
def test_roc_auc_close_to_sklearn(data):
    X, y = blobs_with_outliers() if data == "blobs" else cancer_minority()
    ours = [roc_auc_score(y, -IsolationForest(random_state=s).fit(X).score_samples(X)) for s in range(5)]
    ref = [roc_auc_score(y, -SkIsolationForest(random_state=s).fit(X).score_samples(X)) for s in range(5)]
    assert abs(np.mean(ours) - np.mean(ref)) <= 0.02, (np.mean(ours), np.mean(ref))
    assert np.mean(ours) > (0.99 if data == "blobs" else 0.7)


def test_score_distribution_close_to_sklearn():
    X, _ = blobs_with_outliers(1)
    ours = IsolationForest(n_estimators=200, random_state=0).fit(X).score_samples(X)
    ref = SkIsolationForest(n_estimators=200, random_state=0).fit(X).score_samples(X)
    assert abs(ours.mean() - ref.mean()) < 0.01
    assert np.corrcoef(ours, ref)[0, 1] > 0.97


# -- the score formula, bit for bit -------------------------------------------------
def test_average_path_length_is_spelled_out_with_the_projects_log():
    n = np.arange(0, 5000)
    core = np.array([_core.iforest_average_path_length(int(k)) for k in n])
    assert core.tobytes() == c_spelled(n).tobytes()
    np.testing.assert_allclose(core, _average_path_length(n), rtol=1e-14, atol=0)
    # The fixture separates: libm's log gives other bits for some n.
    assert (c_spelled(n, np.log) != core).any()


@pytest.mark.parametrize("max_features", [1.0, 0.5])
def test_score_samples_is_the_tree_order_sum_of_path_lengths(max_features):
    X, _ = blobs_with_outliers(0, n=300, n_out=30, d=6)
    est = IsolationForest(n_estimators=25, max_features=max_features, random_state=3).fit(X)
    paths = per_tree_paths(est, X)
    acc = np.zeros(X.shape[0])
    for p in paths:  # tree order, one rounding per tree
        acc = acc + p
    den = len(est.estimators_) * _core.iforest_average_path_length(est.max_samples_)
    expect = -tl_pow2(-(acc / den))
    got = est.score_samples(X)
    assert got.tobytes() == expect.tobytes()
    # The fixture separates: another summation order, or libm's pow, gives
    # other bits (libm's log in c(n): the test above).
    rev = np.zeros(X.shape[0])
    for p in paths[::-1]:
        rev = rev + p
    assert (-tl_pow2(-(rev / den)) != got).any()
    assert (-np.power(2.0, -(acc / den)) != got).any()


# -- the trees ------------------------------------------------------------------------
@pytest.mark.parametrize("bootstrap", [False, True])
def test_trees_follow_the_isolation_rules(bootstrap):
    X, _ = blobs_with_outliers(0, n=400, n_out=40, d=5)
    X[:, 4] = 1.0  # a constant column is never split on
    est = IsolationForest(n_estimators=10, max_samples=100, bootstrap=bootstrap, random_state=0).fit(X)
    max_depth = int(np.ceil(np.log2(100)))
    assert est.max_samples_ == 100
    for tree, rows, feats in zip(est.estimators_, est.estimators_samples_, est.estimators_features_):
        assert rows.shape == (100,)
        distinct = np.unique(rows)
        if not bootstrap:
            assert distinct.size == 100
        np.testing.assert_array_equal(feats, np.arange(5))
        t = tree.tree_
        assert t.n_node_samples[0] == distinct.size and t.weighted_n_node_samples[0] == 100
        depth = node_depths(tree)
        assert depth.max() <= max_depth
        Xt = X[distinct]
        member = {0: np.arange(distinct.size)}
        for k in range(t.node_count):  # children come after their parent
            rows_k = member[k]
            assert t.n_node_samples[k] == rows_k.size
            if t.children_left[k] < 0:
                assert depth[k] == max_depth or rows_k.size == 1 or np.ptp(Xt[rows_k], axis=0).max() <= 1e-7
                continue
            f, thr = t.feature[k], t.threshold[k]
            assert f != 4
            v = Xt[rows_k, f]
            assert v.min() <= thr < v.max()
            member[t.children_left[k]] = rows_k[v <= thr]
            member[t.children_right[k]] = rows_k[v > thr]


def test_features_are_drawn_per_tree():
    X, _ = blobs_with_outliers(0, n=200, n_out=20, d=8)
    est = IsolationForest(n_estimators=20, max_features=3, random_state=0).fit(X)
    sets = {tuple(f) for f in est.estimators_features_}
    assert len(sets) > 1
    for f in est.estimators_features_:
        assert f.shape == (3,) and np.all(np.diff(f) > 0) and f.max() < 8


def test_zero_weight_rows_are_never_drawn():
    X, _ = blobs_with_outliers(0, n=600, n_out=0)
    w = np.ones(600)
    w[:100] = 0.0
    for bootstrap in (False, True):
        est = IsolationForest(n_estimators=10, bootstrap=bootstrap, random_state=0).fit(X, sample_weight=w)
        drawn = np.concatenate(est.estimators_samples_)
        assert drawn.min() >= 100


def test_weighted_bootstrap_draws_rows_by_weight():
    X = np.arange(20, dtype=np.float64).reshape(-1, 1)
    w = np.ones(20)
    w[0] = 19.0  # row 0: half of the weight
    est = IsolationForest(n_estimators=50, max_samples=20, bootstrap=True, random_state=0).fit(X, sample_weight=w)
    drawn = np.concatenate(est.estimators_samples_)
    assert abs(np.mean(drawn == 0) - 0.5) < 0.05


# -- offset_, predict, decision_function ------------------------------------------------
@pytest.mark.parametrize("contamination", [0.05, 0.1, 0.25])
def test_contamination_sets_the_fraction_of_training_outliers(contamination):
    X, _ = blobs_with_outliers(2)
    est = IsolationForest(contamination=contamination, random_state=0).fit(X)
    scores = est.score_samples(X)
    assert est.offset_ == np.percentile(scores, 100.0 * contamination)
    pred = est.predict(X)
    assert set(np.unique(pred)) <= {-1, 1}
    # The scores are distinct here, so exactly that fraction lies below the percentile.
    assert np.unique(scores).size == scores.size
    assert np.count_nonzero(pred == -1) == int(np.ceil(contamination * X.shape[0] - 1e-9))
    np.testing.assert_array_equal(est.decision_function(X), scores - est.offset_)
    np.testing.assert_array_equal(pred, np.where(est.decision_function(X) < 0, -1, 1))
    np.testing.assert_array_equal(IsolationForest(contamination=contamination, random_state=0).fit_predict(X), pred)


def test_auto_contamination_offset():
    X, _ = blobs_with_outliers(0)
    est = IsolationForest(random_state=0).fit(X)
    assert est.offset_ == -0.5
    np.testing.assert_array_equal(est.predict(X), np.where(est.score_samples(X) < -0.5, -1, 1))


def test_single_sample():
    est = IsolationForest(random_state=0).fit([[1.0, 2.0]])
    assert est.max_samples_ == 1
    np.testing.assert_array_equal(est.score_samples([[1.0, 2.0], [5.0, 5.0]]), [-0.5, -0.5])


# -- identity ---------------------------------------------------------------------------
def _tree_bits(est):
    return [(e.tree_.threshold.tobytes(), e.tree_.feature.tobytes(), e.tree_.n_node_samples.tobytes())
            for e in est.estimators_]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_bits_for_any_thread_count(dtype):
    X, _ = blobs_with_outliers(0)
    X = X.astype(dtype)
    fits = []
    for threads in (1, 2, 5):
        with twinlearn.config_context(n_threads=threads):
            est = IsolationForest(n_estimators=30, contamination=0.1, max_features=0.75, random_state=1).fit(X)
            fits.append((est, est.score_samples(X)))
    for est, scores in fits[1:]:
        assert _tree_bits(est) == _tree_bits(fits[0][0])
        assert scores.tobytes() == fits[0][1].tobytes()
        assert est.offset_ == fits[0][0].offset_


def test_warm_start_grows_the_trees_of_one_fit():
    X, _ = blobs_with_outliers(0)
    one = IsolationForest(n_estimators=20, random_state=4).fit(X)
    warm = IsolationForest(n_estimators=8, random_state=4, warm_start=True).fit(X)
    warm.set_params(n_estimators=20).fit(X)
    assert _tree_bits(warm) == _tree_bits(one)
    assert warm.score_samples(X).tobytes() == one.score_samples(X).tobytes()
    with pytest.warns(UserWarning, match="does not fit new trees"):
        warm.fit(X)
    with pytest.raises(ValueError, match="must be larger or equal"):
        warm.set_params(n_estimators=5).fit(X)


def test_random_state_sets_the_forest():
    X, _ = blobs_with_outliers(0)
    a = IsolationForest(n_estimators=5, random_state=7).fit(X)
    b = IsolationForest(n_estimators=5, random_state=7).fit(X)
    c = IsolationForest(n_estimators=5, random_state=8).fit(X)
    assert _tree_bits(a) == _tree_bits(b)
    assert _tree_bits(a) != _tree_bits(c)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_bits_on_cpu_and_gpu(dtype):
    X, _ = blobs_with_outliers(0, n=5000, n_out=500, d=6)
    X = X.astype(dtype)
    kw = dict(n_estimators=40, contamination=0.1, max_features=0.5, random_state=2)
    cpu = IsolationForest(device="cpu", **kw).fit(X)
    gpu = IsolationForest(device="cuda", **kw).fit(X)
    assert gpu.device_used() == "cuda:0"
    assert _tree_bits(cpu) == _tree_bits(gpu)
    assert cpu.offset_ == gpu.offset_
    for method in ("score_samples", "decision_function", "predict"):
        assert getattr(cpu, method)(X).tobytes() == getattr(gpu, method)(X).tobytes()


@pytest.mark.gpu
def test_device_input_scores_on_the_gpu():
    cupy = pytest.importorskip("cupy")
    X, _ = blobs_with_outliers(0)
    cpu = IsolationForest(n_estimators=10, random_state=0, device="cpu").fit(X)
    gpu = IsolationForest(n_estimators=10, random_state=0, device="auto").fit(cupy.asarray(X))
    assert gpu.device_used() == "cuda:0"
    out = gpu.score_samples(cupy.asarray(X))
    assert isinstance(out, cupy.ndarray)
    assert cupy.asnumpy(out).tobytes() == cpu.score_samples(X).tobytes()


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize("params", [dict(contamination=0.6), dict(contamination=0.0), dict(contamination=-0.1),
                                    dict(contamination="high"), dict(max_features=0.0), dict(max_features=1.5),
                                    dict(max_samples=0), dict(max_samples=1.5), dict(n_estimators=0)])
def test_bad_parameters_raise(params):
    X, _ = blobs_with_outliers(0, n=50, n_out=0)
    with pytest.raises(ValueError):
        IsolationForest(**params).fit(X)


def test_bad_input_raises():
    X, _ = blobs_with_outliers(0, n=100, n_out=0)
    with pytest.raises(ValueError, match="max_features must be <= n_features"):
        IsolationForest(max_features=5).fit(X)
    with pytest.raises(ValueError, match="max_samples"):
        IsolationForest(max_samples=0.001).fit(X)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        IsolationForest().fit(Xn)
    est = IsolationForest(n_estimators=3, random_state=0).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        est.score_samples(Xn)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="[Nn]egative"):
        IsolationForest().fit(X, sample_weight=-np.ones(100))
    with pytest.raises(ValueError, match="positive entries"):
        IsolationForest(max_samples=50).fit(X, sample_weight=np.r_[np.ones(10), np.zeros(90)])


def test_max_samples_above_n_warns_and_clips():
    X, _ = blobs_with_outliers(0, n=100, n_out=0)
    with pytest.warns(UserWarning, match="max_samples will be set to n_samples"):
        est = IsolationForest(n_estimators=3, max_samples=500, random_state=0).fit(X)
    assert est.max_samples_ == 100
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert IsolationForest(n_estimators=3, max_samples=0.5).fit(X).max_samples_ == 50
