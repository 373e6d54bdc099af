"""The certified nearest-neighbour search on a GPU (identical and
deterministic modes, float32, the (squared) Euclidean metrics, an index of
65 536 rows or more, up to 128 features and k <= 64): fast mode's
tensor-core search keeps more candidates than asked, the canonical chains of
those candidates decide the certified queries, and the other queries go
through the canonical kernel. The same bits as the canonical kernel over
every query (TWINLEARN_KNN_CERTIFIED=0) and as the CPU."""

import numpy as np
import pytest

from twinlearn.neighbors import NearestNeighbors
from twinlearn.testing import bits

pytestmark = pytest.mark.gpu


def case_data(case, rng):
    d = 100 if case == "d100" else 24
    X = rng.uniform(-1, 1, (100_003, d)).astype(np.float32)
    Q = rng.uniform(-1, 1, (300, d)).astype(np.float32)
    if case == "duplicates":  # every index row twice: equal distances everywhere, lowest index first
        X = np.vstack([X[:50_000], X[:50_000]])
    elif case == "queries_on_rows":  # distances 0, clamped
        Q = X[:300].copy()
    elif case == "near_ties":  # clusters of 8 rows a rounding apart: ties decided by the last bits
        base = rng.uniform(-1, 1, (9_000, d))
        X = (np.repeat(base, 8, axis=0) * (1 + 1e-7 * rng.uniform(-1, 1, (72_000, 1)))).astype(np.float32)
        Q = (base[:300] + 0.01 * rng.normal(size=(300, d))).astype(np.float32)
    elif case == "far_from_origin":  # large norms against the distances: most queries left to the canonical kernel
        X += np.float32(300.0)
        Q += np.float32(300.0)
    return X, Q


@pytest.mark.parametrize(
    "case,metric,k",
    [
        ("uniform", "euclidean", 10),
        ("uniform", "sqeuclidean", 10),
        ("uniform", "euclidean", 1),
        ("uniform", "euclidean", 64),  # the largest certified k: lists of 128
        ("uniform", "euclidean", 65),  # past it: the canonical kernel
        ("duplicates", "euclidean", 5),
        ("queries_on_rows", "sqeuclidean", 7),
        ("near_ties", "euclidean", 10),
        ("far_from_origin", "euclidean", 10),
        ("d100", "euclidean", 10),
    ],
)
def test_certified_search_gives_the_canonical_bits(case, metric, k, monkeypatch):
    X, Q = case_data(case, np.random.default_rng(7))
    kw = dict(n_neighbors=k, metric=metric, numeric_mode="identical")
    cert = NearestNeighbors(device="cuda", **kw).fit(X)
    dg, ig = cert.kneighbors(Q)
    assert cert.numeric_mode_used() == "identical"
    monkeypatch.setenv("TWINLEARN_KNN_CERTIFIED", "0")
    dk, ik = NearestNeighbors(device="cuda", **kw).fit(X).kneighbors(Q)
    dc, ic = NearestNeighbors(device="cpu", **kw).fit(X).kneighbors(Q)
    for d, i in ((dk, ik), (dc, ic)):
        assert bits(i) == bits(ig)
        assert bits(d) == bits(dg)


def test_deterministic_mode_takes_the_same_search():
    X, Q = case_data("uniform", np.random.default_rng(8))
    a = NearestNeighbors(n_neighbors=10, device="cuda", numeric_mode="deterministic").fit(X).kneighbors(Q)
    b = NearestNeighbors(n_neighbors=10, device="cpu", numeric_mode="identical").fit(X).kneighbors(Q)
    for x, y in zip(a, b):
        assert bits(x) == bits(y)
