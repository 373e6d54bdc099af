"""Nearest neighbours in fast mode on a GPU: the dot products on the tensor
cores with split operands (3xTF32). No bit promise, float accuracy: every
returned neighbour is within float rounding of the true k nearest."""

import numpy as np
import pytest

from twinlearn.neighbors import NearestNeighbors

pytestmark = pytest.mark.gpu


def _exact_sq(Q, X):
    Q, X = Q.astype(np.float64), X.astype(np.float64)
    return (Q**2).sum(1)[:, None] + (X**2).sum(1)[None, :] - 2 * Q @ X.T


@pytest.mark.parametrize(
    "metric,kernel,chunk_bytes",
    [("euclidean", None, None), ("sqeuclidean", None, None), ("euclidean", None, 1 << 20),
     ("euclidean", "0", 1 << 20), ("sqeuclidean", "wmma", None), ("euclidean", "wmma", None)],
)
def test_fast_search_returns_the_nearest_to_float_accuracy(metric, kernel, chunk_bytes, monkeypatch):
    # Both fast kernels: the cuBLAS GEMMs (default), there also with 1 MiB
    # blocks of dot products: 98 index chunks of 1024 rows, the last one of
    # 675 (not a multiple of 4: the selection's scalar tail), the selection
    # on the second stream or, kernel "0", TWINLEARN_FAST_PIPELINE=0, on the
    # first; and the fused tensor-core search (TWINLEARN_KNN_FAST_KERNEL=wmma;
    # 100 003 index rows leave a partial last tile).
    if kernel == "0":
        monkeypatch.setenv("TWINLEARN_FAST_PIPELINE", "0")
    elif kernel is not None:
        monkeypatch.setenv("TWINLEARN_KNN_FAST_KERNEL", kernel)
    if chunk_bytes is not None:
        monkeypatch.setenv("TWINLEARN_FAST_CHUNK_BYTES", str(chunk_bytes))
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (100_003, 24)).astype(np.float32)
    Q = rng.uniform(-1, 1, (300, 24)).astype(np.float32)
    k = 10
    nn = NearestNeighbors(n_neighbors=k, metric=metric, device="cuda", numeric_mode="fast").fit(X)
    assert nn.numeric_mode_used() == "fast"
    dist, ind = nn.kneighbors(Q)
    D = _exact_sq(Q, X)
    kth = np.sort(D, axis=1)[:, k - 1]
    scale = (Q.astype(np.float64) ** 2).sum(1) + (X.astype(np.float64) ** 2).sum(1).max()
    got = D[np.arange(Q.shape[0])[:, None], ind]
    assert np.all(got <= (kth + 2e-5 * scale)[:, None])
    assert np.all(np.diff(dist, axis=1) >= 0)
    assert np.all((ind >= 0) & (ind < X.shape[0]))
    assert all(len(set(r)) == k for r in ind)
    ref = NearestNeighbors(n_neighbors=k, metric=metric, device="cuda", numeric_mode="identical").fit(X)
    rd, ri = ref.kneighbors(Q)
    assert np.mean(ri == ind) > 0.99
    np.testing.assert_allclose(dist, rd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kernel,chunk_bytes", [(None, None), (None, 1 << 20), ("wmma", None)])
def test_fast_cosine_search_returns_the_nearest_to_float_accuracy(kernel, chunk_bytes, monkeypatch):
    # Cosine takes the general ranking (rank_value), not the squared-distance
    # FMA, in both fast kernels.
    if kernel is not None:
        monkeypatch.setenv("TWINLEARN_KNN_FAST_KERNEL", kernel)
    if chunk_bytes is not None:
        monkeypatch.setenv("TWINLEARN_FAST_CHUNK_BYTES", str(chunk_bytes))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(70_001, 16)).astype(np.float32)
    Q = rng.normal(size=(200, 16)).astype(np.float32)
    k = 5
    nn = NearestNeighbors(n_neighbors=k, metric="cosine", device="cuda", numeric_mode="fast").fit(X)
    assert nn.numeric_mode_used() == "fast"
    dist, ind = nn.kneighbors(Q)
    Xn = X.astype(np.float64) / np.linalg.norm(X.astype(np.float64), axis=1, keepdims=True)
    Qn = Q.astype(np.float64) / np.linalg.norm(Q.astype(np.float64), axis=1, keepdims=True)
    D = 1.0 - Qn @ Xn.T
    kth = np.sort(D, axis=1)[:, k - 1]
    got = D[np.arange(Q.shape[0])[:, None], ind]
    assert np.all(got <= (kth + 1e-5)[:, None])
    np.testing.assert_allclose(dist, got, atol=1e-5)
    assert all(len(set(r)) == k for r in ind)


def test_fast_search_on_duplicates_orders_ties_by_index():
    # Every index row appears twice: equal distances, lowest index first.
    rng = np.random.default_rng(1)
    base = rng.normal(size=(40_000, 8)).astype(np.float32)
    X = np.vstack([base, base])
    Q = base[:50] + np.float32(0.01)
    nn = NearestNeighbors(n_neighbors=4, device="cuda", numeric_mode="fast").fit(X)
    _, ind = nn.kneighbors(Q)
    for r in ind:
        for a, b in zip(r[0::2], r[1::2]):
            assert b == a + 40_000


def test_fast_mode_small_index_keeps_the_canonical_search():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(5000, 16)).astype(np.float32)
    Q = rng.normal(size=(100, 16)).astype(np.float32)
    fast = NearestNeighbors(n_neighbors=5, device="cuda", numeric_mode="fast").fit(X)
    cpu = NearestNeighbors(n_neighbors=5, device="cpu", numeric_mode="identical").fit(X)
    assert fast.numeric_mode_used() == "identical"
    for a, b in zip(fast.kneighbors(Q), cpu.kneighbors(Q)):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "minkowski"])
def test_fast_mode_keeps_the_exact_search_for_other_metrics(metric):
    # Only the dot-product metrics have a tensor-core search: the others run
    # the exact kernel in fast mode and say so (the same bits as the CPU).
    rng = np.random.default_rng(4)
    X = rng.normal(size=(70_000, 6)).astype(np.float32)
    Q = rng.normal(size=(50, 6)).astype(np.float32)
    kw = {"p": 3} if metric == "minkowski" else {}
    fast = NearestNeighbors(n_neighbors=3, metric=metric, device="cuda", numeric_mode="fast", **kw).fit(X)
    cpu = NearestNeighbors(n_neighbors=3, metric=metric, device="cpu", numeric_mode="identical", **kw).fit(X)
    assert fast.numeric_mode_used() == "identical"
    for a, b in zip(fast.kneighbors(Q), cpu.kneighbors(Q)):
        assert a.tobytes() == b.tobytes()


def test_overlapped_selection_gives_the_lists_of_the_serial_one(monkeypatch):
    # The selection of each chunk runs on a second stream beside the next
    # chunk's GEMM, two dot-product blocks in turn. The same GEMMs and the
    # same selections in the same order: the bits of the serial run
    # (TWINLEARN_FAST_PIPELINE=0). 1 MiB blocks: 98 chunks, each block reused
    # 49 times, so a GEMM that overwrote a block still being read would
    # change the lists.
    monkeypatch.setenv("TWINLEARN_FAST_CHUNK_BYTES", str(1 << 20))
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100_003, 32)).astype(np.float32)
    Q = rng.normal(size=(300, 32)).astype(np.float32)
    out = []
    for pipeline in ("1", "0"):
        monkeypatch.setenv("TWINLEARN_FAST_PIPELINE", pipeline)
        nn = NearestNeighbors(n_neighbors=16, device="cuda", numeric_mode="fast").fit(X)
        out.append(nn.kneighbors(Q))
    assert out[0][1].tobytes() == out[1][1].tobytes()
    assert out[0][0].tobytes() == out[1][0].tobytes()
