"""twinlearn.manifold.UMAP against umap-learn and its numeric rules.

The reference fits are few and small (umap-learn JIT-compiles on its first
call): one module-scoped pair of fits on the digits.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, make_blobs
from sklearn.manifold import trustworthiness
from sklearn.neighbors import KNeighborsClassifier

import twinlearn
from twinlearn import _core
from twinlearn.manifold import UMAP
from twinlearn.manifold._umap import (
    _epochs_per_sample,
    find_ab_params,
    fuzzy_union,
    smooth_knn_dist,
)
from twinlearn.testing import skip_without_gpu


def _knn_accuracy(E, y, seed=0):
    rs = np.random.RandomState(seed)
    idx = rs.permutation(len(y))
    tr, te = idx[: len(y) * 2 // 3], idx[len(y) * 2 // 3:]
    return KNeighborsClassifier(n_neighbors=10).fit(E[tr], y[tr]).score(E[te], y[te])


@pytest.fixture(scope="module")
def digits():
    return load_digits(return_X_y=True)


@pytest.fixture(scope="module")
def fits(digits):
    umap = pytest.importorskip("umap")
    X, y = digits
    ref = umap.UMAP(random_state=0).fit_transform(X)
    ours = UMAP(random_state=0, device="cpu").fit(X)
    return ref, ours


# -- the graph: umap-learn's rules ----------------------------------------------------
@pytest.mark.parametrize("spread,min_dist", [(1.0, 0.1), (2.0, 0.5), (1.0, 0.0)])
def test_ab_params_match_umap_learn(spread, min_dist):
    umap_ = pytest.importorskip("umap.umap_")
    a, b = find_ab_params(spread, min_dist)
    ra, rb = umap_.find_ab_params(spread, min_dist)
    np.testing.assert_allclose([a, b], [ra, rb], rtol=1e-6)


@pytest.mark.parametrize("local_connectivity", [1.0, 1.5, 0.0, 2.0])
def test_smooth_knn_dist_matches_umap_learn(local_connectivity):
    umap_ = pytest.importorskip("umap.umap_")
    rs = np.random.RandomState(0)
    d = np.sort(rs.exponential(size=(200, 10)).astype(np.float32), axis=1)
    d[:, 0] = 0.0  # the point itself
    d[:5, 1] = 0.0  # duplicates
    sigma, rho = smooth_knn_dist(d, 10.0, local_connectivity=local_connectivity)
    rsig, rrho = umap_.smooth_knn_dist(d, 10.0, local_connectivity=local_connectivity)
    np.testing.assert_allclose(rho, rrho, rtol=1e-6)
    np.testing.assert_allclose(sigma, rsig, rtol=1e-4)


def test_graph_matches_umap_learns_fuzzy_simplicial_set(digits):
    umap_ = pytest.importorskip("umap.umap_")
    X = digits[0][:400]
    est = UMAP(n_neighbors=10, n_epochs=0, random_state=0, device="cpu").fit(X)
    nn = twinlearn.neighbors.NearestNeighbors(device="cpu").fit(X)
    dist, ind = nn.kneighbors(X, n_neighbors=10)
    ref, _, _ = umap_.fuzzy_simplicial_set(X, 10, 0, "euclidean", knn_indices=ind, knn_dists=dist.astype(np.float32))
    G = est.graph_
    assert sp.issparse(G) and G.dtype == np.float32 and G.shape == (400, 400)
    diff = abs(G - ref.tocsr())
    assert diff.max() < 1e-5
    assert (G != G.T).nnz == 0  # the fuzzy union is symmetric


def test_set_op_mix_ratio_zero_is_the_intersection():
    G = sp.csr_matrix(np.array([[0, 0.5, 0], [0.25, 0, 1.0], [0, 0, 0]], dtype=np.float32))
    inter = fuzzy_union(G, 0.0).toarray()
    np.testing.assert_allclose(inter, G.toarray() * G.toarray().T)
    union = fuzzy_union(G, 1.0).toarray()
    np.testing.assert_allclose(union, G.toarray() + G.toarray().T - G.toarray() * G.toarray().T)


def test_epochs_per_sample_rule():
    eps = _epochs_per_sample(np.array([1.0, 0.5, 0.0, 0.25]), 200)
    np.testing.assert_allclose(eps, [1.0, 2.0, -1.0, 4.0])


# -- quality against umap-learn ---------------------------------------------------------
def test_trustworthiness_within_001_of_umap_learn(digits, fits):
    X, _ = digits
    ref, ours = fits
    t_ref = trustworthiness(X, ref, n_neighbors=15)
    t_ours = trustworthiness(X, ours.embedding_, n_neighbors=15)
    assert t_ours >= t_ref - 0.01, (t_ours, t_ref)


def test_knn_accuracy_within_one_point_of_umap_learn(digits, fits):
    _, y = digits
    ref, ours = fits
    assert _knn_accuracy(ours.embedding_, y) >= _knn_accuracy(ref, y) - 0.01


def test_transform_lands_where_fit_transform_puts_the_points(digits, fits):
    X, y = digits
    _, ours = fits
    E = ours.embedding_
    rs = np.random.RandomState(1)
    pick = rs.choice(len(X), 200, replace=False)
    Xn = X[pick] + rs.normal(scale=0.05, size=(200, X.shape[1]))  # near, not equal, to training points
    T = ours.transform(Xn)
    assert T.shape == (200, 2) and T.dtype == np.float32
    # each transformed point is among the 15 nearest embedded points of its source
    d_to_src = np.linalg.norm(T - E[pick], axis=1)
    d_all = np.linalg.norm(E[pick][:, None, :] - E[None, :, :], axis=2)
    kth = np.sort(d_all, axis=1)[:, 15]
    agree = np.mean(d_to_src <= kth)
    assert agree >= 0.9, agree
    # and a classifier of the training embedding labels them as their sources
    clf = KNeighborsClassifier(n_neighbors=10).fit(E, y)
    assert clf.score(T, y[pick]) >= 0.9


def test_transform_of_held_out_samples(digits):
    X, y = digits
    rs = np.random.RandomState(0)
    idx = rs.permutation(len(X))
    tr, te = idx[:1400], idx[1400:]
    est = UMAP(n_epochs=200, random_state=0, device="cpu").fit(X[tr])
    T = est.transform(X[te])
    acc = KNeighborsClassifier(n_neighbors=10).fit(est.embedding_, y[tr]).score(T, y[te])
    assert acc >= 0.9, acc
    np.testing.assert_array_equal(est.transform(X[tr]), est.embedding_)  # the training data itself


# -- numeric rules: the same bits run to run, at any thread count -------------------------
@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=300, n_features=8, centers=4, random_state=0)
    return X, y


def test_same_bits_run_to_run_and_seed_matters(blobs):
    X, _ = blobs
    kw = dict(n_neighbors=10, n_epochs=60, random_state=3, device="cpu")
    a = UMAP(**kw).fit_transform(X)
    b = UMAP(**kw).fit_transform(X)
    assert a.tobytes() == b.tobytes()
    c = UMAP(**{**kw, "random_state": 4}).fit_transform(X)
    assert a.tobytes() != c.tobytes()  # the check can fail: the seed reaches the layout


@pytest.mark.parametrize("init", ["spectral", "random"])
def test_same_bits_at_any_thread_count(blobs, init):
    X, _ = blobs
    out = []
    for nt in (1, 2, 3):
        with twinlearn.config_context(n_threads=nt):
            est = UMAP(n_neighbors=10, n_epochs=60, init=init, random_state=0, device="cpu").fit(X)
            out.append((est.embedding_.tobytes(), est.transform(X[:20] + 0.01).tobytes()))
    assert out[0] == out[1] == out[2]


def _ref_layout(head, indptr, indices, eps, a, b, gamma, alpha0, rate, n_epochs, seed, other=True):
    """The synchronous scheme of umap.hpp in NumPy float64 (fit: both ends move)."""
    y = head.astype(np.float64).copy()
    n = y.shape[0]
    ne = indices.shape[0]
    rows = np.repeat(np.arange(n), np.diff(indptr))
    nxt, nxt_neg = eps.copy(), eps / rate
    ctx = _core.Context("cpu", 1, "identical", 0, 0)
    clip = lambda v: np.clip(v, -4.0, 4.0)  # noqa: E731
    for ep in range(n_epochs):
        alpha = alpha0 * (1.0 - ep / n_epochs)
        delta = np.zeros_like(y)
        for e in range(ne):
            if not (eps[e] > 0 and nxt[e] <= ep):
                continue
            nxt[e] += eps[e]
            nn = int(max((ep - nxt_neg[e]) / (eps[e] / rate), 0))
            nxt_neg[e] += nn * eps[e] / rate
            i, j = rows[e], indices[e]
            diff = y[i] - y[j]
            d2 = diff @ diff
            c = -2 * a * b * d2 ** (b - 1) / (1 + a * d2 ** b) if d2 > 0 else 0.0
            g = clip(c * diff) * alpha
            delta[i] += g
            if other:
                delta[j] -= g
            for k in range(nn):
                stream = (3 << 62) | (ep << 24) | k
                t = int(_core.rng_integers(ctx, seed, stream, e, 1, n)[0])
                diff = y[i] - y[t]
                d2 = diff @ diff
                if d2 > 0:
                    r = 2 * gamma * b / ((0.001 + d2) * (1 + a * d2 ** b))
                    delta[i] += clip(r * diff) * alpha
        y += delta
    return y


def test_layout_is_the_documented_synchronous_scheme():
    rs = np.random.RandomState(0)
    n = 30
    W = sp.random(n, n, density=0.2, random_state=rs, dtype=np.float64)
    W = (W + W.T).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    W.sort_indices()
    eps = _epochs_per_sample(W.data, 20)
    head = (rs.uniform(0, 10, size=(n, 2))).astype(np.float32)
    indptr, indices = W.indptr.astype(np.int64), W.indices.astype(np.int64)
    redges = np.argsort(indices, kind="stable").astype(np.int64)
    rindptr = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=n))]).astype(np.int64)
    a, b = 1.577, 0.895
    ctx = _core.Context("cpu", 2, "identical", 0, 0)
    p = _core.UmapLayoutParams()
    p.a, p.b, p.gamma, p.initial_alpha, p.negative_sample_rate, p.n_epochs, p.seed, p.move_other = (
        a, b, 1.0, 1.0, 5.0, 5, 7, True)
    got = head.copy()
    _core.umap_layout(ctx, got, None, indptr, indices, eps, rindptr, redges, p)
    # Five epochs (later ones amplify float32 against float64 rounding, the layout being chaotic).
    want = _ref_layout(head, indptr, indices, eps, np.float32(a), np.float32(b), 1.0, 1.0, 5.0, 5, 7)
    assert np.abs(got - head).max() > 1.0  # the points moved
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    # The comparison separates: the scheme without the other end's share is far from the core's result.
    lone = _ref_layout(head, indptr, indices, eps, np.float32(a), np.float32(b), 1.0, 1.0, 5.0, 5, 7, other=False)
    assert np.abs(got - lone).max() > 0.1


def test_layout_rejects_a_malformed_graph():
    ctx = _core.Context("cpu", 1, "identical", 0, 0)
    p = _core.UmapLayoutParams()
    p.move_other = False
    head = np.zeros((2, 2), dtype=np.float32)
    tail = np.zeros((3, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="outside"):
        _core.umap_layout(ctx, head, tail, np.array([0, 1, 2]), np.array([0, 5]), np.ones(2), None, None, p)


# -- parameters ----------------------------------------------------------------------------
@pytest.mark.parametrize("metric,kw", [("euclidean", None), ("manhattan", None), ("cosine", None),
                                       ("correlation", None), ("chebyshev", None), ("minkowski", {"p": 3})])
def test_metrics(blobs, metric, kw):
    X, y = blobs
    E = UMAP(n_neighbors=10, n_epochs=50, metric=metric, metric_kwds=kw, random_state=0,
             device="cpu").fit_transform(X)
    assert E.shape == (300, 2) and np.isfinite(E).all()
    assert _knn_accuracy(E, y) > 0.9


def test_correlation_is_cosine_of_centred_rows(blobs):
    X, _ = blobs
    a = UMAP(n_neighbors=10, n_epochs=20, metric="correlation", random_state=0, device="cpu").fit(X)
    Xc = X - X.mean(axis=1, keepdims=True)
    b = UMAP(n_neighbors=10, n_epochs=20, metric="cosine", random_state=0, device="cpu").fit(Xc)
    assert abs(a.graph_ - b.graph_).max() == 0


@pytest.mark.parametrize("init", ["pca", "random", "array"])
@pytest.mark.parametrize("n_components", [2, 3, 5])
def test_inits_and_dimensions(blobs, init, n_components):
    X, y = blobs
    if init == "array":
        init = np.random.RandomState(0).normal(size=(300, n_components))
    E = UMAP(n_neighbors=10, n_components=n_components, n_epochs=50, init=init, random_state=0,
             device="cpu").fit_transform(X)
    assert E.shape == (300, n_components) and E.dtype == np.float32
    assert _knn_accuracy(E, y) > 0.9


def test_supervised_fit_separates_the_classes():
    X, y = make_blobs(n_samples=300, n_features=8, centers=3, cluster_std=6.0, random_state=0)
    base = UMAP(n_neighbors=10, n_epochs=100, random_state=0, device="cpu").fit(X)
    sup = UMAP(n_neighbors=10, n_epochs=100, random_state=0, device="cpu").fit(X, y)
    assert _knn_accuracy(sup.embedding_, y) > _knn_accuracy(base.embedding_, y)
    ypart = y.copy()
    ypart[::2] = -1  # unlabelled
    part = UMAP(n_neighbors=10, n_epochs=100, random_state=0, device="cpu").fit(X, ypart)
    assert np.isfinite(part.embedding_).all()
    # far labels cut the edges between classes (target_weight 1: exp(-1e12) = 0)
    full = UMAP(n_neighbors=10, n_epochs=0, target_weight=1.0, random_state=0, device="cpu").fit(X, y)
    g = full.graph_.tocoo()
    assert np.all(y[g.row] == y[g.col])


@pytest.mark.parametrize("params,match", [
    (dict(metric="hamming"), "metric"),
    (dict(target_metric="l1"), "target_metric"),
    (dict(metric="minkowski", metric_kwds={"p": 0.5}), "p >= 1"),
    (dict(metric_kwds={"w": 1}), "metric_kwds"),
    (dict(init=np.zeros((3, 2))), "init array"),
])
def test_unsupported_parameters_raise(blobs, params, match):
    X, y = blobs
    with pytest.raises(ValueError, match=match):
        UMAP(n_epochs=5, device="cpu", **params).fit(X, y if "target_metric" in params else None)


def test_bad_input_raises():
    with pytest.raises(ValueError):
        UMAP(device="cpu").fit(np.array([[0.0, np.nan], [1.0, 2.0], [3.0, 4.0]]))
    with pytest.raises(ValueError):
        UMAP(device="cpu").fit(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="y must have shape"):
        UMAP(n_epochs=5, device="cpu").fit(np.random.RandomState(0).normal(size=(30, 3)), np.zeros(5))


def test_top_level_export():
    assert twinlearn.UMAP is UMAP


# -- GPU ---------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("init", ["spectral", "random"])
def test_same_bits_on_cpu_and_gpu(blobs, init):
    skip_without_gpu()
    X, _ = blobs
    kw = dict(n_neighbors=10, n_epochs=60, init=init, random_state=0, numeric_mode="identical")
    cpu = UMAP(device="cpu", **kw).fit(X)
    gpu = UMAP(device="cuda", **kw).fit(X)
    assert gpu.device_used() == "cuda:0"
    assert abs(cpu.graph_ - gpu.graph_).max() == 0
    assert cpu.embedding_.tobytes() == gpu.embedding_.tobytes()
    Xn = X[:40] + 0.01
    assert cpu.transform(Xn).tobytes() == gpu.transform(Xn).tobytes()


@pytest.mark.gpu
def test_gpu_run_to_run(blobs):
    skip_without_gpu()
    X, _ = blobs
    kw = dict(n_neighbors=10, n_epochs=60, random_state=0, device="cuda")
    assert UMAP(**kw).fit_transform(X).tobytes() == UMAP(**kw).fit_transform(X).tobytes()
