"""AgglomerativeClustering: scikit-learn's children_, labels_ and distances_
for every linkage x metric x dtype, ties on integer grids, distance
thresholds, thread counts, bad input, CPU vs GPU."""

import itertools

import numpy as np
import pytest
import sklearn.cluster as skc
from sklearn.cluster._agglomerative import _hc_cut
from sklearn.metrics import pairwise_distances

from twinlearn import _backend, get_n_threads, set_n_threads
from twinlearn.cluster import AgglomerativeClustering
from twinlearn.cluster._agglomerative import MAX_CONDENSED_SAMPLES

LINKAGES = ["ward", "complete", "average", "single"]
METRICS = ["euclidean", "l2", "manhattan", "l1", "cityblock", "cosine", "precomputed"]
CASES = [(lk, m) for lk, m in itertools.product(LINKAGES, METRICS) if lk != "ward" or m in ("euclidean", "l2")]


def _blobs(n=240, d=5, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=4.0, size=(4, d))
    return (centers[rng.integers(0, 4, n)] + rng.normal(size=(n, d))).astype(dtype)


def _grid(n=300, d=2, side=4, seed=0):
    """Integer points with many repeats and equal distances: tie-heavy."""
    return np.random.default_rng(seed).integers(0, side, size=(n, d)).astype(np.float64)


def _fit_pair(X, metric, **params):
    """(scikit-learn, twinlearn) fitted on X (a distance matrix of X for 'precomputed')."""
    Xf = pairwise_distances(X.astype(np.float64)) if metric == "precomputed" else X
    sk = skc.AgglomerativeClustering(metric=metric, **params).fit(Xf)
    tl = AgglomerativeClustering(metric=metric, device="cpu", numeric_mode="identical", **params).fit(Xf)
    return sk, tl


def _assert_same(sk, tl, rtol=1e-12, atol=0):
    np.testing.assert_array_equal(tl.children_, sk.children_)
    np.testing.assert_array_equal(tl.labels_, sk.labels_)
    assert tl.n_clusters_ == sk.n_clusters_
    assert tl.n_leaves_ == sk.n_leaves_ and tl.n_connected_components_ == sk.n_connected_components_
    assert tl.labels_.dtype == np.intp and tl.children_.dtype == np.intp
    if hasattr(sk, "distances_"):
        np.testing.assert_allclose(tl.distances_, sk.distances_, rtol=rtol, atol=atol)
    else:
        assert not hasattr(tl, "distances_")


# -- scikit-learn's trees ---------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("linkage,metric", CASES)
def test_same_tree_and_labels_as_sklearn(linkage, metric, dtype):
    sk, tl = _fit_pair(_blobs(dtype=dtype), metric, linkage=linkage, n_clusters=6, compute_distances=True)
    _assert_same(sk, tl)


@pytest.mark.parametrize("linkage,metric", [c for c in CASES if c[1] != "cosine"])
def test_ties_on_integer_grids(linkage, metric):
    """Integer grids: distances exact in float64, so many equal merge heights
    and equal candidate distances; the tie rules (the first strictly smaller
    value of each scan, the chain's previous element first, the stable sort
    of the heights) must match scikit-learn's exactly."""
    for seed, (d, side) in enumerate([(2, 4), (3, 3), (1, 6)]):
        X = _grid(d=d, side=side, seed=seed)
        sk, tl = _fit_pair(X, metric, linkage=linkage, n_clusters=9, compute_distances=True)
        _assert_same(sk, tl)
        assert len(np.unique(sk.distances_)) < len(sk.distances_) // 4  # really tie-heavy


@pytest.mark.parametrize("linkage", LINKAGES)
def test_cosine_ties_on_shifted_grids(linkage):
    if linkage == "ward":
        pytest.skip("ward is euclidean only")
    X = _grid(d=3, side=3) + 1.0  # no zero rows; many parallel rows, exact cosine 0
    sk, tl = _fit_pair(X, "cosine", linkage=linkage, n_clusters=5, compute_distances=True)
    _assert_same(sk, tl)


@pytest.mark.parametrize("linkage", LINKAGES)
@pytest.mark.parametrize("threshold", [0.0, 0.5, 2.0, 1e9])
def test_distance_threshold(linkage, threshold):
    sk, tl = _fit_pair(_grid(d=2, side=5), "euclidean", linkage=linkage, n_clusters=None,
                       distance_threshold=threshold)
    _assert_same(sk, tl)
    assert hasattr(tl, "distances_")


@pytest.mark.parametrize("n_clusters", [1, 2, 17, 239, 240])
def test_every_number_of_clusters(n_clusters):
    """The labels' numbering: the order of _hc_cut's heap."""
    for linkage in LINKAGES:
        sk, tl = _fit_pair(_blobs(), "euclidean", linkage=linkage, n_clusters=n_clusters)
        _assert_same(sk, tl)


def test_cut_matches_hc_cut_on_many_trees():
    from twinlearn import _core
    rng = np.random.default_rng(3)
    for n in [2, 3, 7, 50]:
        X = rng.normal(size=(n, 2))
        children = skc.AgglomerativeClustering(linkage="average").fit(X).children_
        for k in range(1, n + 1):
            got = _core.agglomerative_cut(np.ascontiguousarray(children, dtype=np.int64), k, n)
            np.testing.assert_array_equal(got, _hc_cut(k, children, n))


def test_compute_full_tree_and_memory_accepted():
    X = _blobs()
    for cft in ["auto", True, False]:
        sk, tl = _fit_pair(X, "euclidean", n_clusters=4, compute_full_tree=cft, memory=None)
        _assert_same(sk, tl)


def test_fit_predict_and_numeric_mode():
    X = _blobs()
    est = AgglomerativeClustering(n_clusters=3, device="cpu")
    labels = est.fit_predict(X)
    np.testing.assert_array_equal(labels, est.labels_)
    assert est.numeric_mode_used() == "identical"


def test_thread_counts_give_the_same_tree():
    X = _blobs(n=9000, d=3)  # several chunks of the scans
    old = get_n_threads()
    try:
        out = []
        for t in [1, 2, 3]:
            set_n_threads(t)
            out.append([AgglomerativeClustering(linkage=lk, n_clusters=5, device="cpu").fit(X[:3000] if lk != "single"
                                                                                         else X).children_
                        for lk in ["average", "single"]])
        for o in out[1:]:
            for a, b in zip(out[0], o):
                np.testing.assert_array_equal(a, b)
    finally:
        set_n_threads(old)


def test_single_linkage_on_many_samples_against_sklearn():
    X = _blobs(n=9000, d=3, seed=2)
    sk, tl = _fit_pair(X, "euclidean", linkage="single", n_clusters=8)
    _assert_same(sk, tl)


# -- bad input ------------------------------------------------------------------------
def _tl(**p):
    return AgglomerativeClustering(device="cpu", **p)


def test_bad_input():
    X = _blobs(n=20)
    with pytest.raises(ValueError, match="n_clusters"):
        _tl(n_clusters=0).fit(X)
    with pytest.raises(ValueError, match="Cannot extract more clusters than samples"):
        _tl(n_clusters=21).fit(X)
    with pytest.raises(ValueError, match="Exactly one of n_clusters and distance_threshold"):
        _tl(n_clusters=2, distance_threshold=1.0).fit(X)
    with pytest.raises(ValueError, match="Exactly one of n_clusters and distance_threshold"):
        _tl(n_clusters=None).fit(X)
    with pytest.raises(ValueError, match="compute_full_tree must be True"):
        _tl(n_clusters=None, distance_threshold=1.0, compute_full_tree=False).fit(X)
    with pytest.raises(ValueError, match="Ward can only work with euclidean"):
        _tl(metric="manhattan").fit(X)
    with pytest.raises(ValueError, match="Distance matrix should be square"):
        _tl(metric="precomputed", linkage="average").fit(X)
    with pytest.raises(ValueError, match="NaN"):
        _tl().fit(np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X))
    with pytest.raises(ValueError, match="minimum of 2"):
        _tl(n_clusters=1).fit(X[:1])
    with pytest.raises(ValueError, match="zero vectors"):
        _tl(metric="cosine", linkage="average").fit(np.vstack([X, np.zeros((1, X.shape[1]))]))
    with pytest.raises(ValueError, match="Wrong shape for connectivity matrix"):
        _tl(connectivity=np.eye(19)).fit(X)
    with pytest.raises(ValueError, match="callable"):
        _tl(metric=lambda a, b: 0.0, linkage="average").fit(X)
    with pytest.raises(ValueError, match="not supported"):
        _tl(metric="chebyshev", linkage="average").fit(X)
    with pytest.raises(ValueError, match="linkage"):
        _tl(linkage="centroid").fit(X)
    D = pairwise_distances(X)
    D[0, 5] = np.inf
    with pytest.raises(ValueError):
        _tl(metric="precomputed", linkage="single").fit(D)


def test_condensed_limit_is_a_clear_error():
    est = _tl(linkage="average")
    with pytest.raises(ValueError, match=f"at most {MAX_CONDENSED_SAMPLES} samples"):
        est._check_size(MAX_CONDENSED_SAMPLES + 1)
    est._check_size(MAX_CONDENSED_SAMPLES)
    _tl(linkage="single")._check_size(10 * MAX_CONDENSED_SAMPLES)
    core = _backend.core()
    ctx = core.Context("cpu", 1, "identical", 0, 0)
    big = np.zeros((MAX_CONDENSED_SAMPLES + 1, 1))
    with pytest.raises(ValueError, match="at most"):
        core.agglomerative_tree(ctx, big, "euclidean", "ward")


# -- connectivity: scikit-learn's structured trees -----------------------------------
def _knn_graph(X, k):
    from sklearn.neighbors import kneighbors_graph

    return kneighbors_graph(X, k, include_self=False)


STRUCTURED = [(lk, m) for lk, m in CASES if m in ("euclidean", "manhattan", "cosine", "precomputed")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("linkage,metric", STRUCTURED)
def test_structured_tree_is_sklearns(linkage, metric, dtype):
    X = _blobs(n=300, dtype=dtype, seed=1)
    sk, tl = _fit_pair(X, metric, linkage=linkage, n_clusters=5, connectivity=_knn_graph(X, 6),
                       compute_distances=True)
    # float32 data: scikit-learn's paired distances are float32 (its own
    # order), twinlearn's the float64 chain rounded to float32: a few ulps
    # (cosine distances near 0 lose digits to cancellation in float32: 1e-8).
    exact = dtype == np.float64 or linkage == "ward" or metric == "precomputed"
    _assert_same(sk, tl, rtol=1e-12 if exact else 5e-7, atol=0 if exact else 1e-8)


@pytest.mark.parametrize("linkage", LINKAGES)
@pytest.mark.parametrize("n_clusters,full", [(4, "auto"), (150, "auto"), (6, False), (None, True)])
def test_structured_partial_and_full_trees(linkage, n_clusters, full):
    X = _blobs(n=400, seed=2)
    params = dict(linkage=linkage, connectivity=_knn_graph(X, 8), compute_full_tree=full)
    if n_clusters is None:
        params.update(n_clusters=None, distance_threshold=3.0)
    else:
        params.update(n_clusters=n_clusters, compute_distances=True)
    sk, tl = _fit_pair(X, "euclidean", **params)
    _assert_same(sk, tl)


@pytest.mark.parametrize("linkage", LINKAGES)
def test_structured_ties_follow_sklearns_heap(linkage):
    # Integer grids: many equal merge heights, so the merge order is decided
    # by the heap (Python's heapq algorithm, ward's tuple order) alone.
    X = _grid(n=250, d=2, side=8, seed=3)
    X = X + np.arange(len(X))[:, None] * 0.0  # keep duplicates: zero-length edges too
    sk, tl = _fit_pair(X, "euclidean", linkage=linkage, n_clusters=4, connectivity=_knn_graph(X, 5),
                       compute_distances=True)
    _assert_same(sk, tl)


@pytest.mark.parametrize("linkage", LINKAGES)
def test_several_components_are_completed_with_sklearns_warning(linkage):
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(size=(40, 2)) + off for off in (0.0, 30.0, 60.0)])
    C = _knn_graph(X, 3)
    with pytest.warns(UserWarning, match="number of connected components of the connectivity matrix is"):
        tl = _tl(linkage=linkage, n_clusters=3, connectivity=C).fit(X)
    with pytest.warns(UserWarning, match="number of connected components"):
        sk = skc.AgglomerativeClustering(linkage=linkage, n_clusters=3, connectivity=C).fit(X)
    assert tl.n_connected_components_ == sk.n_connected_components_ > 1
    np.testing.assert_array_equal(tl.children_, sk.children_)
    np.testing.assert_array_equal(tl.labels_, sk.labels_)


def test_callable_and_dense_connectivity():
    X = _blobs(n=200, seed=5)
    call = lambda A: _knn_graph(A, 7)  # noqa: E731
    sk = skc.AgglomerativeClustering(n_clusters=4, connectivity=call).fit(X)
    tl = _tl(n_clusters=4, connectivity=call).fit(X)
    np.testing.assert_array_equal(tl.children_, sk.children_)
    dense = _knn_graph(X, 7).toarray()
    sk = skc.AgglomerativeClustering(n_clusters=4, linkage="average", connectivity=dense).fit(X)
    tl = _tl(n_clusters=4, linkage="average", connectivity=dense).fit(X)
    np.testing.assert_array_equal(tl.children_, sk.children_)


def test_structured_thread_counts_and_more_clusters_than_samples():
    X = _blobs(n=300, seed=6)
    C = _knn_graph(X, 6)
    ref = None
    saved = get_n_threads()
    try:
        for t in (1, 2, 3):
            set_n_threads(t)
            est = _tl(linkage="average", n_clusters=5, connectivity=C, compute_distances=True,
                      numeric_mode="identical").fit(X)
            got = (est.children_.tobytes(), est.distances_.tobytes(), est.labels_.tobytes())
            assert ref is None or got == ref
            ref = got
    finally:
        set_n_threads(saved)
    with pytest.raises(ValueError, match="Cannot provide more clusters than samples"):
        _tl(n_clusters=301, connectivity=C).fit(X)


def _complete_tree_reference(X, C, n_clusters, heap):
    """A plain reference of the structured complete-linkage loop (manhattan
    distances) with a pluggable priority queue `heap(initial items)` (push,
    pop; items (weight, a, b))."""
    n = X.shape[0]
    C = (C + C.T).tocsr()  # symmetrized, as scikit-learn's _fix_connectivity
    A = [dict() for _ in range(2 * n)]
    first = []
    for i in range(n):
        for r in sorted(C.indices[C.indptr[i]:C.indptr[i + 1]]):
            if r != i:
                A[i][r] = float(np.abs(X[i] - X[r]).sum())
                if r < i:
                    first.append((A[i][r], i, r))
    q = heap(first)
    size = [1] * (2 * n)
    children = []
    for k in range(n, 2 * n - n_clusters):
        while True:
            w, i, j = q.pop()
            if size[i] and size[j]:
                break
        children.append((j, i))
        size[k] = size[i] + size[j]
        size[i] = size[j] = 0
        out = {c: v for c, v in A[i].items() if size[c]}
        for c, v in A[j].items():
            if size[c]:
                out[c] = max(out[c], v) if c in out else v
        for c in sorted(out):
            A[c][k] = out[c]
            q.push((out[c], k, c))
        A[k] = out
    return np.array(children)


class _Heapq:
    """Python's heapq with scikit-learn's WeightedEdge order (weight only)."""

    class _E:
        def __init__(self, t):
            self.t = t

        def __lt__(self, o):
            return self.t[0] < o.t[0]

    def __init__(self, items):
        import heapq

        self.h = [self._E(t) for t in items]
        heapq.heapify(self.h)

    def push(self, t):
        import heapq

        heapq.heappush(self.h, self._E(t))

    def pop(self):
        import heapq

        return heapq.heappop(self.h).t


class _FirstIn:
    """Another valid priority queue: equal weights leave in insertion order."""

    def __init__(self, items):
        self.h, self.count = [], 0
        for t in items:
            self.push(t)

    def push(self, t):
        import heapq

        heapq.heappush(self.h, (t[0], self.count, t))
        self.count += 1

    def pop(self):
        import heapq

        return heapq.heappop(self.h)[2]


def test_structured_ties_are_decided_as_heapq_decides_them():
    """On a tie-heavy graph the merge order depends on how the heap breaks
    ties: the tree equals scikit-learn's and the heapq reference's, and the
    fixture tells heapq's order from another valid one."""
    from twinlearn.testing import assert_separates

    # unique integer points: manhattan heights are exact and often equal
    Xg = np.unique(_grid(n=200, d=2, side=9, seed=9), axis=0)
    Cg = _knn_graph(Xg, 6)
    ours = _tl(n_clusters=3, linkage="complete", metric="l1", connectivity=Cg).fit(Xg)
    assert ours.n_connected_components_ == 1
    ref = skc.AgglomerativeClustering(n_clusters=3, linkage="complete", metric="l1", connectivity=Cg).fit(Xg)
    np.testing.assert_array_equal(ours.children_, ref.children_)

    def check(heap):
        np.testing.assert_array_equal(_complete_tree_reference(Xg, Cg, len(Xg) - len(ours.children_), heap),
                                      ours.children_)

    assert_separates(check, right=_Heapq, wrong=_FirstIn, what="the structured trees' tie order")


# -- the GPU: the same trees ----------------------------------------------------------
def _both(X, **params):
    c = AgglomerativeClustering(device="cpu", numeric_mode="identical", **params).fit(X)
    g = AgglomerativeClustering(device="cuda", numeric_mode="identical", **params).fit(X)
    np.testing.assert_array_equal(c.children_, g.children_)
    np.testing.assert_array_equal(c.labels_, g.labels_)
    if hasattr(c, "distances_"):
        np.testing.assert_array_equal(c.distances_, g.distances_)  # the same bits
    assert g.device_used().startswith("cuda") and g.numeric_mode_used() == "identical"
    return c, g


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("linkage,metric", [c for c in CASES if c[1] != "precomputed"])
def test_cpu_and_gpu_give_the_same_tree(linkage, metric, dtype):
    X = _blobs(n=1500, dtype=dtype)
    c, _ = _both(X, linkage=linkage, metric=metric, n_clusters=7, compute_distances=True)
    ref = skc.AgglomerativeClustering(linkage=linkage, metric=metric, n_clusters=7).fit(X)
    np.testing.assert_array_equal(c.children_, ref.children_)


@pytest.mark.gpu
@pytest.mark.parametrize("linkage", LINKAGES)
def test_cpu_and_gpu_same_tree_on_ties_and_many_blocks(linkage):
    _both(_grid(n=2000, d=2, side=6), linkage=linkage, n_clusters=None, distance_threshold=1.0)
    if linkage == "single":
        _both(_blobs(n=20000, d=16), linkage="single", n_clusters=10)  # many device blocks per step


@pytest.mark.gpu
def test_gpu_accepts_device_arrays():
    cp = pytest.importorskip("cupy")
    X = _blobs(n=500)
    c = AgglomerativeClustering(device="cpu", linkage="single", n_clusters=4).fit(X)
    g = AgglomerativeClustering(device="cuda", linkage="single", n_clusters=4).fit(cp.asarray(X))
    np.testing.assert_array_equal(c.children_, g.children_)


@pytest.mark.gpu
@pytest.mark.parametrize("linkage", LINKAGES)
def test_structured_tree_same_on_gpu(linkage):
    X = _blobs(n=600, seed=10)
    _both(X, linkage=linkage, n_clusters=5, connectivity=_knn_graph(X, 6), compute_distances=True)
