"""KMeans in fast mode on a GPU: the assignment's dot products on the tensor
cores with split operands (3xTF32). No bit promise, float accuracy: each
label is a nearest center up to float rounding."""

import numpy as np
import pytest

from twinlearn.cluster import KMeans

pytestmark = pytest.mark.gpu


def _uniform(n=200_000, d=32, k=64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (n, d)).astype(np.float32), rng.uniform(-1, 1, (k, d)).astype(np.float32)


def _blobs(n=150_000, k=32, d=16, seed=1):
    """Separated blobs and starting centers near theirs."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=8.0, size=(k, d))
    X = (centers[rng.integers(0, k, n)] + rng.normal(size=(n, d))).astype(np.float32)
    init = (centers + rng.normal(scale=0.5, size=centers.shape)).astype(np.float32)
    return X, init


def _exact_sq_dist(X, C):
    X, C = X.astype(np.float64), C.astype(np.float64)
    return (X**2).sum(1)[:, None] + (C**2).sum(1)[None, :] - 2 * X @ C.T


@pytest.mark.parametrize(
    "k,d,env",
    [
        (64, 32, {}),
        (61, 37, {}),
        (61, 37, {"TWINLEARN_KMEANS_MMA_CHUNK": "16"}),
        (61, 100, {}),
        (64, 32, {"TWINLEARN_KMEANS_FAST_KERNEL": "gemm"}),
        (61, 37, {"TWINLEARN_KMEANS_FAST_KERNEL": "gemm", "TWINLEARN_FAST_CHUNK_BYTES": str(1 << 20)}),
        (64, 32, {"TWINLEARN_KMEANS_FAST_KERNEL": "wmma"}),
        (61, 37, {"TWINLEARN_KMEANS_FAST_KERNEL": "wmma"}),
    ],
)
def test_fast_assignment_is_a_nearest_center_to_float_accuracy(k, d, env, monkeypatch):
    # Uniform data has many rows nearly equidistant from two centers: plain
    # TF32 products (10-bit operands) pick a center farther than the nearest
    # by more than this tolerance for dozens of the 200k rows (simulated in
    # NumPy); 3xTF32, like float32, for none. The three kernels: the fused
    # mma.sync kernel (default up to 128 features; 61 centers and 37 or 100
    # features leave partial blocks of centers and depth, 100 takes the
    # 16-step shape; TWINLEARN_KMEANS_MMA_CHUNK=16 stages the centers 16 at a
    # time, the last chunk partial), the cuBLAS GEMMs (TWINLEARN_KMEANS_FAST_KERNEL=gemm;
    # with 1 MiB blocks of dot products: 49 chunks, the last one partial, rows
    # of dots padded to a multiple of 4) and the fused WMMA kernel
    # (TWINLEARN_KMEANS_FAST_KERNEL=wmma).
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    X, C = _uniform(d=d, k=k)
    km = KMeans(C.shape[0], init=C, n_init=1, max_iter=1, device="cuda", numeric_mode="fast").fit(X)
    assert km.numeric_mode_used() == "fast"
    km.cluster_centers_ = C.copy()
    labels = km.predict(X)
    D = _exact_sq_dist(X, C)
    excess = D[np.arange(X.shape[0]), labels] - D.min(1)
    scale = (X.astype(np.float64) ** 2).sum(1) + (C.astype(np.float64) ** 2).sum(1).max()
    assert np.all(excess <= 2e-5 * scale)
    ref = KMeans(C.shape[0], init=C, n_init=1, max_iter=1, device="cuda", numeric_mode="identical").fit(X)
    ref.cluster_centers_ = C.copy()
    assert np.mean(ref.predict(X) == labels) > 0.999


def test_fast_fit_matches_identical_on_blobs():
    # Separated blobs, started near their centers: every row's nearest center
    # is clear by far more than float rounding, so the fast fit takes the
    # identical fit's path. (From arbitrary starting rows, Lloyd's iterations
    # may split a blob between two centers; the rows on that boundary are near
    # ties, and rounding alone may send a fit down another path.)
    X, init = _blobs()
    fast = KMeans(32, init=init, n_init=1, max_iter=50, device="cuda", numeric_mode="fast").fit(X)
    ident = KMeans(32, init=init, n_init=1, max_iter=50, device="cuda", numeric_mode="identical").fit(X)
    assert fast.numeric_mode_used() == "fast" and ident.numeric_mode_used() == "identical"
    np.testing.assert_array_equal(fast.labels_, ident.labels_)
    np.testing.assert_allclose(fast.inertia_, ident.inertia_, rtol=1e-5)
    np.testing.assert_allclose(fast.cluster_centers_, ident.cluster_centers_, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n,k,dtype", [(20_000, 64, np.float32), (100_000, 8, np.float32), (100_000, 64, np.float64)])
def test_fast_mode_keeps_the_canonical_kernel_where_the_tensor_cores_do_not_serve(n, k, dtype):
    # Below 65 536 rows, below 16 clusters, or float64: the canonical kernel,
    # so fast delivers identical (the same bits as the CPU backend).
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 8)).astype(dtype)
    init = X[:k].copy()
    fast = KMeans(k, init=init, n_init=1, max_iter=5, device="cuda", numeric_mode="fast").fit(X)
    cpu = KMeans(k, init=init, n_init=1, max_iter=5, device="cpu", numeric_mode="identical").fit(X)
    assert fast.numeric_mode_used() == "identical"
    assert fast.cluster_centers_.tobytes() == cpu.cluster_centers_.tobytes()
    assert fast.labels_.tobytes() == cpu.labels_.tobytes()




def test_device_steps_match_host_steps(monkeypatch):
    # The fast fit keeps its centers on the device between Lloyd steps (sums
    # in shared memory, the next centers and their shift on the device).
    # With TWINLEARN_KMEANS_DEVICE_STEPS=0 every update runs on the host
    # from the canonical sums: the same labels, iterations and, to float
    # rounding, the same centers and inertia.
    X, init = _blobs()
    held = KMeans(32, init=init, n_init=1, max_iter=50, device="cuda", numeric_mode="fast").fit(X)
    monkeypatch.setenv("TWINLEARN_KMEANS_DEVICE_STEPS", "0")
    host = KMeans(32, init=init, n_init=1, max_iter=50, device="cuda", numeric_mode="fast").fit(X)
    assert held.numeric_mode_used() == "fast" and host.numeric_mode_used() == "fast"
    np.testing.assert_array_equal(held.labels_, host.labels_)
    assert held.n_iter_ == host.n_iter_
    np.testing.assert_allclose(held.cluster_centers_, host.cluster_centers_, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(held.inertia_, host.inertia_, rtol=1e-6)


def test_device_steps_stop_by_labels_and_by_shift():
    # The changed-label count and the shift come back from the device each
    # step and decide the stop. Overlapping blobs from random rows take many
    # steps (and their trajectory depends on rounding: the sums' atomics add
    # in any order, so no step count is compared across fits). tol = 0: the
    # fit runs until a step changes no label, so the final centers label the
    # rows as the fit did (a count stuck at 0 stops after two steps with
    # labels still moving; one never 0 runs to max_iter). tol > 0: the
    # shift stops it earlier (a shift stuck at 0 stops after one step).
    X, _ = _blobs(seed=3, d=8)
    X = X / np.float32(3.0)
    init = X[np.random.default_rng(6).choice(X.shape[0], 32, replace=False)]
    exact = KMeans(32, init=init, n_init=1, max_iter=300, tol=0.0, device="cuda", numeric_mode="fast").fit(X)
    assert exact.numeric_mode_used() == "fast"
    assert 10 <= exact.n_iter_ < 300
    assert np.mean(exact.predict(X) == exact.labels_) > 0.999
    early = KMeans(32, init=init, n_init=1, max_iter=300, tol=1e-3, device="cuda", numeric_mode="fast").fit(X)
    assert 3 <= early.n_iter_ < exact.n_iter_


def test_device_steps_relocate_empty_clusters_as_identical():
    # Four starting centers far from every row: the first step leaves them
    # empty, and that step's update runs on the host, which moves them to the
    # rows farthest from their centers (here four distant outliers, far
    # apart, so rounding cannot reorder them), as identical mode does.
    X, init = _blobs(seed=4)
    rng = np.random.default_rng(5)
    outliers = (rng.normal(size=(4, 16)) * 10 + 200 * np.arange(1, 5)[:, None]).astype(np.float32)
    X = np.concatenate([X, outliers])
    init[-4:] = 1e4 + np.arange(4, dtype=np.float32)[:, None]
    fast = KMeans(32, init=init, n_init=1, max_iter=50, device="cuda", numeric_mode="fast").fit(X)
    ident = KMeans(32, init=init, n_init=1, max_iter=50, device="cuda", numeric_mode="identical").fit(X)
    assert fast.numeric_mode_used() == "fast"
    np.testing.assert_array_equal(fast.labels_, ident.labels_)
    assert sorted(fast.labels_[-4:]) == sorted(ident.labels_[-4:]) and len(set(fast.labels_[-4:])) == 4
    np.testing.assert_allclose(fast.inertia_, ident.inertia_, rtol=1e-5)
