"""twinlearn.neighbors.KernelDensity: agreement with scikit-learn, the
canonical order of the kernel sums (separating tests), CPU-vs-GPU bits,
sample() and bad input."""

import numpy as np
import pytest
from sklearn.neighbors import KernelDensity as SkKDE

from twinlearn import _backend
from twinlearn.neighbors import KernelDensity
from twinlearn.testing import assert_separates

KERNELS = ["gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"]


def _data(dtype=np.float64, n=600, m=80, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    Q = (rng.normal(size=(m, d)) * 1.2).astype(dtype)
    w = rng.uniform(0.1, 3.0, size=n)
    return X, Q, w


def _brute(X, Q, w, kernel, h, metric="euclidean", p=2):
    """The exact log density in float64 (numpy), for where scikit-learn's
    tree leaves roundoff in place of a zero density."""
    from scipy.spatial.distance import cdist

    D = cdist(Q.astype(np.float64), X.astype(np.float64), metric="minkowski" if metric == "minkowski" else
              {"euclidean": "euclidean", "manhattan": "cityblock", "chebyshev": "chebyshev"}[metric],
              **({"p": p} if metric == "minkowski" else {}))
    w = np.ones(X.shape[0]) if w is None else w
    inside = D < h
    K = {
        "gaussian": np.exp(-0.5 * (D / h) ** 2),
        "exponential": np.exp(-D / h),
        "tophat": inside * 1.0,
        "epanechnikov": inside * (1 - (D / h) ** 2),
        "linear": inside * (1 - D / h),
        "cosine": inside * np.cos(0.5 * np.pi * D / h),
    }[kernel]
    return K @ w


def _check_against_sklearn(ours, ref, brute, rtol):
    """ours vs scikit-learn where the density is not tiny (scikit-learn's
    tree leaves about 1e-16 of roundoff where the exact sum is 0); exact
    zeros (ours -inf) only where the brute-force sum is 0."""
    finite = np.isfinite(ours)
    assert np.all(brute[~finite] == 0)
    big = finite & (brute > 1e-8 * brute.max())
    assert big.sum() > 0.5 * len(ours)
    np.testing.assert_allclose(ours[big], ref[big], rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("bandwidth", [0.7, "scott", "silverman"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_agrees_with_sklearn(kernel, bandwidth, weighted, dtype):
    X, Q, w = _data(dtype)
    sw = w if weighted else None
    ours_est = KernelDensity(kernel=kernel, bandwidth=bandwidth, device="cpu").fit(X, sample_weight=sw)
    ref_est = SkKDE(kernel=kernel, bandwidth=bandwidth).fit(X.astype(np.float64), sample_weight=sw)
    assert ours_est.bandwidth_ == pytest.approx(ref_est.bandwidth_, rel=1e-15)
    ours = ours_est.score_samples(Q)
    assert ours.dtype == dtype and ours.shape == (Q.shape[0],)
    ref = ref_est.score_samples(Q.astype(np.float64))
    brute = _brute(X, Q, sw, kernel, ref_est.bandwidth_)
    _check_against_sklearn(ours.astype(np.float64), ref, brute, 1e-6 if dtype == np.float64 else 2e-4)
    assert ours_est.score(Q) == pytest.approx(np.sum(ours, dtype=np.float64))
    assert ours_est.n_features_in_ == 3


@pytest.mark.parametrize("metric,params", [("manhattan", None), ("chebyshev", None), ("l1", None),
                                           ("minkowski", {"p": 3}), ("minkowski", None), ("infinity", None)])
@pytest.mark.parametrize("kernel", ["gaussian", "tophat", "linear"])
def test_metrics_agree_with_sklearn(kernel, metric, params):
    X, Q, w = _data()
    ours = KernelDensity(kernel=kernel, metric=metric, metric_params=params, device="cpu").fit(X, sample_weight=w)
    ref = SkKDE(kernel=kernel, metric=metric, metric_params=params).fit(X, sample_weight=w)
    name = {"l1": "manhattan", "infinity": "chebyshev"}.get(metric, metric)
    brute = _brute(X, Q, w, kernel, 1.0, name, (params or {}).get("p", 2))
    _check_against_sklearn(ours.score_samples(Q), ref.score_samples(Q), brute, 1e-6)


def test_tolerances_and_tree_parameters_have_no_effect():
    X, Q, _ = _data()
    ref = KernelDensity(device="cpu").fit(X).score_samples(Q)
    for kw in (dict(atol=0.1, rtol=0.5), dict(algorithm="ball_tree", leaf_size=3), dict(breadth_first=False)):
        np.testing.assert_array_equal(KernelDensity(device="cpu", **kw).fit(X).score_samples(Q), ref)


@pytest.mark.parametrize("kernel", ["gaussian", "exponential"])
def test_log_sum_exp_keeps_far_queries_finite(kernel):
    # With h = 0.01 every term underflows in exp(log K) for most queries: the
    # log-sum-exp (the maximum first) keeps the density finite and exact;
    # summing exp(log K) directly gives -inf. (scikit-learn's tree is off by
    # up to thousands here, so the reference is scipy's logsumexp.)
    from scipy.spatial.distance import cdist
    from scipy.special import logsumexp

    from twinlearn.neighbors._kde import log_kernel_norm

    X, Q, w = _data()
    h = 0.01 if kernel == "gaussian" else 0.0005
    ours = KernelDensity(kernel=kernel, bandwidth=h, device="cpu").fit(X, sample_weight=w).score_samples(Q)
    D = cdist(Q, X)
    lk = -0.5 * (D / h) ** 2 if kernel == "gaussian" else -D / h
    const = log_kernel_norm(h, 3, kernel) - np.log(w.sum())
    exact = logsumexp(lk, axis=1, b=w) + const
    with np.errstate(divide="ignore"):
        naive = np.log(np.exp(lk) @ w) + const

    def check(values):
        assert np.all(np.isfinite(values))
        np.testing.assert_allclose(values, exact, rtol=1e-12)

    assert_separates(check, right=ours, wrong=naive, what="log-sum-exp")


# -- the canonical order of the sums (docs/NUMERICS.md, "Kernel density") -------
def _canonical_sum(t):
    """core/reduce.hpp's order: chunks of 2048, 256 strided lanes folding 8
    terms each, the pairwise lane tree, the pairwise chunk tree (in t's dtype)."""
    def tree(p):
        p = list(p)
        while len(p) > 1:
            nxt = [p[2 * i] + p[2 * i + 1] for i in range(len(p) // 2)]
            if len(p) % 2:
                nxt.append(p[-1])
            p = nxt
        return p[0]

    dt = t.dtype.type
    chunks = []
    for c0 in range(0, len(t), 2048):
        chunk = np.full(2048, dt(-0.0), dtype=t.dtype)
        chunk[: len(t[c0:c0 + 2048])] = t[c0:c0 + 2048]
        lanes = np.full(256, dt(-0.0), dtype=t.dtype)
        for s in range(8):
            lanes = lanes + chunk[256 * s: 256 * (s + 1)]
        chunks.append(tree(lanes))
    return tree(chunks)


def _sequential_sum(t):
    acc = t.dtype.type(0)
    for v in t:
        acc = acc + v
    return acc


def _order_fixture(n=5000):
    # float32 weights where the order shows: one 2^24 among ones, which a
    # sequential sum loses and the lanes keep; every row at the query, so
    # each tophat term is its weight.
    X = np.zeros((n, 2), dtype=np.float32)
    w = np.ones(n, dtype=np.float32)
    w[0] = np.float32(2.0 ** 24)
    w[300] = np.float32(2.0 ** 23)
    return X, w


def _log_sum(device, X, w, Q, kernel="tophat", h=1.0):
    mod = _backend.module_for(device)
    ctx = mod.Context(device, 3, "identical", 0, 0)
    mp = mod.MetricParams()
    mp.metric, mp.p, mp.direct = "euclidean", 2.0, True
    return np.asarray(mod.kde_log_sum(ctx, X, w, Q, mp, kernel, h))


def _check_order(device):
    X, w = _order_fixture()
    got = _log_sum(device, X, w, X[:2])

    def check(total):
        expect = np.log(np.float64(total(w)))
        # 3e-6: a float32 ulp of the log (about 17) and more; the orders
        # below part by about 2e-4.
        np.testing.assert_allclose(got.astype(np.float64), expect, rtol=0, atol=3e-6)

    def chunk_sequential(t):  # sequential within each chunk of 2048, then the chunk tree
        return _canonical_sum(np.array([_sequential_sum(t[c:c + 2048]) for c in range(0, len(t), 2048)]))

    assert_separates(check, right=_canonical_sum, wrong=_sequential_sum, what="canonical order vs sequential")
    assert_separates(check, right=_canonical_sum, wrong=chunk_sequential, what="canonical order vs chunk-sequential")


def test_sum_order_is_canonical_cpu():
    _check_order("cpu")


def test_thread_count_does_not_change_bits():
    X, Q, w = _data(n=5000)
    outs = []
    for t in (1, 2, 3):
        mod = _backend.module_for("cpu")
        ctx = mod.Context("cpu", t, "identical", 0, 0)
        mp = mod.MetricParams()
        mp.metric, mp.p, mp.direct = "euclidean", 2.0, True
        outs.append(np.asarray(mod.kde_log_sum(ctx, X, w, Q, mp, "gaussian", 0.5)))
    for o in outs[1:]:
        np.testing.assert_array_equal(o.view(np.int64), outs[0].view(np.int64))


# -- CPU vs GPU ---------------------------------------------------------------
@pytest.mark.gpu
def test_sum_order_is_canonical_gpu():
    _check_order("cuda:0")


#: Bandwidths about the typical distance of the fixture below (37 features),
#: so the compact kernels keep some rows in reach of every query.
_GPU_BANDWIDTH = {"euclidean": 9.0, "manhattan": 45.0, "chebyshev": 4.0, "minkowski": 6.0}


def _identity_fixture(dtype, weighted):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5000, 37)).astype(dtype)
    Q = rng.normal(size=(70, 37)).astype(dtype)
    w = rng.uniform(0, 2, size=5000) if weighted else None
    return X, Q, w


@pytest.mark.parametrize("metric,params", [("euclidean", None), ("manhattan", None), ("chebyshev", None),
                                           ("minkowski", {"p": 3})])
def test_identity_fixture_has_finite_compact_densities(metric, params):
    X, Q, w = _identity_fixture(np.float32, True)
    out = KernelDensity(kernel="tophat", bandwidth=_GPU_BANDWIDTH[metric], metric=metric, metric_params=params,
                        device="cpu").fit(X, sample_weight=w).score_samples(Q)
    assert np.isfinite(out).all()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("metric,params", [("euclidean", None), ("manhattan", None), ("chebyshev", None),
                                           ("minkowski", {"p": 3})])
def test_identical_cpu_gpu(kernel, weighted, dtype, metric, params):
    # 5000 training rows (3 chunks, a partial one), 70 queries (a partial
    # block of 16), 37 features (a partial staging step).
    X, Q, w = _identity_fixture(dtype, weighted)
    h = _GPU_BANDWIDTH[metric]
    outs = [KernelDensity(kernel=kernel, bandwidth=h, metric=metric, metric_params=params, device=dev,
                          numeric_mode="identical").fit(X, sample_weight=w).score_samples(Q)
            for dev in ("cpu", "cuda:0")]
    np.testing.assert_array_equal(np.asarray(outs[1]), outs[0])
    assert np.isfinite(outs[0]).sum() > 0


@pytest.mark.gpu
def test_gpu_device_arrays():
    cupy = pytest.importorskip("cupy")
    X, Q, w = _data()
    ref = KernelDensity(device="cpu").fit(X, sample_weight=w).score_samples(Q)
    est = KernelDensity(device="cuda:0").fit(cupy.asarray(X), sample_weight=w)
    got = est.score_samples(cupy.asarray(Q))
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(got), ref)


# -- sample() -------------------------------------------------------------------
def test_sample_reproducible_and_seeded():
    X, _, w = _data()
    est = KernelDensity(bandwidth=0.3, device="cpu").fit(X)
    a, b, c = est.sample(50, random_state=0), est.sample(50, random_state=0), est.sample(50, random_state=1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (50, 3) and a.dtype == np.float64
    assert est.sample().shape == (1, 3)
    assert KernelDensity(device="cpu").fit(X.astype(np.float32)).sample(4, random_state=0).dtype == np.float32


def test_sample_gaussian_moments():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2)) * [1.0, 3.0] + [5.0, -2.0]
    h = 0.5
    S = KernelDensity(bandwidth=h, device="cpu").fit(X).sample(40000, random_state=7)
    np.testing.assert_allclose(S.mean(0), X.mean(0), atol=0.06)
    np.testing.assert_allclose(S.var(0), X.var(0) + h * h, rtol=0.05)


def test_sample_tophat_within_bandwidth_of_a_row():
    from scipy.spatial.distance import cdist

    X, _, _ = _data(n=50)
    h = 0.2
    S = KernelDensity(kernel="tophat", bandwidth=h, device="cpu").fit(X).sample(2000, random_state=0)
    dmin = cdist(S, X).min(1)
    assert np.all(dmin <= h * (1 + 1e-12))
    # uniform in the ball: the radius' d-th power is uniform on [0, h^d]
    # (far apart rows, so the nearest row is the drawn one)
    Xs = np.arange(5)[:, None] * np.array([[100.0, 0, 0]])
    S = KernelDensity(kernel="tophat", bandwidth=h, device="cpu").fit(Xs).sample(20000, random_state=1)
    r = cdist(S, Xs).min(1) / h
    assert abs(np.mean(r ** 3) - 0.5) < 0.01


def test_sample_follows_weights():
    X = np.array([[0.0, 0.0], [100.0, 100.0], [200.0, 0.0]])
    w = np.array([1.0, 0.0, 3.0])
    S = KernelDensity(bandwidth=0.1, device="cpu").fit(X, sample_weight=w).sample(8000, random_state=0)
    near = np.argmin(((S[:, None, :] - X[None]) ** 2).sum(-1), axis=1)
    counts = np.bincount(near, minlength=3)
    assert counts[1] == 0
    assert abs(counts[2] / counts.sum() - 0.75) < 0.02


@pytest.mark.parametrize("kernel", ["epanechnikov", "exponential", "linear", "cosine"])
def test_sample_other_kernels_not_implemented(kernel):
    X, _, _ = _data()
    with pytest.raises(NotImplementedError):
        KernelDensity(kernel=kernel, device="cpu").fit(X).sample(3)


# -- bad input -------------------------------------------------------------------
@pytest.mark.parametrize("kw,match", [
    (dict(bandwidth=0.0), "bandwidth"),
    (dict(bandwidth=-1.0), "bandwidth"),
    (dict(bandwidth="normal"), "bandwidth"),
    (dict(kernel="triangle"), "kernel"),
    (dict(metric="cosine"), "metric"),
    (dict(metric="seuclidean"), "metric"),
    (dict(metric="minkowski", metric_params={"p": 0.5}), "p >= 1"),
    (dict(metric_params={"w": 1}), "metric_params"),
    (dict(atol=-1.0), "atol"),
    (dict(leaf_size=0), "leaf_size"),
])
def test_bad_parameters(kw, match):
    X, _, _ = _data()
    with pytest.raises(ValueError, match=match):
        KernelDensity(device="cpu", **kw).fit(X)


def test_bad_data():
    X, Q, _ = _data()
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelDensity(device="cpu").fit(bad)
    est = KernelDensity(device="cpu").fit(X)
    with pytest.raises(ValueError, match="NaN"):
        est.score_samples(np.where(np.arange(Q.size).reshape(Q.shape) == 0, np.nan, Q))
    with pytest.raises(ValueError, match="features"):
        est.score_samples(Q[:, :2])
    with pytest.raises(ValueError, match="sample_weight|negative"):
        KernelDensity(device="cpu").fit(X, sample_weight=-np.ones(len(X)))
    with pytest.raises(ValueError, match="non-zero|positive sum"):
        KernelDensity(device="cpu").fit(X, sample_weight=np.zeros(len(X)))
    with pytest.raises(ValueError):
        KernelDensity(device="cpu").fit(X, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="n_samples"):
        est.sample(0)
