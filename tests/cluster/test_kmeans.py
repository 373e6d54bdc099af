import pickle
import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans as SkKMeans
from sklearn.datasets import load_digits, make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn import _core
from twinlearn.cluster import KMeans, kmeans_plusplus
from twinlearn.testing import bits


def assert_same_fit(a, b, n_iter=True):
    """The two fitted KMeans hold the same bits (centers, labels, inertia and, by default, n_iter_)."""
    assert bits(a.cluster_centers_) == bits(b.cluster_centers_)
    assert bits(a.labels_) == bits(b.labels_)
    assert a.inertia_ == b.inertia_
    if n_iter:
        assert a.n_iter_ == b.n_iter_


def blobs(n=3000, d=8, centers=6, dtype=np.float64, seed=0):
    X, _ = make_blobs(n_samples=n, n_features=d, centers=centers, cluster_std=2.0, random_state=seed)
    return X.astype(dtype)


def datasets():
    rng = np.random.default_rng(4)
    return {
        "blobs": blobs(),
        "digits": load_digits().data,
        "random": rng.normal(size=(2000, 5)) * [1, 2, 3, 4, 5] + 100,
    }


def first_rows_init(X, k, seed=0):
    idx = np.random.default_rng(seed).choice(X.shape[0], k, replace=False)
    return X[np.sort(idx)].copy()


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(
            KMeans(n_clusters=2, n_init=2, max_iter=5, device="cpu"),
            expected_failed_checks={
                # Waived for scikit-learn's own KMeans too: with sample weights
                # k-means++ draws differently from repeating samples.
                "check_sample_weight_equivalence_on_dense_data": (
                    "sample_weight is not equivalent to removing/repeating samples."
                ),
            },
        )


@pytest.mark.parametrize("name", ["blobs", "digits", "random"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [3, 10])
def test_matches_scikit_learn_from_the_same_init(device, name, dtype, k):
    X = datasets()[name].astype(dtype)
    init = first_rows_init(X, k)
    ours = KMeans(n_clusters=k, init=init, n_init=1, device=device).fit(X)
    ref = SkKMeans(n_clusters=k, init=init, n_init=1).fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.labels_.dtype == np.int32
    # float32: scikit-learn sums centers in float32, here in float64, so the
    # last center shift can fall on the other side of tol.
    assert abs(ours.n_iter_ - ref.n_iter_) <= (1 if dtype == np.float32 else 0)
    assert abs(ours.inertia_ - ref.inertia_) <= 1e-5 * ref.inertia_
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=tol, atol=tol * np.abs(X).max())
    assert ours.cluster_centers_.dtype == dtype
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-4 if dtype == np.float32 else 1e-9,
                               atol=1e-3 if dtype == np.float32 else 1e-9)
    assert abs(ours.score(X) - ref.score(X)) <= 1e-5 * abs(ref.score(X))
    assert ours.numeric_mode_used() == "identical"


def test_weighted_matches_scikit_learn(device):
    X = blobs(n=1500)
    w = np.random.default_rng(1).uniform(0.2, 3.0, X.shape[0])
    init = first_rows_init(X, 6)
    ours = KMeans(6, init=init, n_init=1, device=device).fit(X, sample_weight=w)
    ref = SkKMeans(6, init=init, n_init=1).fit(X, sample_weight=w)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert abs(ours.inertia_ - ref.inertia_) <= 1e-9 * ref.inertia_
    assert abs(ours.score(X, sample_weight=w) - ref.score(X, sample_weight=w)) <= 1e-9 * ref.inertia_


def test_empty_cluster_relocated_as_scikit_learn(device):
    X = blobs(n=500, centers=3)
    init = np.vstack([X[:3], X.max(0) + 1000.0, X.min(0) - 1000.0])  # two centers nobody picks
    ours = KMeans(5, init=init, n_init=1, device=device).fit(X)
    ref = SkKMeans(5, init=init, n_init=1).fit(X)
    assert len(np.unique(ours.labels_)) == 5
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.inertia_, ref.inertia_, rtol=1e-9)


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_own_initialisation_quality(device, init):
    X = blobs(n=4000, centers=8, seed=3)
    ours = KMeans(8, init=init, random_state=0, device=device).fit(X)
    ref = SkKMeans(8, init=init, random_state=0).fit(X)
    # Different draws: same quality on well separated blobs.
    assert ours.inertia_ <= 1.05 * ref.inertia_
    again = KMeans(8, init=init, random_state=0, device=device).fit(X)
    assert bits(again.cluster_centers_) == bits(ours.cluster_centers_)
    other = KMeans(8, init=init, random_state=1, n_init=1, device=device).fit(X)
    assert other.n_iter_ >= 1


def test_callable_init_and_n_init(device):
    X = blobs(n=600)
    calls = []

    def init(Xc, k, random_state):
        calls.append(Xc.shape)
        assert abs(Xc.mean()) < 1e-8  # centered data, as scikit-learn passes it
        return Xc[:k]

    km = KMeans(4, init=init, device=device).fit(X)
    assert len(calls) == 10  # n_init='auto' runs a callable 10 times, as scikit-learn
    np.testing.assert_array_equal(km.labels_, SkKMeans(4, init=X[:4], n_init=1).fit(X).labels_)
    with pytest.warns(RuntimeWarning, match="performing only one init"):
        KMeans(4, init=X[:4], n_init=3, device=device).fit(X)


def test_elkan_gives_lloyd_result(device):
    X = blobs()
    a = KMeans(5, algorithm="elkan", random_state=0, device=device).fit(X)
    b = KMeans(5, algorithm="lloyd", random_state=0, device=device).fit(X)
    assert bits(a.cluster_centers_) == bits(b.cluster_centers_) and bits(a.labels_) == bits(b.labels_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equidistant_centers_go_to_the_lowest_index(device, dtype):
    # Duplicated centers: every row nearest to a duplicated place is labelled
    # with the lowest of its copies, within a panel of centers (3, 7) and
    # across panels (5, 300; 2, 280, 511), as the scan in center order with
    # ties to the lowest index gives. A rule keeping the last copy, or the
    # copy of the last panel, fails.
    rng = np.random.default_rng(9)
    C = rng.normal(size=(512, 6)).astype(dtype) * 4
    C[7] = C[3]
    C[300] = C[5]
    C[280] = C[511] = C[2]
    X = np.concatenate([C[c] + rng.normal(size=(60, 6)).astype(dtype) * 1e-3 for c in (3, 5, 2)])
    km = KMeans(512, init=C, n_init=1, max_iter=1, device=device).fit(np.concatenate([C, X]))
    km.cluster_centers_ = C
    labels = km.predict(X)
    d = ((X[:, None, :].astype(np.float64) - C[None].astype(np.float64)) ** 2).sum(-1)
    near = d.argmin(1)  # numpy's argmin: the first of equal values
    assert set(np.unique(labels)) <= {2, 3, 5}
    assert np.array_equal(labels, near)


def test_kmeans_plusplus_function(device):
    X = blobs(n=800, centers=4)
    centers, idx = kmeans_plusplus(X, 4, random_state=0, device=device)
    np.testing.assert_array_equal(centers, X[idx])
    assert len(set(idx.tolist())) == 4


def canonical_centers(X, labels, k, chunk=256):
    """The centroid update of docs/NUMERICS.md spelled out in NumPy: per
    cluster its rows in index order, chunks of `chunk` rows summed
    sequentially in float64, then the pairwise tree over the chunks."""
    out = np.empty((k, X.shape[1]))
    for c in range(k):
        rows = X[labels == c].astype(np.float64)
        parts = []
        for s in range(0, len(rows), chunk):
            acc = np.zeros(X.shape[1])
            for r in rows[s:s + chunk]:
                acc = acc + r
            parts.append(acc)
        while len(parts) > 1:
            parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
        out[c] = parts[0] / len(rows)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_centroid_update_is_the_canonical_order(device, dtype):
    """One Lloyd step from given centers equals the canonical update bit for bit.

    Separating arm (float64): a plain sequential sum over each cluster's rows
    gives different bits on this fixture, so the test would catch that order."""
    rng = np.random.default_rng(7)
    X = (rng.normal(size=(3000, 4)) * np.array([1e-3, 1.0, 1e4, 3.0]) + rng.normal(size=(3000, 1)) * 1e3)
    X = X.astype(dtype)
    init = X[:3].copy()
    km = KMeans(3, init=init, n_init=1, max_iter=1, tol=0.0, device=device).fit(X)
    ctx = _core.Context("cpu", 1, "identical", 0)
    mean = np.asarray(_core.column_stats(ctx, X, None))[1].astype(dtype)
    Xc = X - mean
    d2 = ((Xc[:, None, :].astype(np.float64) - (init - mean)[None].astype(np.float64)) ** 2).sum(-1)
    labels0 = np.argmin(d2, axis=1)
    expect = (canonical_centers(Xc, labels0, 3).astype(dtype) + mean).astype(dtype)
    assert bits(km.cluster_centers_) == bits(expect)
    sequential = np.stack([np.add.reduce(Xc[labels0 == c].astype(np.float64), axis=0) / np.sum(labels0 == c)
                           for c in range(3)])
    naive = []
    for c in range(3):
        acc = np.zeros(4)
        for r in Xc[labels0 == c].astype(np.float64):
            acc = acc + r
        naive.append(acc / np.sum(labels0 == c))
    naive = (np.array(naive).astype(dtype) + mean).astype(dtype)
    if dtype == np.float32:
        return  # float64 sums of float32 data round to the same float32 centers in any order
    assert bits(naive) != bits(expect) or bits((sequential.astype(dtype) + mean).astype(dtype)) != bits(expect)


def test_n_init_keeps_the_labels_of_the_best_run(device):
    # Uniform data and 3 iterations from random rows: the 8 runs end at
    # different inertias, and the kept labels must be those of the kept
    # centers (the final assignment to them), whichever run that was.
    X = np.random.default_rng(7).uniform(size=(3000, 2))
    runs = [KMeans(12, init="random", n_init=1, max_iter=3, tol=0.0, random_state=s, device=device).fit(X)
            for s in range(3)]
    assert len({r.inertia_ for r in runs}) > 1  # runs differ
    km = KMeans(12, init="random", n_init=8, max_iter=3, tol=0.0, random_state=0, device=device).fit(X)
    np.testing.assert_array_equal(km.labels_, km.predict(X))
    np.testing.assert_allclose(km.inertia_, -km.score(X), rtol=1e-12)
    assert km.inertia_ <= runs[0].inertia_  # run 0 of n_init=8 is the n_init=1 fit


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_bits_do_not_depend_on_thread_count(threads):
    X = blobs(n=20000, d=7, centers=9, dtype=np.float32)
    w = np.random.default_rng(0).uniform(0.5, 2, X.shape[0]).astype(np.float32)
    with twinlearn.config_context(n_threads=1):
        ref = KMeans(9, random_state=3, n_init=2, device="cpu").fit(X, sample_weight=w)
    with twinlearn.config_context(n_threads=threads):
        km = KMeans(9, random_state=3, n_init=2, device="cpu").fit(X, sample_weight=w)
    assert_same_fit(km, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("init", ["k-means++", "random", "array"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n,k", [(1000, 7), (50003, 300)])
def test_cpu_and_gpu_give_identical_bits(dtype, init, weighted, n, k):
    X = blobs(n=n, d=19, centers=12, dtype=dtype, seed=5)
    w = np.random.default_rng(2).uniform(0.1, 4, n).astype(dtype) if weighted else None
    ini = X[:k].copy() if init == "array" else init
    c = KMeans(k, init=ini, random_state=11, max_iter=30, device="cpu", numeric_mode="identical").fit(X, sample_weight=w)
    g = KMeans(k, init=ini, random_state=11, max_iter=30, device="cuda", numeric_mode="identical").fit(X, sample_weight=w)
    assert bits(c.cluster_centers_) == bits(g.cluster_centers_)
    assert bits(c.labels_) == bits(g.labels_)
    assert c.inertia_ == g.inertia_ and c.n_iter_ == g.n_iter_
    assert bits(c.predict(X)) == bits(g.predict(X))
    assert bits(c.transform(X)) == bits(g.transform(X))
    assert c.score(X) == g.score(X)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tol", [0.0, 1e-3])
def test_held_canonical_steps_give_the_host_steps_bits(monkeypatch, dtype, tol):
    """Identical mode keeps the centers on the device between Lloyd steps
    (the canonical sums and host_update's arithmetic run there): the bits,
    the iterations and so the stop of the same steps run on the host
    (TWINLEARN_KMEANS_DEVICE_STEPS=0) and of the CPU backend."""
    X = blobs(n=30_011, d=13, centers=9, dtype=dtype, seed=9)
    w = np.random.default_rng(4).uniform(0.5, 3.0, X.shape[0]).astype(dtype)
    kw = dict(n_clusters=24, init=X[::1000][:24].copy(), n_init=1, max_iter=300, tol=tol, numeric_mode="identical")
    held = KMeans(device="cuda", **kw).fit(X, sample_weight=w)
    assert 2 < held.n_iter_ < 300  # stopped by the rule (labels or shift), not by max_iter
    monkeypatch.setenv("TWINLEARN_KMEANS_DEVICE_STEPS", "0")
    host = KMeans(device="cuda", **kw).fit(X, sample_weight=w)
    cpu = KMeans(device="cpu", **kw).fit(X, sample_weight=w)
    for other in (host, cpu):
        assert_same_fit(other, held)


CANON = {"TWINLEARN_KMEANS_CANON_KERNEL": "canon"}


@pytest.mark.gpu
@pytest.mark.parametrize(
    "d,env",
    [
        (64, {}),  # the certified assignment, all centers staged, 128-bit row loads
        (64, {"TWINLEARN_KMEANS_CANON_CHUNK": "128"}),  # certified, undecided rows against 128 centers at a time
        (19, {}),  # certified, scalar row loads
        (64, CANON),  # assign_canon_kernel over every row, all centers staged
        (64, {**CANON, "TWINLEARN_KMEANS_CANON_CHUNK": "100000"}),  # the same through the cap's branch
        (64, {**CANON, "TWINLEARN_KMEANS_CANON_CHUNK": "128"}),  # centers staged 128 at a time
        (19, CANON),  # scalar row loads
        (19, {**CANON, "TWINLEARN_KMEANS_CANON_CHUNK": "128"}),
        (64, {"TWINLEARN_KMEANS_CANON_KERNEL": "tile"}),  # assign_kernel
        (131, {}),  # past assign_canon_kernel's width: assign_kernel
    ],
)
def test_canonical_assignment_kernels_give_the_cpu_bits(d, env, monkeypatch):
    """The certified assignment and both canonical assignment kernels
    (kmeans_canon.cuh), each way of staging the centers, give the CPU's
    labels, centers and inertia."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    X = blobs(n=40_003, d=d, centers=20, dtype=np.float32, seed=6)
    init = X[::133][:250].copy()  # 250 centers: staged whole at d = 64 (2 blocks an SM)
    kw = dict(n_clusters=250, init=init, n_init=1, max_iter=4, numeric_mode="identical")
    c = KMeans(device="cpu", **kw).fit(X)
    g = KMeans(device="cuda", **kw).fit(X)
    assert bits(c.labels_) == bits(g.labels_)
    assert bits(c.cluster_centers_) == bits(g.cluster_centers_)
    assert c.inertia_ == g.inertia_ and c.n_iter_ == g.n_iter_
    assert bits(c.transform(X[:999])) == bits(g.transform(X[:999]))


def near_ties(n, d, pairs, scale, seed):
    """Rows almost equidistant from the two centers of a pair: each pair is
    c +- e (e a random direction), each row c + a random vector orthogonal
    to e plus a multiple of e of relative size `scale` (1e-7: the canonical
    distances of the two differ in their last bits, and which is smaller is
    decided by rounding). Returns (X, the 2 * pairs centers)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(pairs, d)) * 4
    e = rng.normal(size=(pairs, d))
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    centers = np.concatenate([base + e, base - e]).astype(np.float32)
    which = rng.integers(0, pairs, n)
    v = rng.normal(size=(n, d))
    v -= np.sum(v * e[which], axis=1, keepdims=True) * e[which]
    t = rng.uniform(-1, 1, (n, 1)) * scale
    return (base[which] + v + t * e[which]).astype(np.float32), centers


@pytest.mark.gpu
@pytest.mark.parametrize(
    "case",
    [
        "near_ties",  # most rows undecided: the canonical kernel decides them
        "duplicate_centers",  # equal filter values: never certified, lowest center wins
        "rows_on_centers",  # distances 0 after the clamp
        "wide_spread",  # features of very different scales
        "d7",  # the filter's 16-feature shape
        "d100",  # the filter's 128-feature shape
        "d97",  # the same, scalar row loads in the canonical kernel
    ],
)
def test_certified_assignment_gives_the_canonical_bits(case, monkeypatch):
    """Identical mode's certified assignment (the tensor-core filter, then
    the canonical chain for its certified rows and the canonical kernel for
    the others) gives the labels, distances, centers and inertia of the
    canonical kernel over every row and of the CPU, one Lloyd step and a
    whole fit, where rows sit close to ties and where they do not."""
    rng = np.random.default_rng(12)
    d, k = 32, 64
    if case == "near_ties":
        X, init = near_ties(30_000, d, k // 2, 1e-7, seed=3)
    elif case == "duplicate_centers":
        X = blobs(n=30_000, d=d, centers=10, dtype=np.float32, seed=7)
        init = X[::400][:k].copy()
        init[1::2] = init[::2]  # every center twice: ties everywhere
    elif case == "rows_on_centers":
        X = blobs(n=30_000, d=d, centers=10, dtype=np.float32, seed=8)
        X[: 30_000 // 2] = X[:k][np.arange(30_000 // 2) % k]  # half the rows repeat the initial centers
        init = X[:k].copy()
    elif case == "wide_spread":
        X = (rng.normal(size=(30_000, d)) * np.logspace(-3, 3, d)).astype(np.float32)
        init = X[::469][:k].copy()
    else:
        d = int(case[1:])
        k = 100 if d > 64 else 64
        X = blobs(n=30_000, d=d, centers=12, dtype=np.float32, seed=d)
        init = X[::277][:k].copy()
    for max_iter in (1, 40):
        kw = dict(n_clusters=k, init=init, n_init=1, max_iter=max_iter, numeric_mode="identical")
        cert = KMeans(device="cuda", **kw).fit(X)
        cpu = KMeans(device="cpu", **kw).fit(X)
        with monkeypatch.context() as m:
            m.setenv("TWINLEARN_KMEANS_CANON_KERNEL", "canon")
            canon = KMeans(device="cuda", **kw).fit(X)
        for other in (cpu, canon):
            assert_same_fit(other, cert)
        assert bits(cpu.transform(X[:999])) == bits(cert.transform(X[:999]))


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_device_arrays(lib):
    mod = pytest.importorskip(lib)
    X = blobs(n=5000, dtype=np.float32)
    Xd = mod.asarray(X) if lib == "cupy" else mod.as_tensor(X, device="cuda")
    g = KMeans(6, random_state=0).fit(Xd)
    assert g.device_used() == "cuda:0"
    c = KMeans(6, random_state=0, device="cpu").fit(X)
    assert bits(c.cluster_centers_) == bits(g.cluster_centers_)
    assert type(g.predict(Xd)) is type(Xd)
    assert type(g.transform(Xd)) is type(Xd)


def test_fitted_model_pickles_and_predicts_on_cpu(device):
    X = blobs()
    km = KMeans(4, random_state=0, device=device).fit(X)
    loaded = pickle.loads(pickle.dumps(km))
    loaded.set_params(device="cpu")
    np.testing.assert_array_equal(loaded.predict(X), km.predict(X))


@pytest.mark.parametrize(
    "X,kw,match",
    [
        (np.ones((3, 2)), {"n_clusters": 4}, "n_samples=3 should be >= n_clusters=4"),
        (np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]]), {"n_clusters": 2}, "NaN"),
        (np.array([[1.0, np.inf], [2.0, 3.0], [0.0, 1.0]]), {"n_clusters": 2}, "infinity"),
        (np.empty((0, 3)), {"n_clusters": 2}, "0 sample"),
        (np.empty((5, 0)), {"n_clusters": 2}, "0 feature"),
        (np.ones((5, 2)), {"n_clusters": 2, "init": np.ones((3, 2))}, "does not match the number of clusters"),
        (np.ones((5, 2)), {"n_clusters": 2, "init": np.ones((2, 3))}, "number of features"),
        (np.ones((5, 2)), {"n_clusters": 0}, "n_clusters"),
        (np.ones((5, 2)), {"n_clusters": 2, "algorithm": "full"}, "algorithm"),
        (np.ones((5, 2)), {"n_clusters": 2, "device": "tpu"}, "device"),
    ],
)
def test_bad_input(device, X, kw, match):
    with pytest.raises(ValueError, match=match):
        KMeans(**{"device": device, **kw}).fit(X)


@pytest.mark.parametrize("call", [
    lambda X, sw, dev: KMeans(2, random_state=0, device=dev).fit(X, sample_weight=sw),
    lambda X, sw, dev: KMeans(2, init="random", random_state=0, device=dev).fit(X, sample_weight=sw),
    lambda X, sw, dev: twinlearn.MiniBatchKMeans(2, random_state=0, device=dev).fit(X, sample_weight=sw),
    lambda X, sw, dev: twinlearn.MiniBatchKMeans(2, random_state=0, device=dev).partial_fit(X, sample_weight=sw),
    lambda X, sw, dev: kmeans_plusplus(X, 2, sample_weight=sw, random_state=0, device=dev),
], ids=["KMeans", "KMeans-random", "MiniBatchKMeans", "MiniBatchKMeans.partial_fit", "kmeans_plusplus"])
def test_negative_sample_weight_is_refused(device, call):
    """scikit-learn's _check_sample_weight(..., ensure_non_negative=True)
    message. scikit-learn's KMeans refuses them too, by accident of its
    k-means++ draw ('probabilities are not non-negative')."""
    X = blobs(n=60, d=3)
    sw = np.ones(len(X))
    sw[7] = -0.5
    with pytest.raises(ValueError, match="^Negative values in data passed to `sample_weight`"):
        call(X, sw, device)


def test_wrong_feature_count_at_predict(device):
    km = KMeans(2, random_state=0, device=device).fit(blobs(n=100, d=3))
    with pytest.raises(ValueError, match="X has 2 features"):
        km.predict(np.ones((4, 2)))
    with pytest.raises(ValueError, match="NaN"):
        km.predict(np.array([[np.nan, 0.0, 0.0]]))


def test_duplicate_points_warn(device):
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 10, axis=0)
    with pytest.warns(ConvergenceWarning, match="distinct clusters"):
        KMeans(3, random_state=0, device=device).fit(X)


def test_more_rows_than_one_sum_batch(device):
    """Past 2^20 rows the cluster sums add batch partials by the tree; the
    fit still follows scikit-learn from the same init."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(400_000, 2)) + c for c in ([0, 0], [8, 0], [0, 8])])[:1_100_000]
    init = X[[0, 500_000, 1_000_000]].copy()
    ours = KMeans(3, init=init, n_init=1, max_iter=4, device=device).fit(X)
    ref = SkKMeans(3, init=init, n_init=1, max_iter=4).fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10, atol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("streamed", [False, True])
def test_relocation_of_empty_clusters_identical_on_gpu(monkeypatch, dtype, weighted, streamed):
    """Empty clusters take the rows farthest from their centers, farthest
    first, ties by lowest row index: the GPU's sort picks the same rows as
    the CPU's selection (equal far rows are planted at several indices)."""
    X = blobs(n=20_000, d=6, centers=4, dtype=dtype, seed=8)
    far = X[:4].copy() + 60.0
    for i in (17, 4_000, 9_999, 15_001):
        X[i] = far[0]  # four copies of one far row: a tie
    X[123] = far[1]
    w = np.random.default_rng(3).uniform(0.5, 2.0, X.shape[0]).astype(dtype) if weighted else None
    if weighted:  # the tied rows differ in weight, so which of them move shows in the centers
        w[[17, 4_000, 9_999, 15_001]] = [1.5, 2.5, 0.75, 3.0]
    init = np.vstack([X[[1, 2, 3, 5]], X.max(0) + 1e4, X.min(0) - 1e4, X.max(0) + 2e4])  # 3 centers nobody picks
    kw = dict(n_clusters=7, init=init, n_init=1, max_iter=10, numeric_mode="identical")
    cpu = KMeans(device="cpu", **kw).fit(X, sample_weight=w)
    if streamed:
        monkeypatch.setenv("TWINLEARN_KMEANS_DEVICE_BYTES", "1")
    gpu = KMeans(device="cuda", **kw).fit(X, sample_weight=w)
    assert len(np.unique(cpu.labels_)) == 7
    assert bits(gpu.cluster_centers_) == bits(cpu.cluster_centers_)
    assert bits(gpu.labels_) == bits(cpu.labels_)
    assert gpu.inertia_ == cpu.inertia_ and gpu.n_iter_ == cpu.n_iter_


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_streamed_data_gives_the_same_bits(monkeypatch, dtype):
    """Host data larger than the device budget is streamed through the GPU in
    batches: same bits as resident data and as the CPU."""
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(2_300_000, 5)) + rng.integers(0, 4, (2_300_000, 1)) * 5).astype(dtype)
    w = rng.uniform(0.5, 2, X.shape[0]).astype(dtype)
    kw = dict(n_clusters=6, random_state=0, max_iter=6, numeric_mode="identical")
    resident = KMeans(device="cuda", **kw).fit(X, sample_weight=w)
    monkeypatch.setenv("TWINLEARN_KMEANS_DEVICE_BYTES", "1")
    streamed = KMeans(device="cuda", **kw).fit(X, sample_weight=w)
    cpu = KMeans(device="cpu", **kw).fit(X, sample_weight=w)
    for a in (streamed, cpu):
        assert_same_fit(a, resident, n_iter=False)


def test_more_clusters_than_distinct_rows_stops_at_once(device):
    # Every row sits on a center: the empty cluster (a duplicate center) is
    # not relocated, keeps its center, and Lloyd stops after one iteration, as
    # scikit-learn does (before, the empty cluster hopped between rows until
    # max_iter).
    X = np.array([[0, 0], [1, 1], [1, 1], [1, 0], [0, 1]], dtype=np.float64)
    with pytest.warns(ConvergenceWarning, match=r"Number of distinct clusters \(4\) found smaller than n_clusters \(5\)"):
        km = KMeans(n_clusters=5, init=X, n_init=1, device=device, numeric_mode="identical").fit(X)
    assert km.n_iter_ == 1
    np.testing.assert_array_equal(km.cluster_centers_, X)
    assert km.inertia_ == 0.0
