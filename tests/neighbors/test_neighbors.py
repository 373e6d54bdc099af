import pickle
import warnings

import numpy as np
import pytest
from sklearn import neighbors as skn
from sklearn.datasets import load_iris, make_regression
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn.neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors
from twinlearn.testing import bits

METRICS = [("euclidean", {}), ("sqeuclidean", {}), ("manhattan", {}), ("cosine", {}), ("chebyshev", {}),
           ("minkowski", {"p": 2}), ("minkowski", {"p": 1}), ("minkowski", {"p": 3})]


def data(n=700, d=9, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) * rng.uniform(0.5, 3, d)).astype(dtype)


def sklearn_metric(metric, kw):
    return {"metric": metric, **({"p": kw["p"]} if "p" in kw else {})}


@pytest.mark.parametrize(
    "est",
    [
        NearestNeighbors(device="cpu"),
        KNeighborsClassifier(n_neighbors=2, device="cpu"),
        KNeighborsRegressor(n_neighbors=2, device="cpu"),
        KNeighborsClassifier(metric="precomputed", device="cpu"),
        KNeighborsRegressor(metric="precomputed", device="cpu"),
    ],
    ids=lambda e: f"{type(e).__name__}-{e.metric}",
)
def test_check_estimator(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(est)


@pytest.mark.parametrize("metric,kw", METRICS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kneighbors_matches_scikit_learn_brute(device, metric, kw, dtype):
    X, Q = data(dtype=dtype), data(n=150, seed=1, dtype=dtype)
    ours = NearestNeighbors(n_neighbors=6, metric=metric, device=device, **kw).fit(X)
    ref = skn.NearestNeighbors(n_neighbors=6, algorithm="brute", **sklearn_metric(metric, kw)).fit(X)
    d, i = ours.kneighbors(Q)
    rd, ri = ref.kneighbors(Q)
    # Continuous random data: no ties, so the indices are the same.
    np.testing.assert_array_equal(i, ri)
    tol = 2e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(d, rd, rtol=tol, atol=tol)
    assert i.dtype == np.int64
    assert ours.effective_metric_ == ref.effective_metric_
    assert ours.numeric_mode_used() == "identical"


def test_ties_go_to_the_lowest_index(device):
    base = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    X = np.vstack([base, base, base])  # every point three times
    nn = NearestNeighbors(n_neighbors=7, device=device).fit(X)
    d, i = nn.kneighbors([[0.0, 0.0]])
    # distance 0: rows 0, 5, 10; distance 1: the rest in index order
    np.testing.assert_array_equal(i[0], [0, 5, 10, 1, 2, 3, 4])
    np.testing.assert_array_equal(d[0], [0, 0, 0, 1, 1, 1, 1])
    # Separating arm: a plain unstable sort by distance alone need not give this order.
    dist = np.linalg.norm(X, axis=1)
    assert list(np.argsort(dist, kind="stable")[:7]) == [0, 5, 10, 1, 2, 3, 4]


def test_query_none_excludes_each_point(device):
    X = data(n=300)
    X[10] = X[20]  # a duplicate pair
    ours = NearestNeighbors(n_neighbors=4, device=device).fit(X)
    ref = skn.NearestNeighbors(n_neighbors=4, algorithm="brute").fit(X)
    d, i = ours.kneighbors()
    rd, ri = ref.kneighbors()
    # Same neighbours; scikit-learn leaves the order of the tied duplicates
    # open, here the lower index comes first.
    np.testing.assert_allclose(d, rd, atol=1e-10)
    differ = np.any(i != ri, axis=1)
    assert np.all(np.isin(i[differ], ri[differ]) | np.isin(i[differ], [10, 20]))
    np.testing.assert_array_equal(i[~differ], ri[~differ])
    assert differ.sum() < 10
    tied = (np.diff(d, axis=1) == 0)
    assert np.all(np.diff(i, axis=1)[tied] > 0)
    assert not np.any(i == np.arange(300)[:, None])


@pytest.mark.parametrize("k", [1, 255, 300, 1024, 1100])
def test_large_k(device, k):
    X, Q = data(n=1500, d=5), data(n=37, d=5, seed=3)
    d, i = NearestNeighbors(n_neighbors=k, device=device).fit(X).kneighbors(Q)
    full = np.linalg.norm(Q[:, None, :] - X[None], axis=-1)
    order = np.argsort(full, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(np.sort(i, axis=1), np.sort(order, axis=1))
    assert np.all(np.diff(d, axis=1) >= 0)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("metric", ["minkowski", "manhattan", "cosine"])
def test_classifier_matches_scikit_learn(device, weights, metric):
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    X = X + rng.normal(scale=1e-3, size=X.shape)  # break exact ties
    # Probabilities at points other than the training rows: a training row's
    # distance to itself is 0 up to rounding, and with weights="distance" a
    # rounding-level distance (scikit-learn 1.9 gives 1.7e-7 for one iris row
    # where the clamped expansion gives 0) decides between an infinite and a
    # finite weight.
    Xq = X + rng.normal(scale=1e-2, size=X.shape)
    ours = KNeighborsClassifier(n_neighbors=7, weights=weights, metric=metric, device=device).fit(X, y)
    ref = skn.KNeighborsClassifier(n_neighbors=7, weights=weights, metric=metric, algorithm="brute").fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_array_equal(ours.predict(Xq), ref.predict(Xq))
    np.testing.assert_allclose(ours.predict_proba(Xq), ref.predict_proba(Xq), atol=1e-9)
    assert ours.score(X, y) == ref.score(X, y)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    np.testing.assert_array_equal(
        KNeighborsClassifier(device=device).fit(X, names).predict(X[:20]),
        skn.KNeighborsClassifier(algorithm="brute").fit(X, names).predict(X[:20]),
    )


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_regressor_matches_scikit_learn(device, weights):
    X, y = make_regression(n_samples=400, n_features=6, noise=0.5, random_state=0)
    Y2 = np.column_stack([y, -y])
    # Queries off the training rows (see test_classifier_matches_scikit_learn:
    # a row's rounding-level distance to itself decides its weight).
    Xq = X + np.random.default_rng(1).normal(scale=1e-2, size=X.shape)
    for target in (y, Y2):
        ours = KNeighborsRegressor(n_neighbors=5, weights=weights, device=device).fit(X, target)
        ref = skn.KNeighborsRegressor(n_neighbors=5, weights=weights, algorithm="brute").fit(X, target)
        np.testing.assert_allclose(ours.predict(Xq[:100]), ref.predict(Xq[:100]), rtol=1e-12)
        np.testing.assert_allclose(ours.score(Xq, target), ref.score(Xq, target), rtol=1e-12)


@pytest.mark.parametrize("algorithm", ["auto", "brute", "kd_tree", "ball_tree"])
def test_every_algorithm_is_exact(device, algorithm):
    X, Q = data(), data(n=50, seed=2)
    d, i = NearestNeighbors(n_neighbors=5, algorithm=algorithm, device=device).fit(X).kneighbors(Q)
    ri = skn.NearestNeighbors(n_neighbors=5, algorithm="brute").fit(X).kneighbors(Q, return_distance=False)
    np.testing.assert_array_equal(i, ri)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_radius_neighbors_and_graphs(device, metric):
    X, Q = data(n=400, d=3), data(n=60, d=3, seed=5)
    ours = NearestNeighbors(radius=1.5, n_neighbors=4, metric=metric, device=device).fit(X)
    ref = skn.NearestNeighbors(radius=1.5, n_neighbors=4, metric=metric, algorithm="brute").fit(X)
    for q in (Q, None):
        d, i = ours.radius_neighbors(q, sort_results=True)
        rd, ri = ref.radius_neighbors(q, sort_results=True)
        assert len(i) == len(ri)
        for a, b, da, db in zip(i, ri, d, rd):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_allclose(da, db, atol=1e-10)
        _, iu = ours.radius_neighbors(q)
        for a in iu:
            assert np.all(np.diff(a) > 0)  # unsorted results come in index order
        for mode in ("connectivity", "distance"):
            g = ours.radius_neighbors_graph(q, mode=mode, sort_results=mode == "distance")
            rg = ref.radius_neighbors_graph(q, mode=mode)
            np.testing.assert_allclose(g.toarray(), rg.toarray(), atol=1e-10)
            kg = ours.kneighbors_graph(q, mode=mode)
            rkg = ref.kneighbors_graph(q, mode=mode)
            np.testing.assert_allclose(kg.toarray(), rkg.toarray(), atol=1e-10)


def test_precomputed_matches_scikit_learn():
    X, y = load_iris(return_X_y=True)
    D = np.linalg.norm(X[:, None] - X[None], axis=-1) + np.random.default_rng(0).uniform(0, 1e-6, (150, 150))
    ours = KNeighborsClassifier(n_neighbors=5, metric="precomputed", device="cpu").fit(D, y)
    ref = skn.KNeighborsClassifier(n_neighbors=5, metric="precomputed").fit(D, y)
    np.testing.assert_array_equal(ours.kneighbors(D[:30])[1], ref.kneighbors(D[:30])[1])
    np.testing.assert_array_equal(ours.predict(D), ref.predict(D))


def test_device_arrays_fall_back_cleanly_to_cpu():
    X = data(n=100)
    nn = NearestNeighbors(n_neighbors=3, device="cpu").fit(X)
    assert nn.device_used() == "cpu"


@pytest.mark.parametrize("threads", [1, 3])
def test_bits_do_not_depend_on_thread_count(threads):
    X, Q = data(n=3000, dtype=np.float32), data(n=500, seed=9, dtype=np.float32)
    with twinlearn.config_context(n_threads=1):
        rd, ri = NearestNeighbors(n_neighbors=9, device="cpu").fit(X).kneighbors(Q)
    with twinlearn.config_context(n_threads=threads):
        d, i = NearestNeighbors(n_neighbors=9, device="cpu").fit(X).kneighbors(Q)
    assert bits(d) == bits(rd) and bits(i) == bits(ri)


@pytest.mark.gpu
@pytest.mark.parametrize("metric,kw", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,k", [(1000, 5), (20011, 10), (5003, 300), (3000, 1024)])
def test_cpu_and_gpu_give_identical_bits(metric, kw, dtype, n, k):
    X, Q = data(n=n, d=13, dtype=dtype), data(n=777, d=13, seed=4, dtype=dtype)
    c = NearestNeighbors(n_neighbors=k, metric=metric, device="cpu", numeric_mode="identical", **kw).fit(X)
    g = NearestNeighbors(n_neighbors=k, metric=metric, device="cuda", numeric_mode="identical", **kw).fit(X)
    dc, ic = c.kneighbors(Q)
    dg, ig = g.kneighbors(Q)
    assert bits(ic) == bits(ig)
    assert bits(dc) == bits(dg)
    if n <= 5003:  # X=None queries every fitted row: n x n distances on the CPU
        assert bits(c.kneighbors()[1]) == bits(g.kneighbors()[1])


@pytest.mark.gpu
def test_gpu_classifier_and_radius_equal_cpu():
    X, y = load_iris(return_X_y=True)
    for cls in (KNeighborsClassifier, KNeighborsRegressor):
        c = cls(n_neighbors=6, weights="distance", device="cpu").fit(X, y)
        g = cls(n_neighbors=6, weights="distance", device="cuda").fit(X, y)
        assert bits(c.predict(X)) == bits(g.predict(X))
    c = NearestNeighbors(radius=0.7, device="cpu").fit(X)
    g = NearestNeighbors(radius=0.7, device="cuda").fit(X)
    for a, b in zip(c.radius_neighbors(X)[1], g.radius_neighbors(X)[1]):
        assert bits(a) == bits(b)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_device_arrays(lib):
    mod = pytest.importorskip(lib)
    X, Q = data(n=5000, dtype=np.float32), data(n=100, seed=2, dtype=np.float32)
    Xd = mod.asarray(X) if lib == "cupy" else mod.as_tensor(X, device="cuda")
    Qd = mod.asarray(Q) if lib == "cupy" else mod.as_tensor(Q, device="cuda")
    g = NearestNeighbors(n_neighbors=4).fit(Xd)
    d, i = g.kneighbors(Qd)
    assert type(i) is type(Qd)
    rd, ri = NearestNeighbors(n_neighbors=4, device="cpu").fit(X).kneighbors(Q)
    host = i.get() if lib == "cupy" else i.cpu().numpy()
    assert bits(host) == bits(ri)
    loaded = pickle.loads(pickle.dumps(g))
    assert isinstance(loaded._fit_X, np.ndarray)
    loaded.set_params(device="cpu")
    assert bits(loaded.kneighbors(Q)[1]) == bits(ri)


def test_pickle_and_cpu_prediction(device):
    X, y = load_iris(return_X_y=True)
    clf = KNeighborsClassifier(device=device).fit(X, y)
    loaded = pickle.loads(pickle.dumps(clf))
    loaded.set_params(device="cpu")
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))


def test_unsupported_parameters_raise_clearly():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="callable weights are not supported"):
        KNeighborsClassifier(weights=lambda d: d, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="callable metrics are not supported"):
        NearestNeighbors(metric=lambda a, b: 0.0, device="cpu").fit(X)
    with pytest.raises(ValueError, match="metric"):
        NearestNeighbors(metric="hamming", device="cpu").fit(X)
    with pytest.raises(ValueError, match="metric_params"):
        NearestNeighbors(metric_params={"w": 1}, device="cpu").fit(X)


def test_bad_input(device):
    X = data(n=20)
    nn = NearestNeighbors(n_neighbors=3, device=device).fit(X)
    with pytest.raises(ValueError, match="X has 2 features"):
        nn.kneighbors(np.ones((3, 2)))
    with pytest.raises(ValueError, match="Expected n_neighbors <= n_samples_fit"):
        nn.kneighbors(X, n_neighbors=21)
    with pytest.raises(ValueError, match="Expected n_neighbors < n_samples_fit"):
        nn.kneighbors(n_neighbors=20)
    with pytest.raises(ValueError, match="NaN"):
        nn.kneighbors(np.full((2, 9), np.nan))
    with pytest.raises(ValueError, match="infinity"):
        NearestNeighbors(device=device).fit(np.array([[np.inf, 1.0]] * 6))
    with pytest.raises(ValueError, match="0 sample"):
        NearestNeighbors(device=device).fit(np.empty((0, 3)))
    with pytest.raises(ValueError, match="Expected n_neighbors > 0"):
        nn.kneighbors(X, n_neighbors=0)


TOO_LARGE = r"holds values too large for {} to compute with: its distances overflow.*Magnitudes up to about .* supported"


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "minkowski"])
@pytest.mark.parametrize("make", [lambda m: NearestNeighbors(radius=1e301, metric=m, device="cpu"),
                                  lambda m: KNeighborsRegressor(n_neighbors=1, metric=m, device="cpu")],
                         ids=["NearestNeighbors", "KNeighborsRegressor"])
def test_radius_neighbors_overflow(make, metric):
    """Coordinates of ±1e300: the squared distances overflow, and the radius
    search dropped the pairs it could not compute (each point itself
    included) without a word. kneighbors raises; so does the radius search."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1e-300, 1e-300], [-1.0, 2e-300]]) * 1e300
    est = make(metric).fit(X, np.arange(4.0))
    owner = type(est).__name__
    with pytest.raises(ValueError, match=TOO_LARGE.format(owner)):
        est.kneighbors(X, 1)
    for q in (X, None):
        with pytest.raises(ValueError, match=TOO_LARGE.format(owner)):
            est.radius_neighbors(q, radius=1e301)
        with pytest.raises(ValueError, match=TOO_LARGE.format(owner)):
            est.radius_neighbors_graph(q, radius=1e301)


def test_radius_neighbors_of_large_finite_distances_are_computed():
    """Values beyond the no-overflow bound whose distances still come out
    finite: the radius search answers (as kneighbors does)."""
    X = np.array([[1e160, 0.0], [1e160, 1.0], [-1e160, 0.0]])
    nn = NearestNeighbors(metric="manhattan", device="cpu").fit(X)
    d, i = nn.radius_neighbors(X[:1], radius=2.0, sort_results=True)
    np.testing.assert_array_equal(i[0], [0, 1])
    np.testing.assert_array_equal(d[0], [0.0, 1.0])
    assert np.isfinite(nn.kneighbors(X, 3)[0]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["numpy", "cupy", "torch"])
def test_gpu_radius_neighbors_overflow(lib):
    mod = pytest.importorskip(lib)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1e-300, 1e-300], [-1.0, 2e-300]]) * 1e300
    Xd = {"numpy": lambda: X, "cupy": lambda: mod.asarray(X), "torch": lambda: mod.as_tensor(X, device="cuda")}[lib]()
    nn = NearestNeighbors(radius=1e301, device="cuda").fit(Xd)
    for q in (Xd, None):
        with pytest.raises(ValueError, match=TOO_LARGE.format("NearestNeighbors")):
            nn.radius_neighbors(q)
