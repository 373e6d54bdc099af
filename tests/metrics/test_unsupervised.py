"""Silhouette, Calinski-Harabasz, Davies-Bouldin and trustworthiness."""

import numpy as np
import pytest
import sklearn.metrics as skm
from scipy import sparse as sp
from sklearn.manifold import trustworthiness as sk_trustworthiness

import twinlearn.metrics as tm
from twinlearn.metrics import _unsupervised
from twinlearn.testing import assert_separates, bits, to_device

METRICS = [("euclidean", {}), ("sqeuclidean", {}), ("manhattan", {}), ("cosine", {}), ("chebyshev", {}),
           ("minkowski", {"p": 3})]
#: scikit-learn's float32 distances are rounded from float64 ones (upcast);
#: twinlearn's are computed in float32: agreement to about 1e-5.
TOL = {np.float64: 1e-9, np.float32: 1e-4}


def blobs(n=500, d=6, k=5, seed=0, dtype=np.float64, offset=0.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d)) * 3
    labels = rng.integers(0, k, n)
    X = centers[labels] + rng.normal(size=(n, d)) + offset
    return X.astype(dtype), labels


@pytest.fixture
def tiles(monkeypatch):
    def set_rows(t):
        monkeypatch.setenv(_unsupervised.TILE_ENV, str(t))
    return set_rows


@pytest.mark.parametrize("metric,kw", METRICS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_silhouette_matches_scikit_learn(device, metric, kw, dtype):
    X, y = blobs(dtype=dtype, offset=20.0)
    ours = tm.silhouette_samples(X, y, metric=metric, device=device, **kw)
    assert ours.dtype == dtype and ours.shape == (X.shape[0],)
    np.testing.assert_allclose(ours, skm.silhouette_samples(X, y, metric=metric, **kw), atol=TOL[dtype])
    score = tm.silhouette_score(X, y, metric=metric, device=device, **kw)
    assert isinstance(score, float)
    assert score == pytest.approx(skm.silhouette_score(X, y, metric=metric, **kw), abs=TOL[dtype])


def test_silhouette_precomputed_and_sampled(device):
    X, y = blobs(n=300)
    D = skm.pairwise_distances(X)
    np.testing.assert_allclose(tm.silhouette_samples(D, y, metric="precomputed", device=device),
                               skm.silhouette_samples(D, y, metric="precomputed"), atol=1e-12)
    for metric, data in (("euclidean", X), ("precomputed", D)):
        ours = tm.silhouette_score(data, y, metric=metric, sample_size=120, random_state=3, device=device)
        ref = skm.silhouette_score(data, y, metric=metric, sample_size=120, random_state=3)
        assert ours == pytest.approx(ref, abs=1e-12)  # the same subset as scikit-learn's
    ints = [[0, 1, 2], [1, 0, 1], [2, 1, 0]]
    assert tm.silhouette_score(ints, [0, 0, 1], metric="precomputed", device=device) == pytest.approx(1 / 6)


def test_cluster_of_one_and_identical_samples():
    X = [[0.0], [1.0], [1.0], [2.0], [3.0], [3.0]]
    np.testing.assert_array_equal(tm.silhouette_samples(X, np.array([0, 1, 1, 1, 2, 2])), [0, 0.5, 0.5, 0, 1, 1])


@pytest.mark.parametrize("tile", [1, 7, 64, 10_000])
def test_tiles_do_not_change_the_bits(tiles, tile):
    X, y = blobs(n=301, dtype=np.float32)
    whole = tm.silhouette_samples(X, y, device="cpu")
    tiles(tile)
    assert bits(tm.silhouette_samples(X, y, device="cpu")) == bits(whole)
    D = skm.pairwise_distances(X.astype(np.float64))
    tiles(10_000)
    ref = tm.silhouette_samples(D, y, metric="precomputed", device="cpu")
    tiles(tile)
    assert bits(tm.silhouette_samples(D, y, metric="precomputed", device="cpu")) == bits(ref)


def test_silhouette_never_holds_the_whole_distance_matrix(tiles, monkeypatch):
    """Separating: the distance blocks allocated are n x tile; with one tile
    of all rows (the n x n matrix) the same check fails."""
    X, y = blobs(n=200)
    shapes = []
    real = _unsupervised._Work.device_empty

    def spy(self, shape):
        shapes.append(shape)
        return real(self, shape)

    monkeypatch.setattr(_unsupervised._Work, "device_empty", spy)

    def check(tile):
        shapes.clear()
        tiles(tile)
        tm.silhouette_samples(X, y, device="cpu")
        assert len(shapes) == -(-200 // 16) and max(s[1] for s in shapes) <= 16, shapes

    assert_separates(check, right=16, wrong=200, what="tile memory")


def test_tile_rows_default_budget(monkeypatch):
    monkeypatch.delenv(_unsupervised.TILE_ENV, raising=False)
    t = _unsupervised.tile_rows(100_000, 100_000, 4, "cuda:0")
    assert t * 100_000 * 4 <= _unsupervised.TILE_BYTES["cuda"] and t > 1
    assert _unsupervised.tile_rows(10, 10, 8, "cpu") == 10
    monkeypatch.setenv(_unsupervised.TILE_ENV, "0")
    with pytest.raises(ValueError, match="positive"):
        _unsupervised.tile_rows(10, 10, 8, "cpu")


def test_silhouette_bad_input():
    X, y = blobs(n=20)
    msg = r"Number of labels is %d\. Valid values are 2 to n_samples - 1 \(inclusive\)"
    with pytest.raises(ValueError, match=msg % 20):
        tm.silhouette_score(X, np.arange(20))
    with pytest.raises(ValueError, match=msg % 1):
        tm.silhouette_score(X, np.zeros(20))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        tm.silhouette_samples(X, y[:-1])
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        tm.silhouette_samples(Xn, y)
    D = skm.pairwise_distances(X)
    with pytest.raises(ValueError, match="Precomputed metric requires shape"):
        tm.silhouette_samples(D[:, :5], y, metric="precomputed")
    D[2, 2] = np.finfo(np.float64).eps * 1000
    with pytest.raises(ValueError, match="contains non-zero"):
        tm.silhouette_samples(D, y, metric="precomputed")
    D[2, 2] = np.finfo(np.float64).eps * 10  # small diagonal values are accepted, as in scikit-learn
    tm.silhouette_samples(D, y, metric="precomputed")
    D[2, 2], D[1, 4] = 0.0, -1.0
    with pytest.raises(ValueError, match="Negative values"):
        tm.silhouette_samples(D, y, metric="precomputed")
    with pytest.raises(ValueError, match="sample_size"):
        tm.silhouette_score(X, y, sample_size=0)


def test_silhouette_overflow_is_an_error():
    X = np.array([[0.0], [1.0], [3e38], [3.1e38]], dtype=np.float32)
    with pytest.raises(ValueError, match="too large"):
        tm.silhouette_samples(np.hstack([X, X]), [0, 0, 1, 1], metric="sqeuclidean")


def test_silhouette_falls_back_to_scikit_learn():
    X, y = blobs(n=80)
    Xs = sp.csr_matrix(X)
    np.testing.assert_array_equal(tm.silhouette_samples(Xs, y), skm.silhouette_samples(Xs, y))
    np.testing.assert_array_equal(tm.silhouette_samples(X, y, metric="hamming"),
                                  skm.silhouette_samples(X, y, metric="hamming"))
    D = sp.csr_matrix(skm.pairwise_distances(X))  # a sparse precomputed matrix runs here, made dense
    np.testing.assert_allclose(tm.silhouette_samples(D, y, metric="precomputed"),
                               skm.silhouette_samples(D.toarray(), y, metric="precomputed"), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_calinski_harabasz_and_davies_bouldin_match(device, dtype):
    X, y = blobs(n=1000, dtype=dtype, offset=10.0)
    y = y * 2 + 5  # any labels
    rtol = 1e-9 if dtype == np.float64 else 1e-4
    ch = tm.calinski_harabasz_score(X, y, device=device)
    assert isinstance(ch, float) and ch == pytest.approx(skm.calinski_harabasz_score(X, y), rel=rtol)
    db = tm.davies_bouldin_score(X, y, device=device)
    assert isinstance(db, float) and db == pytest.approx(skm.davies_bouldin_score(X, y), rel=rtol)


def test_calinski_harabasz_and_davies_bouldin_special_values():
    assert tm.calinski_harabasz_score(np.ones((10, 2)), [0] * 5 + [1] * 5) == 1.0
    assert tm.calinski_harabasz_score([[-1, -1], [1, 1]] * 10, [0] * 10 + [1] * 10) == 0.0
    assert tm.davies_bouldin_score(np.ones((10, 2)), [0] * 5 + [1] * 5) == 0.0
    assert tm.davies_bouldin_score([[-1, -1], [1, 1]] * 10, [0] * 10 + [1] * 10) == 0.0
    X, y = [[0, 0], [2, 2], [3, 3], [5, 5]], [0, 0, 1, 2]
    assert tm.davies_bouldin_score(X, y) == pytest.approx(skm.davies_bouldin_score(X, y), rel=1e-12)
    for f in (tm.calinski_harabasz_score, tm.davies_bouldin_score):
        rng = np.random.RandomState(0)
        with pytest.raises(ValueError, match="Number of labels is"):
            f(rng.rand(10, 2), np.zeros(10))
        with pytest.raises(ValueError, match="Number of labels is"):
            f(rng.rand(10, 2), np.arange(10))
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            f(rng.rand(10, 2), np.arange(9) % 2)
        with pytest.raises(ValueError, match="infinity"):
            f(np.array([[np.inf, 0.0]] * 4), [0, 0, 1, 1])
        with pytest.raises(ValueError, match="Input y contains NaN"):
            f(rng.rand(4, 2), [0.0, 1.0, np.nan, 1.0])


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
def test_trustworthiness_matches_scikit_learn(device, metric, tiles):
    X, _ = blobs(n=400, d=8)
    E = X[:, :2] + np.random.default_rng(1).normal(size=(400, 2)) * 0.3
    ref = sk_trustworthiness(X, E, n_neighbors=7, metric=metric)
    assert tm.trustworthiness(X, E, n_neighbors=7, metric=metric, device=device) == pytest.approx(ref, abs=1e-12)
    tiles(13)
    assert tm.trustworthiness(X, E, n_neighbors=7, metric=metric, device=device) == pytest.approx(ref, abs=1e-12)
    D = skm.pairwise_distances(X, metric=metric)
    assert tm.trustworthiness(D, E, n_neighbors=7, metric="precomputed", device=device) == pytest.approx(
        sk_trustworthiness(D, E, n_neighbors=7, metric="precomputed"), abs=1e-12)


def test_trustworthiness_ties_rank_by_index(monkeypatch):
    """Separating: with tied distances the rank rule matters. Ranks by
    (distance, index), the embedding's neighbours' own rule, score an
    embedding equal to X as 1.0; ranking a tie after all its equals does not."""
    X = np.repeat(np.arange(6.0), 2)[:, None] + np.repeat([[0.0], [10.0]], 6, axis=0)
    right = _unsupervised.ranks

    def ties_last(D, d, j, columns):
        return np.count_nonzero(D <= d, axis=1)

    def check(rule):
        monkeypatch.setattr(_unsupervised, "ranks", rule)
        assert tm.trustworthiness(X, X, n_neighbors=3, device="cpu") == 1.0

    assert_separates(check, right=right, wrong=ties_last, what="tie ranks")


def test_trustworthiness_bad_input():
    X, _ = blobs(n=10)
    with pytest.raises(ValueError, match=r"n_neighbors \(5\) should be less than n_samples / 2 \(5.0\)"):
        tm.trustworthiness(X, X[:, :2], n_neighbors=5)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        tm.trustworthiness(X, X[:9, :2], n_neighbors=2)
    with pytest.raises(ValueError, match="n_neighbors"):
        tm.trustworthiness(X, X[:, :2], n_neighbors=0)


@pytest.mark.gpu
@pytest.mark.parametrize("metric,kw", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_and_gpu_give_identical_bits(metric, kw, dtype, tiles):
    X, y = blobs(n=1031, d=37, dtype=dtype, offset=5.0)
    tiles(97)  # several tiles, the last one short
    run = dict(metric=metric, numeric_mode="identical", **kw)
    c = tm.silhouette_samples(X, y, device="cpu", **run)
    g = tm.silhouette_samples(X, y, device="cuda", **run)
    assert bits(c) == bits(g)
    assert bits(tm.silhouette_score(X, y, device="cpu", **run)) == bits(tm.silhouette_score(X, y, device="cuda",
                                                                                             **run))
    if not kw:
        E = X[:, :3]
        assert bits(tm.trustworthiness(X, E, metric=metric, device="cpu", numeric_mode="identical")) == bits(
            tm.trustworthiness(X, E, metric=metric, device="cuda", numeric_mode="identical"))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_and_gpu_identical_dispersion_scores(dtype):
    X, y = blobs(n=5003, d=19, k=9, dtype=dtype, offset=3.0)
    for f in (tm.calinski_harabasz_score, tm.davies_bouldin_score):
        assert bits(f(X, y, device="cpu", numeric_mode="identical")) == bits(
            f(X, y, device="cuda", numeric_mode="identical"))


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_device_arrays_in_and_out(lib):
    X, y = blobs(n=500, dtype=np.float32)
    dX = to_device(lib, X)
    c = tm.silhouette_samples(X, y, device="cpu", numeric_mode="identical")
    g = tm.silhouette_samples(dX, to_device(lib, y), device="cuda", numeric_mode="identical")
    assert type(g) is type(dX) and bits(g) == bits(c)
    D = skm.pairwise_distances(X)
    gD = tm.silhouette_samples(to_device(lib, D), y, metric="precomputed", device="cuda", numeric_mode="identical")
    assert bits(gD) == bits(tm.silhouette_samples(D, y, metric="precomputed", device="cpu",
                                                  numeric_mode="identical"))
