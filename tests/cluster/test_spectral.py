"""SpectralClustering: agreement with scikit-learn, the normalization's
spelled-out arithmetic, the sign rule, identity across thread counts and
devices, and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import SpectralClustering as SkSpectralClustering
from sklearn.datasets import make_blobs, make_circles, make_moons
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf_kernel

import twinlearn
from twinlearn import _core
from twinlearn.cluster import SpectralClustering
from twinlearn.cluster import _spectral
from twinlearn.testing import assert_identical_across_devices, assert_identical_across_threads, assert_separates

ARI = 0.99


def _ari_vs_sklearn(X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours = SpectralClustering(random_state=0, device="cpu", **kw).fit(X)
        ref = SkSpectralClustering(random_state=0, **kw).fit(X)
    return adjusted_rand_score(ref.labels_, ours.labels_), ours


# -- agreement with scikit-learn -------------------------------------------------------
@pytest.mark.parametrize("assign_labels", ["kmeans", "discretize", "cluster_qr"])
@pytest.mark.parametrize("eigen_solver", [None, "arpack", "lobpcg"])
def test_blobs_rbf_match_sklearn(assign_labels, eigen_solver):
    X, _ = make_blobs(400, centers=4, n_features=5, cluster_std=1.0, random_state=3)
    ari, ours = _ari_vs_sklearn(X, n_clusters=4, gamma=0.1, assign_labels=assign_labels,
                                eigen_solver=eigen_solver)
    assert ari >= ARI
    ref = SkSpectralClustering(n_clusters=4, gamma=0.1, random_state=0).fit(X)
    np.testing.assert_allclose(ours.affinity_matrix_, ref.affinity_matrix_, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["deterministic", "identical", "fast"])
def test_blobs_rbf_subspace_iteration_matches_sklearn(mode):
    # 2500 nodes: beyond the dense solvers' sizes, so subspace iteration runs.
    X, _ = make_blobs(2500, centers=5, n_features=16, random_state=1)
    assert _spectral.DENSE_MAX < 2500
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours = SpectralClustering(n_clusters=5, gamma=0.02, random_state=0, device="cpu", numeric_mode=mode).fit(X)
        ref = SkSpectralClustering(n_clusters=5, gamma=0.02, random_state=0).fit(X)
    assert adjusted_rand_score(ref.labels_, ours.labels_) >= ARI


@pytest.mark.parametrize("make", ["circles", "moons"])
@pytest.mark.parametrize("eigen_solver", [None, "lobpcg"])
@pytest.mark.parametrize("mode", ["deterministic", "identical"])
def test_nearest_neighbors_shapes_match_sklearn(make, eigen_solver, mode):
    if make == "circles":
        X, y = make_circles(500, factor=0.5, noise=0.05, random_state=0)
    else:
        X, y = make_moons(500, noise=0.05, random_state=0)
    ari, ours = _ari_vs_sklearn(X, n_clusters=2, affinity="nearest_neighbors", eigen_solver=eigen_solver)
    assert ari >= ARI
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours = SpectralClustering(n_clusters=2, affinity="nearest_neighbors", eigen_solver=eigen_solver,
                                  random_state=0, device="cpu", numeric_mode=mode).fit(X)
    assert adjusted_rand_score(y, ours.labels_) >= ARI
    assert sp.issparse(ours.affinity_matrix_)


def test_nearest_neighbors_graph_is_sklearns():
    X, _ = make_moons(300, noise=0.05, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours = SpectralClustering(2, affinity="nearest_neighbors", n_neighbors=7, random_state=0,
                                  device="cpu").fit(X)
        ref = SkSpectralClustering(2, affinity="nearest_neighbors", n_neighbors=7, random_state=0).fit(X)
    assert (ours.affinity_matrix_ != ref.affinity_matrix_).nnz == 0


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_precomputed_matches_sklearn(kind):
    X, _ = make_blobs(300, centers=3, n_features=4, random_state=5)
    A = sk_rbf_kernel(X, gamma=0.2)
    if kind == "sparse":
        A[A < 1e-3] = 0.0
        A = sp.csr_matrix(A)
    ari, ours = _ari_vs_sklearn(A, n_clusters=3, affinity="precomputed")
    assert ari >= ARI


def test_precomputed_nearest_neighbors_matches_sklearn():
    from sklearn.neighbors import NearestNeighbors

    X, _ = make_moons(300, noise=0.05, random_state=1)
    D = NearestNeighbors(n_neighbors=12).fit(X).kneighbors_graph(mode="distance")
    ari, _ = _ari_vs_sklearn(D, n_clusters=2, affinity="precomputed_nearest_neighbors", n_neighbors=10)
    assert ari >= ARI


@pytest.mark.parametrize("affinity", ["laplacian", "poly", "cosine", "chi2", "callable"])
def test_other_affinities_match_sklearn(affinity):
    X, _ = make_blobs(200, centers=3, n_features=3, random_state=0)
    X = X - X.min() + 0.1  # chi2 wants non-negative data
    if affinity == "callable":
        X = X[:90]  # scikit-learn calls it once per pair of rows
        affinity = lambda a, b: np.exp(-0.3 * ((a - b) ** 2).sum())  # noqa: E731
    ari, _ = _ari_vs_sklearn(X, n_clusters=3, affinity=affinity, gamma=0.3, degree=2)
    assert ari >= 0.9 if affinity in ("poly", "cosine") else ari >= ARI


def test_float32_input_and_pandas():
    pd = pytest.importorskip("pandas")
    X, _ = make_blobs(200, centers=3, random_state=0)
    df = pd.DataFrame(X.astype(np.float32), columns=["a", "b"])
    est = SpectralClustering(3, gamma=0.5, random_state=0, device="cpu").fit(df)
    assert list(est.feature_names_in_) == ["a", "b"] and est.n_features_in_ == 2
    assert est.affinity_matrix_.dtype == np.float64  # scikit-learn computes in float64 too
    ref = SkSpectralClustering(3, gamma=0.5, random_state=0).fit(X)
    assert adjusted_rand_score(ref.labels_, est.labels_) >= ARI


# -- the normalization: spelled-out arithmetic -------------------------------------------
def _lane_sum(values):
    """The canonical lane order (twinlearn/core/lane_reduce.hpp) in Python floats."""
    acc = [0.0] * 32
    for j, v in enumerate(values):
        acc[j % 32] += float(v)
    off = 16
    while off:
        for lane in range(off):
            acc[lane] += acc[lane + off]
        off //= 2
    return acc[0]


def _hostile_affinity(n=150, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.random((n, n)) * 10.0 ** rng.integers(-8, 8, (n, n))
    return np.ascontiguousarray(A + A.T)


def _normalize(A, threads=2):
    S = np.empty_like(A)
    dd = np.asarray(_core.spectral_normalize(_core.Context("cpu", threads, "identical"), A, S))
    return S, dd


def test_degrees_are_summed_in_lane_order():
    A = _hostile_affinity()
    _, dd = _normalize(A)

    def check(degree_of):
        want = np.array([np.sqrt(degree_of(np.where(np.arange(len(A)) == i, 0.0, A[i]))) for i in range(len(A))])
        assert want.tobytes() == dd.tobytes()

    def sequential(row):
        s = 0.0
        for v in row:
            s += float(v)
        return s

    assert_separates(check, right=_lane_sum, wrong=sequential, what="the degrees' order")


def test_entries_are_two_divisions():
    A = _hostile_affinity(seed=1)
    S, dd = _normalize(A)
    off = ~np.eye(len(A), dtype=bool)

    def check(entry):
        want = entry(A, dd)
        assert want[off].tobytes() == S[off].tobytes()
        assert (np.diag(S) == 1.0).all()

    assert_separates(check, right=lambda A, d: (A / d[None, :]) / d[:, None],
                     wrong=lambda A, d: A / (d[:, None] * d[None, :]), what="S's entries")


def test_normalization_is_sklearns_laplacian():
    from scipy.sparse.csgraph import laplacian

    A = sk_rbf_kernel(make_blobs(100, random_state=0)[0], gamma=0.3)
    A[3, :] = A[:, 3] = 0.0  # an isolated node: dd = 1
    S, dd = _normalize(A)
    L, ref_dd = laplacian(A, normed=True, return_diag=True)
    np.fill_diagonal(L, 1.0)
    np.testing.assert_allclose(dd, ref_dd, rtol=1e-15)
    np.testing.assert_allclose(S, 2.0 * np.eye(len(A)) - L, rtol=1e-14, atol=1e-16)


def test_normalization_float32_and_bad_affinities():
    A = sk_rbf_kernel(make_blobs(50, random_state=0)[0]).astype(np.float32)
    S = np.empty_like(A)
    dd = np.asarray(_core.spectral_normalize(_core.Context("cpu", 1, "identical"), A, S))
    S64, dd64 = _normalize(A.astype(np.float64))
    assert dd.tobytes() == dd64.tobytes()  # degrees in double from the exact upcast
    assert S.tobytes() == S64.astype(np.float32).tobytes()
    bad = -np.ones((4, 4))
    with pytest.raises(ValueError, match="non-negative row sums"):
        _normalize(bad)
    with pytest.raises(ValueError, match="square"):
        _core.spectral_normalize(_core.Context("cpu", 1, "identical"), np.ones((3, 4)), np.ones((3, 4)))


# -- the sign rule --------------------------------------------------------------------
def test_embedding_signs_follow_sklearns_rule():
    from sklearn.utils.extmath import _deterministic_vector_sign_flip

    X, _ = make_blobs(200, centers=3, random_state=2)
    est = SpectralClustering(3, gamma=0.3, random_state=0, device="cpu")
    A = sk_rbf_kernel(X, gamma=0.3)
    emb = est._embedding(A, 3, "cpu", 0)
    # Whatever signs the eigensolver leaves, the rule fixes them: the largest
    # magnitude entry of every vector is positive, as scikit-learn's flip gives.
    assert np.array_equal(_deterministic_vector_sign_flip(emb.T.copy()), emb.T)
    idx = np.abs(emb).argmax(axis=0)
    assert (emb[idx, np.arange(3)] > 0).all()
    # and the embedding is scikit-learn's, up to the eigensolver's rounding
    from sklearn.manifold import spectral_embedding

    ref = spectral_embedding(A, n_components=3, norm_laplacian=True, drop_first=False, random_state=0)
    np.testing.assert_allclose(np.abs(emb), np.abs(ref), atol=1e-6)
    np.testing.assert_allclose(emb, ref, atol=1e-6)


# -- identity ---------------------------------------------------------------------------
def _blobs(n, d=4, centers=3, seed=0):
    return make_blobs(n, centers=centers, n_features=d, random_state=seed)[0]


IDENTITY_CASES = {
    "rbf-dense": (lambda: SpectralClustering(3, gamma=0.2, random_state=0, n_init=2), lambda: _blobs(200)),
    "rbf-subspace": (lambda: SpectralClustering(3, gamma=0.2, random_state=0, n_init=2), lambda: _blobs(500)),
    "nn-lobpcg": (lambda: SpectralClustering(2, affinity="nearest_neighbors", eigen_solver="lobpcg",
                                             random_state=0, n_init=2),
                  lambda: make_moons(400, noise=0.05, random_state=0)[0]),
    "discretize": (lambda: SpectralClustering(3, gamma=0.2, random_state=0, assign_labels="discretize"),
                   lambda: _blobs(200)),
}


@pytest.mark.parametrize("case", sorted(IDENTITY_CASES))
def test_identical_across_threads(case):
    factory, data = IDENTITY_CASES[case]
    assert_identical_across_threads(factory, data(), threads=(1, 2, 3))


def test_identity_of_normalization_across_threads():
    A = _hostile_affinity(n=300, seed=4)
    S1, d1 = _normalize(A, threads=1)
    for t in (2, 3):
        S2, d2 = _normalize(A, threads=t)
        assert S1.tobytes() == S2.tobytes() and d1.tobytes() == d2.tobytes()


def test_deterministic_run_to_run_and_seeded():
    X = _blobs(500)
    a = SpectralClustering(3, gamma=0.2, random_state=0, device="cpu").fit(X)
    b = SpectralClustering(3, gamma=0.2, random_state=0, device="cpu").fit(X)
    assert a.labels_.tobytes() == b.labels_.tobytes()
    assert a.numeric_mode_used() == "deterministic"


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(IDENTITY_CASES))
def test_identical_across_devices(case):
    factory, data = IDENTITY_CASES[case]
    assert_identical_across_devices(factory, data())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalization_same_bits_on_gpu(dtype):
    from twinlearn.testing import skip_without_gpu

    skip_without_gpu()
    from twinlearn import _cuda

    A = _hostile_affinity(n=333, seed=5).astype(dtype)
    S_cpu = np.empty_like(A)
    d_cpu = np.asarray(_core.spectral_normalize(_core.Context("cpu", 2, "identical"), A, S_cpu))
    S_gpu = np.empty_like(A)
    d_gpu = np.asarray(_cuda.spectral_normalize(_cuda.Context("cuda:0", 2, "identical"), A, S_gpu))
    assert S_cpu.tobytes() == S_gpu.tobytes() and d_cpu.tobytes() == d_gpu.tobytes()


# -- parameters and bad input --------------------------------------------------------------
def test_amg_raises():
    with pytest.raises(ValueError, match="amg"):
        SpectralClustering(2, eigen_solver="amg", device="cpu").fit(_blobs(50))


def test_invalid_parameters_raise():
    X = _blobs(50)
    for kw in (dict(affinity="bogus"), dict(assign_labels="bogus"), dict(n_clusters=0), dict(eigen_solver="x")):
        with pytest.raises(ValueError):
            SpectralClustering(device="cpu", **kw).fit(X)


def test_bad_input_raises():
    X = _blobs(50)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SpectralClustering(2, device="cpu").fit(Xn)
    with pytest.raises(ValueError, match="sample"):
        SpectralClustering(2, device="cpu").fit(X[:1])
    with pytest.raises(ValueError, match="square"):
        SpectralClustering(2, affinity="precomputed", device="cpu").fit(X[:, :3])
    with pytest.raises(ValueError, match="non-negative row sums"):
        SpectralClustering(2, affinity="precomputed", device="cpu").fit(-np.ones((10, 10)))


def test_warnings_as_sklearn():
    with pytest.warns(UserWarning, match="API has changed"):
        SpectralClustering(2, device="cpu", random_state=0).fit(np.random.default_rng(0).random((30, 30)))
    A = np.zeros((20, 20))
    A[:10, :10] = A[10:, 10:] = 1.0
    with pytest.warns(UserWarning, match="not fully connected"):
        est = SpectralClustering(2, affinity="precomputed", random_state=0, device="cpu").fit(A)
    assert adjusted_rand_score(np.repeat([0, 1], 10), est.labels_) == 1.0


def test_n_jobs_is_the_thread_count():
    X = _blobs(300)
    est = SpectralClustering(3, gamma=0.2, random_state=0, n_jobs=1, device="cpu").fit(X)
    with twinlearn.config_context(n_threads=2):
        est2 = SpectralClustering(3, gamma=0.2, random_state=0, device="cpu").fit(X)
    assert est.labels_.tobytes() == est2.labels_.tobytes()


def test_accelerator_serves_defaults():
    from sklearn.cluster import SpectralClustering as Sk

    from twinlearn import accel

    X = _blobs(600)
    est = accel.accelerate(Sk(n_clusters=3, gamma=0.2, random_state=0))
    est.fit(X)
    assert isinstance(est, Sk)
    ref = Sk(n_clusters=3, gamma=0.2, random_state=0).fit(X)
    assert adjusted_rand_score(ref.labels_, est.labels_) >= ARI
    assert est.affinity_matrix_.shape == (600, 600)
