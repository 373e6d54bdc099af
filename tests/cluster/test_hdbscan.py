"""twinlearn.cluster.HDBSCAN against scikit-learn's HDBSCAN: the same
spanning tree, labels and probabilities, and the same bits on every backend
and thread count."""

import warnings

import numpy as np
import pytest
from sklearn import cluster as skc
from sklearn.cluster._hdbscan._linkage import mst_from_data_matrix, mst_from_mutual_reachability
from sklearn.cluster._hdbscan._reachability import mutual_reachability_graph
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics import pairwise_distances
from sklearn.metrics._dist_metrics import DistanceMetric

from twinlearn.cluster import HDBSCAN


def _blobs(n=600, d=2, seed=0):
    return make_blobs(n, n_features=d, centers=4, cluster_std=[0.5, 1.0, 1.5, 0.8], random_state=seed)[0]


def _moons(n=500):
    return make_moons(n, noise=0.08, random_state=0)[0]


def _mixture(n=1500, d=6, seed=1):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=6.0, size=(5, d))
    X = np.concatenate([c + rng.normal(scale=s, size=(n // 5, d)) for c, s in zip(centers, (0.5, 1, 1.5, 2, 0.7))])
    return np.concatenate([X, rng.uniform(-15, 15, size=(n // 20, d))])


def _grid(side=12, seed=0):
    """Integer grid points with some dropped: many exactly equal distances."""
    axes = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    X = np.stack([a.ravel() for a in axes], axis=1).astype(np.float64)
    return X[np.random.default_rng(seed).uniform(size=len(X)) > 0.3]


def _sk(X, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return skc.HDBSCAN(copy=True, **params).fit(X)


def assert_same_as_sklearn(X, **params):
    ours = HDBSCAN(device="cpu", **params).fit(X)
    ref = _sk(X, **params)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.probabilities_, ref.probabilities_, rtol=0, atol=1e-10)
    return ours, ref


DATASETS = {"blobs": _blobs, "moons": _moons, "mixture": _mixture, "grid": _grid}


@pytest.mark.parametrize("data", sorted(DATASETS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("method", ["eom", "leaf"])
def test_same_as_sklearn(data, dtype, method):
    X = DATASETS[data]().astype(dtype)
    assert_same_as_sklearn(X, cluster_selection_method=method)


@pytest.mark.parametrize("params", [
    dict(min_cluster_size=10, min_samples=3),
    dict(min_samples=1),
    dict(alpha=1.7),
    dict(max_cluster_size=100),
    dict(allow_single_cluster=True, min_cluster_size=40),
    dict(allow_single_cluster=True, cluster_selection_method="leaf"),
    dict(metric="manhattan"),
    dict(metric="chebyshev"),
    dict(metric="l1", cluster_selection_method="leaf"),
    dict(algorithm="brute", alpha=1.3),
    dict(algorithm="brute", metric="manhattan"),
], ids=str)
def test_parameters_same_as_sklearn(params):
    assert_same_as_sklearn(_blobs(), **params)


def test_cosine_same_labels():
    # scikit-learn's cosine distances round differently (normalised rows):
    # same labels, probabilities within 1e-8.
    X = _blobs() + 10.0
    ours = HDBSCAN(metric="cosine", device="cpu").fit(X)
    ref = _sk(X, metric="cosine")
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.probabilities_, ref.probabilities_, atol=1e-8)


def test_minkowski_agrees():
    X = _blobs()
    ours = HDBSCAN(metric="minkowski", metric_params={"p": 3}, device="cpu").fit(X)
    ref = _sk(X, metric="minkowski", metric_params={"p": 3})
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(ref.labels_, ours.labels_) >= 0.99


@pytest.mark.parametrize("alpha", [1.0, 1.5])
def test_precomputed_same_as_sklearn(alpha):
    D = pairwise_distances(_blobs(300))
    assert_same_as_sklearn(D, metric="precomputed", alpha=alpha)


@pytest.mark.parametrize("data", ["grid", "blobs"])
def test_spanning_tree_is_sklearns(data):
    """Prim's tree edge by edge: ties to the lowest index, the source that
    reached each row first (scikit-learn's mst_from_data_matrix)."""
    X = DATASETS[data]()
    ours = HDBSCAN(min_cluster_size=5, device="cpu").fit(X)
    core = np.ascontiguousarray(ours._core_distances)
    ref = mst_from_data_matrix(X, core, DistanceMetric.get_metric("euclidean"), 1.0)
    order = np.argsort(ref["distance"])
    src, dst, w = ours._mst
    np.testing.assert_allclose(w, ref["distance"][order], rtol=1e-15)
    if data == "grid":  # exact distances: the edges too (elsewhere ulps may reorder equal weights)
        np.testing.assert_array_equal(dst, ref["next_node"][order])
        np.testing.assert_array_equal(src, ref["current_node"][order])


def test_brute_spanning_tree_is_sklearns():
    """The precomputed (brute) path: each edge starts at the row added before."""
    D = pairwise_distances(_grid())
    ours = HDBSCAN(metric="precomputed", device="cpu").fit(D)
    mr = mutual_reachability_graph(D.copy(), min_samples=5)
    ref = mst_from_mutual_reachability(mr)
    order = np.argsort(ref["distance"])
    src, dst, w = ours._mst
    np.testing.assert_array_equal(src, ref["current_node"][order])
    np.testing.assert_array_equal(dst, ref["next_node"][order])
    np.testing.assert_array_equal(w, ref["distance"][order])


def test_non_finite_rows():
    X = _blobs()
    X[3, 0] = np.inf
    X[7, 1] = np.nan
    X[9] = [np.nan, np.inf]
    ours, ref = HDBSCAN(device="cpu").fit(X), _sk(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.labels_[3] == -2 and ours.labels_[7] == -3 and ours.labels_[9] == -3
    np.testing.assert_allclose(ours.probabilities_, ref.probabilities_, atol=1e-10, equal_nan=True)


@pytest.mark.parametrize("store", ["centroid", "medoid", "both"])
def test_centers(store):
    X = _blobs()
    ours = HDBSCAN(store_centers=store, device="cpu").fit(X)
    ref = _sk(X, store_centers=store)
    for attr in ("centroids_", "medoids_"):
        assert hasattr(ours, attr) == hasattr(ref, attr)
        if hasattr(ref, attr):
            np.testing.assert_allclose(getattr(ours, attr), getattr(ref, attr), atol=1e-12)


def test_fit_predict():
    X = _moons()
    est = HDBSCAN(device="cpu")
    np.testing.assert_array_equal(est.fit_predict(X), HDBSCAN(device="cpu").fit(X).labels_)


def test_identical_across_threads():
    """Past 4 chunks of 2048 rows the Prim steps run in parallel tasks."""
    X = _mixture(n=9000, d=3)
    a = HDBSCAN(n_jobs=1, device="cpu").fit(X)
    b = HDBSCAN(n_jobs=2, device="cpu").fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.probabilities_.tobytes() == b.probabilities_.tobytes()
    for x, y in zip(a._mst, b._mst):
        assert x.tobytes() == y.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("params", [{}, dict(metric="manhattan"), dict(metric="cosine"), dict(alpha=1.3),
                                    dict(metric="minkowski", metric_params={"p": 3}), dict(metric="precomputed")],
                         ids=str)
@pytest.mark.parametrize("mode", ["identical", "deterministic", "fast"])
def test_identical_cpu_gpu(params, mode):
    X = _mixture(n=3000, d=5)
    if params.get("metric") == "precomputed":
        X = pairwise_distances(X)
    a = HDBSCAN(device="cpu", numeric_mode=mode, **params).fit(X)
    b = HDBSCAN(device="cuda", numeric_mode=mode, **params).fit(X)
    c = HDBSCAN(device="cuda", numeric_mode=mode, **params).fit(X)
    for other in (b, c):
        np.testing.assert_array_equal(a.labels_, other.labels_)
        assert a.probabilities_.tobytes() == other.probabilities_.tobytes()
        for x, y in zip(a._mst, other._mst):
            assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("params, match", [
    (dict(min_cluster_size=1), "min_cluster_size"),
    (dict(min_samples=0), "min_samples"),
    (dict(alpha=0.0), "alpha"),
    (dict(alpha=-1.0), "alpha"),
    (dict(cluster_selection_epsilon=-0.1), "cluster_selection_epsilon"),
    (dict(max_cluster_size=0), "max_cluster_size"),
    (dict(cluster_selection_method="bad"), "cluster_selection_method"),
    (dict(metric="hamming"), "metric"),
    (dict(metric="minkowski", metric_params={"p": 0.5}), "p"),
    (dict(metric="euclidean", metric_params={"w": 1}), "metric_params"),
    (dict(min_samples=1000), "min_samples"),
])
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        HDBSCAN(device="cpu", **params).fit(_blobs(100))


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        HDBSCAN(metric="precomputed", device="cpu").fit(np.ones((5, 4)))
    D = pairwise_distances(_blobs(50))
    D[1, 2] = D[2, 1] = np.nan
    with pytest.raises(ValueError, match="nan"):
        HDBSCAN(metric="precomputed", device="cpu").fit(D)
    with pytest.raises(ValueError, match="symmetric"):
        HDBSCAN(metric="precomputed", device="cpu").fit(np.triu(pairwise_distances(_blobs(50))))
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="sparse"):
        HDBSCAN(metric="precomputed", device="cpu").fit(sp.csr_matrix(pairwise_distances(_blobs(50))))
    with pytest.raises(ValueError, match="more than one sample"):
        HDBSCAN(device="cpu").fit(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="centers"):
        HDBSCAN(metric="precomputed", store_centers="centroid", device="cpu").fit(D)


@pytest.mark.parametrize("method", ["eom", "leaf"])
def test_cluster_selection_epsilon_merges(method):
    """scikit-learn 1.9's epsilon search raises TypeError on these data (a
    one-element array in traverse_upwards), so this checks the rule itself:
    no selected cluster splits off below epsilon, and a tiny epsilon changes
    nothing."""
    X = _blobs()
    base = HDBSCAN(cluster_selection_method=method, device="cpu").fit(X).labels_
    tiny = HDBSCAN(cluster_selection_method=method, cluster_selection_epsilon=1e-9, device="cpu").fit(X).labels_
    np.testing.assert_array_equal(base, tiny)
    merged = HDBSCAN(cluster_selection_method=method, cluster_selection_epsilon=0.5, device="cpu").fit(X).labels_
    assert 1 <= merged.max() + 1 < base.max() + 1
    # every cluster of the merged labelling is a union of base clusters (or noise points joining)
    for c in range(base.max() + 1):
        assert len(set(merged[base == c].tolist()) - {-1}) <= 1
