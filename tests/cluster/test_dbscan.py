"""twinlearn.cluster.DBSCAN against scikit-learn's DBSCAN: the same labels,
core samples and components, and the same labels on every backend."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import cluster as skc
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics import pairwise_distances
from sklearn.neighbors import kneighbors_graph, radius_neighbors_graph

import twinlearn
from twinlearn import _backend
from twinlearn.cluster import DBSCAN


def _blobs(n=600, d=3, seed=0, dtype=np.float64):
    X, _ = make_blobs(n, n_features=d, centers=4, cluster_std=0.7, random_state=seed)
    return X.astype(dtype)


def _moons(n=500, dtype=np.float64):
    return make_moons(n, noise=0.06, random_state=1)[0].astype(dtype)


def _grid(side=9, d=2, drop=0.35, seed=0):
    """Integer grid points with a random share dropped: many pairs at distance
    exactly 1, 2, sqrt(2), ... (exact in float arithmetic)."""
    axes = np.meshgrid(*[np.arange(side)] * d, indexing="ij")
    X = np.stack([a.ravel() for a in axes], axis=1).astype(np.float64)
    keep = np.random.default_rng(seed).uniform(size=len(X)) > drop
    return X[keep]


def assert_same_as_sklearn(X, sample_weight=None, **params):
    ours = DBSCAN(device="cpu", **params).fit(X, sample_weight=sample_weight)
    ref = skc.DBSCAN(**params).fit(X, sample_weight=sample_weight)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_array_equal(ours.core_sample_indices_, ref.core_sample_indices_)
    if sp.issparse(ref.components_):
        np.testing.assert_array_equal(ours.components_.toarray(), ref.components_.toarray())
    else:
        np.testing.assert_array_equal(ours.components_, ref.components_)
        assert ours.components_.dtype == ref.components_.dtype
    assert ours.labels_.dtype == ref.labels_.dtype
    return ours


# -- scikit-learn's labels ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("eps,min_samples", [(0.3, 5), (0.5, 10), (0.15, 3), (2.0, 1)])
def test_blobs_match_sklearn(dtype, eps, min_samples):
    ours = assert_same_as_sklearn(_blobs(dtype=dtype), eps=eps, min_samples=min_samples)
    assert ours.labels_.max() >= 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_moons_match_sklearn(dtype):
    ours = assert_same_as_sklearn(_moons(dtype=dtype), eps=0.12, min_samples=6)
    assert ours.labels_.max() == 1 and (ours.labels_ == -1).any()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("metric,eps,extra", [
    ("euclidean", 0.4, {}), ("l2", 0.4, {}), ("sqeuclidean", 0.16, {}), ("manhattan", 0.5, {}),
    ("cityblock", 0.5, {}), ("l1", 0.5, {}), ("cosine", 0.002, {}), ("chebyshev", 0.3, {}),
    ("minkowski", 0.4, {"p": 3}),
    ("minkowski", 0.5, {"p": 1}), ("minkowski", 0.45, {"p": 1.5}), ("minkowski", 0.4, {"p": 2}),
])
def test_every_metric_matches_sklearn(dtype, metric, eps, extra):
    X = _blobs(n=400, dtype=dtype)
    assert_same_as_sklearn(X, eps=eps, min_samples=5, metric=metric, **extra)


def test_minkowski_without_p_is_euclidean():
    """p=None means 2 (scikit-learn's documented default; its own fit fails on
    metric='minkowski' with p=None)."""
    X = _blobs(n=300)
    np.testing.assert_array_equal(DBSCAN(eps=0.3, metric="minkowski", device="cpu").fit(X).labels_,
                                  skc.DBSCAN(eps=0.3).fit(X).labels_)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "chebyshev", "sqeuclidean"])
@pytest.mark.parametrize("eps", [1.0, 2.0, np.sqrt(2.0), 3.0])
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ties_at_eps_on_integer_grids(metric, eps, d, dtype):
    """Many pairs at distance exactly eps: they are neighbours (distance <= eps),
    as in scikit-learn's trees ('auto' here) and its float64 brute force.
    (scikit-learn's brute force on float32 data compares in float32 and
    drops some pairs at exactly eps=sqrt(2) that its trees keep; twinlearn
    computes neighbourhoods in float64 and agrees with the trees.)"""
    X = _grid(side=9 if d == 2 else 6, d=d).astype(dtype)
    for min_samples in (3, 4, 5, 7):
        assert_same_as_sklearn(X, eps=eps, min_samples=min_samples, metric=metric)
        ref = skc.DBSCAN(eps=eps, min_samples=min_samples, metric=metric, algorithm="brute").fit(
            X.astype(np.float64))
        np.testing.assert_array_equal(
            DBSCAN(eps=eps, min_samples=min_samples, metric=metric, algorithm="brute", device="cpu").fit(X).labels_,
            ref.labels_)
    # Where a sample has neighbours at exactly eps, a min_samples that counts
    # them makes it core at eps and not just below eps (the ties decide).
    D = pairwise_distances(X.astype(np.float64), metric=metric)
    at, below = (D <= eps).sum(1), (D < eps).sum(1)
    tied = np.flatnonzero(at != below)
    if metric == "euclidean" or (eps in (1.0, 2.0, 3.0) and metric != "sqeuclidean"):
        assert len(tied), "the fixture has no pair at distance eps"
    if len(tied):
        ms = int(at[tied[0]])
        a = assert_same_as_sklearn(X, eps=eps, min_samples=ms, metric=metric)
        b = assert_same_as_sklearn(X, eps=np.nextafter(eps, 0), min_samples=ms, metric=metric)
        assert tied[0] in a.core_sample_indices_ and tied[0] not in b.core_sample_indices_


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sample_weight_matches_sklearn(dtype):
    X = _blobs(n=500, dtype=dtype)
    rng = np.random.default_rng(3)
    for w in (rng.integers(0, 4, len(X)).astype(float), rng.uniform(0.2, 2.5, len(X)),
              rng.uniform(-1.0, 3.0, len(X)), np.full(len(X), 10.0)):
        assert_same_as_sklearn(X, sample_weight=w, eps=0.3, min_samples=6)


def test_weight_of_min_samples_makes_a_core_sample_by_itself():
    X = np.array([[0.0, 0.0], [10.0, 10.0], [20.0, 20.0]])
    ours = assert_same_as_sklearn(X, sample_weight=[5, 1, 5], eps=1.0, min_samples=5)
    np.testing.assert_array_equal(ours.labels_, [0, -1, 1])


def test_border_sample_joins_the_lowest_cluster_id():
    """A border sample (index 0) within eps of a core sample of each of two
    clusters joins the lower cluster id (the first cluster scikit-learn's
    expansion reaches), whichever side is listed first."""
    right = [[3.0, 0], [3.2, 0], [3.4, 0], [3.6, 0]]
    left = [[-3.0, 0], [-3.2, 0], [-3.4, 0], [-3.6, 0]]
    for X in (np.array([[0.0, 0]] + right + left), np.array([[0.0, 0]] + left + right)):
        ours = assert_same_as_sklearn(X, eps=3.0, min_samples=4)
        assert list(ours.labels_) == [0, 0, 0, 0, 0, 1, 1, 1, 1]
        assert 0 not in ours.core_sample_indices_


def test_cluster_ids_follow_the_lowest_core_index():
    X = _blobs(n=300)
    perm = np.random.default_rng(0).permutation(len(X))
    for Xp in (X, X[perm], X[::-1].copy()):
        ours = assert_same_as_sklearn(Xp, eps=0.3, min_samples=5)
        firsts = [np.flatnonzero(ours.labels_[ours.core_sample_indices_] == c)[0] for c in
                  range(ours.labels_.max() + 1)]
        assert firsts == sorted(firsts)


def test_all_noise_and_one_cluster():
    X = _blobs(n=50)
    ours = assert_same_as_sklearn(X, eps=1e-6, min_samples=2)
    assert (ours.labels_ == -1).all() and ours.components_.shape == (0, X.shape[1])
    ours = assert_same_as_sklearn(X, eps=1e3, min_samples=2)
    assert (ours.labels_ == 0).all()


def test_sparse_features_match_sklearn():
    X = _blobs(n=300)
    X[np.abs(X) < 1.0] = 0.0
    assert_same_as_sklearn(sp.csr_matrix(X), eps=0.5, min_samples=4)


# -- precomputed distances ------------------------------------------------------------
def test_precomputed_dense_matches_sklearn():
    X = _blobs(n=300)
    D = pairwise_distances(X)
    assert_same_as_sklearn(D, eps=0.3, min_samples=5, metric="precomputed")
    # The same labels as from the features.
    np.testing.assert_array_equal(DBSCAN(eps=0.3, metric="precomputed", device="cpu").fit(D).labels_,
                                  DBSCAN(eps=0.3, device="cpu").fit(X).labels_)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_precomputed_sparse_matches_sklearn(fmt):
    X = _blobs(n=300)
    G = radius_neighbors_graph(X, 0.5, mode="distance").asformat(fmt)
    assert_same_as_sklearn(G, eps=0.3, min_samples=5, metric="precomputed")
    assert_same_as_sklearn(G, eps=0.5, min_samples=5, metric="precomputed")


def test_precomputed_sparse_with_explicit_zeros_and_no_diagonal():
    D = sp.csr_matrix(np.array([[0.0, 0.2, 0.0], [0.2, 0.0, 0.9], [0.0, 0.9, 0.0]]))
    D[0, 2] = 0.0  # an explicit zero: a neighbour at distance 0
    D[2, 0] = 0.0
    assert_same_as_sklearn(D, eps=0.5, min_samples=2, metric="precomputed")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_asymmetric_precomputed_graph_matches_sklearn(seed):
    """A k-nearest-neighbours graph is not symmetric: scikit-learn's sequential
    expansion defines the labels (the order-independent rule needs symmetry)."""
    X = _blobs(n=200, seed=seed)
    G = kneighbors_graph(X, 6, mode="distance")
    for eps, ms in ((0.3, 4), (0.5, 6), (1.0, 3)):
        assert_same_as_sklearn(G, eps=eps, min_samples=ms, metric="precomputed")
    D = pairwise_distances(X)
    D[np.triu_indices_from(D, 1)] *= 1.3  # a dense asymmetric matrix
    assert_same_as_sklearn(D, eps=0.4, min_samples=4, metric="precomputed")


# -- the numeric contract ------------------------------------------------------------
@pytest.mark.parametrize("mode", ["fast", "deterministic", "identical"])
def test_every_mode_delivers_identical(mode):
    est = DBSCAN(eps=0.3, device="cpu", numeric_mode=mode).fit(_blobs())
    assert est.numeric_mode_used() == "identical"


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_labels_do_not_depend_on_the_thread_count(threads):
    X = _blobs(n=2000, d=5)
    w = np.random.default_rng(0).uniform(0.1, 2.0, len(X))
    with twinlearn.config_context(n_threads=1):
        ref = DBSCAN(eps=0.5, min_samples=8, device="cpu").fit(X, sample_weight=w)
    with twinlearn.config_context(n_threads=threads):
        got = DBSCAN(eps=0.5, min_samples=8, device="cpu").fit(X, sample_weight=w)
    np.testing.assert_array_equal(ref.labels_, got.labels_)
    got = DBSCAN(eps=0.5, min_samples=8, device="cpu", n_jobs=threads).fit(X, sample_weight=w)
    np.testing.assert_array_equal(ref.labels_, got.labels_)


def test_weighted_counts_are_summed_in_index_order():
    """The weighted count is one float64 chain over the neighbours in
    increasing index order: ((0.1 + 0.2) + 0.3) + 0.4 == 1.0 makes the four
    (coincident) samples core for min_samples=1; the reverse order sums to
    0.9999999999999999 and would make none core."""
    w = np.array([0.1, 0.2, 0.3, 0.4])
    assert ((w[0] + w[1]) + w[2]) + w[3] == 1.0
    assert ((w[3] + w[2]) + w[1]) + w[0] < 1.0  # the fixture separates the two orders
    X = np.zeros((4, 1))
    ours = assert_same_as_sklearn(X, sample_weight=w, eps=0.5, min_samples=1)
    np.testing.assert_array_equal(ours.core_sample_indices_, [0, 1, 2, 3])


# -- bad input ---------------------------------------------------------------------
@pytest.mark.parametrize("params,match", [
    ({"eps": 0.0}, "eps"), ({"eps": -1.0}, "eps"), ({"min_samples": 0}, "min_samples"),
    ({"metric": "foo"}, "metric"), ({"metric": "hamming"}, "metric"),
    ({"metric": lambda a, b: 0.0}, "callable"), ({"metric": "minkowski", "p": 0.5}, "p must be"),
    ({"metric": "euclidean", "metric_params": {"w": 1}}, "metric_params"),
    ({"algorithm": "tree"}, "algorithm"), ({"leaf_size": 0}, "leaf_size"),
])
def test_bad_parameters_raise(params, match):
    with pytest.raises(ValueError, match=match):
        DBSCAN(device="cpu", **params).fit(_blobs(n=20))


def test_bad_precomputed_input_raises():
    with pytest.raises(ValueError, match="square"):
        DBSCAN(metric="precomputed", device="cpu").fit(np.zeros((4, 3)))
    D = pairwise_distances(_blobs(n=10))
    D[1, 2] = -1.0
    with pytest.raises(ValueError, match="Negative values"):
        DBSCAN(metric="precomputed", device="cpu").fit(D)
    with pytest.raises(ValueError, match="Negative values"):
        DBSCAN(metric="precomputed", device="cpu").fit(sp.csr_matrix(D))
    with pytest.raises(ValueError, match="square"):
        DBSCAN(metric="precomputed", device="cpu").fit(sp.csr_matrix(np.ones((3, 4))))
    D[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DBSCAN(metric="precomputed", device="cpu").fit(D)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nonfinite_X_raises(value):
    X = _blobs(n=20)
    X[3, 1] = value
    with pytest.raises(ValueError, match="NaN|infinity"):
        DBSCAN(device="cpu").fit(X)


def test_bad_sample_weight_raises():
    with pytest.raises(ValueError, match="sample_weight|inconsistent|shape"):
        DBSCAN(device="cpu").fit(_blobs(n=20), sample_weight=np.ones(19))


def test_core_rejects_unsorted_graphs():
    core = _backend.core()
    ctx = core.Context("cpu", 1, "identical", 0, 0)
    p = core.DbscanParams()
    p.eps, p.min_samples = 0.5, 2
    with pytest.raises(ValueError, match="ascending"):
        core.dbscan_graph(ctx, np.array([0, 2, 3], np.int64), np.array([1, 0, 1], np.int64), None, p)
    with pytest.raises(ValueError, match="ascending"):
        core.dbscan_graph(ctx, np.array([0, 1, 2], np.int64), np.array([0, 5], np.int64), None, p)
    p.eps = 0.0
    with pytest.raises(ValueError, match="eps"):
        core.dbscan_graph(ctx, np.array([0, 1], np.int64), np.array([0], np.int64), None, p)


# -- the GPU: the same labels --------------------------------------------------------
def _both(X, sample_weight=None, **params):
    c = DBSCAN(device="cpu", numeric_mode="identical", **params).fit(X, sample_weight=sample_weight)
    g = DBSCAN(device="cuda", numeric_mode="identical", **params).fit(X, sample_weight=sample_weight)
    np.testing.assert_array_equal(c.labels_, g.labels_)
    np.testing.assert_array_equal(c.core_sample_indices_, g.core_sample_indices_)
    assert g.device_used().startswith("cuda") and g.numeric_mode_used() == "identical"
    return c, g


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine", "chebyshev", "minkowski"])
def test_cpu_and_gpu_give_the_same_labels(dtype, metric):
    X = _blobs(n=3000, d=6, dtype=dtype)
    eps = 0.004 if metric == "cosine" else 0.8
    c, _ = _both(X, eps=eps, min_samples=6, metric=metric, **({"p": 3} if metric == "minkowski" else {}))
    ref = skc.DBSCAN(eps=eps, min_samples=6, metric=metric, **({"p": 3} if metric == "minkowski" else {})).fit(X)
    np.testing.assert_array_equal(c.labels_, ref.labels_)


@pytest.mark.gpu
def test_cpu_and_gpu_same_labels_weights_ties_precomputed():
    X = _grid(side=40, d=2)
    w = np.random.default_rng(1).uniform(-0.5, 2.0, len(X))
    _both(X, eps=1.0, min_samples=4)
    _both(X, sample_weight=w, eps=np.sqrt(2.0), min_samples=4, metric="euclidean")
    _both(X, eps=2.0, min_samples=5, metric="manhattan")
    G = radius_neighbors_graph(_blobs(n=800), 0.5, mode="distance")
    _both(G, eps=0.3, min_samples=5, metric="precomputed")
    K = kneighbors_graph(_blobs(n=800), 6, mode="distance")  # asymmetric: the host expansion
    _both(K, eps=0.5, min_samples=5, metric="precomputed")


@pytest.mark.gpu
def test_gpu_components_of_a_long_chain():
    """A chain of core samples whose lowest index sits at the far end: the
    device's hooking must run to its fixed point (many rounds)."""
    n = 20000
    X = np.arange(n, dtype=np.float64)[::-1].reshape(-1, 1).copy()
    c, g = _both(X, eps=1.0, min_samples=2)
    assert (g.labels_ == 0).all()
    perm = np.random.default_rng(0).permutation(n)
    _both(X[perm], eps=1.0, min_samples=3)


@pytest.mark.gpu
def test_device_arrays_in():
    cp = pytest.importorskip("cupy")
    X = _blobs(n=1000)
    c = DBSCAN(eps=0.3, device="cpu").fit(X)
    g = DBSCAN(eps=0.3, device="cuda").fit(cp.asarray(X))
    np.testing.assert_array_equal(c.labels_, np.asarray(g.labels_))
    assert isinstance(g.components_, np.ndarray)
