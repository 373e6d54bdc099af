"""PCA: agreement with scikit-learn (values and signs), its errors, the
probabilistic model, check_estimator, and CPU-versus-GPU bit identity."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.decomposition import PCA as SkPCA
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn import PCA
from twinlearn.testing import bits


def spectrum_data(n=600, d=24, dtype=np.float64, seed=0, offset=3.0):
    """Random data with a clear spectrum: well separated variances under a rotation."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    scales = 20.0 * 0.7 ** np.arange(d)
    return ((rng.standard_normal((n, d)) * scales) @ q.T + offset * rng.standard_normal(d)).astype(dtype)


def digits(dtype):
    return load_digits().data.astype(dtype)


def iris(dtype):
    return load_iris().data.astype(dtype)


DATASETS = {
    "spectrum": (spectrum_data, 8),
    "digits": (lambda dt: digits(dt), 10),
    "iris": (lambda dt: iris(dt), 3),
}


def tol_for(dtype):
    return 1e-4 if dtype == np.float32 else 1e-8


def assert_close(a, b, tol, what):
    b = np.asarray(b, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    scale = np.abs(b).max() if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, err_msg=what)


def reference(X, **params):
    """scikit-learn on the same values in float64 (the float32 data rounded first)."""
    return SkPCA(**params).fit(X.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dataset", list(DATASETS))
@pytest.mark.parametrize("solver", ["full", "covariance_eigh", "arpack", "auto"])
def test_matches_scikit_learn(dtype, dataset, solver):
    make, k = DATASETS[dataset]
    X = make(dtype) if dataset != "spectrum" else make(dtype=dtype)
    ours = PCA(n_components=k, svd_solver=solver, device="cpu").fit(X)
    ref = reference(X, n_components=k, svd_solver=solver)
    tol = tol_for(dtype)
    # Signs included: scikit-learn's svd_flip rule is followed.
    assert_close(ours.components_, ref.components_, tol, "components_")
    for attr in ("explained_variance_", "explained_variance_ratio_", "singular_values_", "mean_"):
        assert_close(getattr(ours, attr), getattr(ref, attr), tol, attr)
    assert_close(ours.noise_variance_, ref.noise_variance_, tol * 10, "noise_variance_")
    assert ours.components_.dtype == dtype and ours.explained_variance_.dtype == dtype
    assert ours.n_components_ == ref.n_components_ and ours.n_samples_ == ref.n_samples_
    assert_close(ours.transform(X), ref.transform(X.astype(np.float64)), tol * 10, "transform")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dataset", ["spectrum", "iris"])
def test_randomized_matches_scikit_learn(dtype, dataset):
    # Different random projections: with enough power iterations on a clear
    # spectrum both land on the exact components.
    make, k = DATASETS[dataset]
    X = make(dtype) if dataset != "spectrum" else make(dtype=dtype)
    k = min(k, 3)
    params = dict(n_components=k, svd_solver="randomized", iterated_power=12, random_state=0)
    ours = PCA(device="cpu", **params).fit(X)
    ref = reference(X, **params)
    tol = tol_for(dtype)
    assert_close(ours.components_, ref.components_, tol, "components_")
    for attr in ("explained_variance_", "explained_variance_ratio_", "singular_values_", "noise_variance_"):
        assert_close(getattr(ours, attr), getattr(ref, attr), tol, attr)


@pytest.mark.parametrize("shape", [(300, 40), (40, 300)])
@pytest.mark.parametrize("normalizer", ["auto", "QR", "LU", "none"])
def test_randomized_sides_and_normalizers(shape, normalizer):
    # Tall data works on XᵀX, wide data on XXᵀ (scikit-learn's transpose).
    n, d = shape
    rng = np.random.default_rng(4)
    X = (rng.standard_normal((n, 6)) * [50, 30, 20, 10, 5, 2]) @ rng.standard_normal((6, d)) + rng.standard_normal(
        (n, d)
    ) * 0.01
    params = dict(n_components=4, svd_solver="randomized", power_iteration_normalizer=normalizer, random_state=1)
    ours = PCA(device="cpu", **params).fit(X)
    exact = SkPCA(n_components=4, svd_solver="full").fit(X)
    assert_close(ours.components_, exact.components_, 1e-7, "components_")
    assert_close(ours.explained_variance_, exact.explained_variance_, 1e-9, "explained_variance_")
    assert_close(ours.noise_variance_, SkPCA(**params).fit(X).noise_variance_, 1e-6, "noise_variance_")


def test_randomized_tall_iterates_route(monkeypatch):
    # Large min(n, d) uses tall iterates on the backend instead of a Gram
    # matrix: forced here on small data, against the exact answer.
    from twinlearn.decomposition import _solvers

    monkeypatch.setattr(_solvers, "MAX_GRAM_SIDE", 4)
    for dtype, tol in [(np.float64, 1e-7), (np.float32, 1e-4)]:
        X = spectrum_data(n=800, d=30, dtype=dtype)
        for normalizer in ["auto", "QR", "none"]:
            ours = PCA(5, svd_solver="randomized", power_iteration_normalizer=normalizer, iterated_power=8,
                       random_state=3, device="cpu").fit(X)
            exact = reference(X, n_components=5, svd_solver="full")
            assert_close(ours.components_, exact.components_, tol, "components_")
            assert_close(ours.singular_values_, exact.singular_values_, tol, "singular_values_")


def test_randomized_low_rank_completes_components():
    # Rank 2 data, 4 components: the extra two are orthonormal with zero variance.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 2)) @ rng.standard_normal((2, 30))
    p = PCA(4, svd_solver="randomized", random_state=0, device="cpu").fit(X)
    np.testing.assert_allclose(p.components_ @ p.components_.T, np.eye(4), atol=1e-10)
    assert np.all(p.explained_variance_[2:] < 1e-20)


def test_randomized_seed_and_threads():
    X = spectrum_data(n=500, d=60)
    a = PCA(5, svd_solver="randomized", iterated_power=1, random_state=7, device="cpu").fit(X)
    with twinlearn.config_context(n_threads=1):
        b = PCA(5, svd_solver="randomized", iterated_power=1, random_state=7, device="cpu").fit(X)
    c = PCA(5, svd_solver="randomized", iterated_power=1, random_state=8, device="cpu").fit(X)
    assert bits(a.components_) == bits(b.components_)
    # Separating arm: one power iteration leaves the projection's trace in the
    # result, so another seed gives other bits (the seed is really used).
    assert bits(a.components_) != bits(c.components_)


@pytest.mark.parametrize("n_components", [0.5, 0.95, 0.999, "mle"])
def test_n_components_selection(n_components):
    X = digits(np.float64)
    ours = PCA(n_components=n_components, svd_solver="full", device="cpu").fit(X)
    ref = SkPCA(n_components=n_components, svd_solver="full").fit(X)
    assert ours.n_components_ == ref.n_components_
    assert_close(ours.explained_variance_, ref.explained_variance_, 1e-8, "explained_variance_")
    assert_close(ours.noise_variance_, ref.noise_variance_, 1e-8, "noise_variance_")


def test_none_keeps_everything():
    X = spectrum_data(n=30, d=10)
    for solver in ["full", "covariance_eigh", "auto"]:
        p = PCA(svd_solver=solver, device="cpu").fit(X)
        assert p.n_components_ == 10 and p.noise_variance_ == 0.0
        assert_close(p.explained_variance_ratio_.sum(), 1.0, 1e-12, "ratio")
    p = PCA(svd_solver="arpack", device="cpu").fit(X)
    assert p.n_components_ == 9


@pytest.mark.parametrize(
    "params, shape, match",
    [
        ({"n_components": 11, "svd_solver": "full"}, (20, 10), "must be between 0 and"),
        ({"n_components": 21, "svd_solver": "covariance_eigh"}, (20, 30), "must be between 0 and"),
        ({"n_components": 0, "svd_solver": "randomized"}, (20, 10), "must be between 1 and"),
        ({"n_components": 11, "svd_solver": "randomized"}, (20, 10), "must be between 1 and"),
        ({"n_components": 10, "svd_solver": "arpack"}, (20, 10), "strictly less than"),
        ({"n_components": "mle", "svd_solver": "full"}, (5, 10), "only supported if n_samples >= n_features"),
        ({"n_components": "mle", "svd_solver": "randomized"}, (20, 10), "cannot be a string"),
        ({"n_components": "mle", "svd_solver": "arpack"}, (20, 10), "cannot be a string"),
        ({"n_components": -1}, (20, 10), "n_components"),
        ({"n_components": 1.5}, (20, 10), "n_components"),
        ({"svd_solver": "lobpcg"}, (20, 10), "svd_solver"),
        ({"device": "tpu"}, (20, 10), "device"),
    ],
)
def test_errors_as_scikit_learn(params, shape, match):
    X = np.random.default_rng(0).standard_normal(shape)
    params = dict(params)
    ours_only = "device" in params or params.get("svd_solver") == "lobpcg"
    with pytest.raises(ValueError, match=match):
        PCA(**{"device": "cpu", **params}).fit(X)
    if not ours_only:
        with pytest.raises(ValueError, match=match):
            SkPCA(**params).fit(X)


def test_mle_edge_cases():
    # A rank-deficient spectrum: Minka's estimate as scikit-learn's.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3)) @ rng.standard_normal((3, 8)) + 1e-3 * rng.standard_normal((200, 8))
    for solver in ["full", "covariance_eigh", "auto"]:
        ours = PCA("mle", svd_solver=solver, device="cpu").fit(X)
        assert ours.n_components_ == SkPCA("mle", svd_solver=solver).fit(X).n_components_ == 3
    # One feature: the estimate stays in [1, n_features - 1] as scikit-learn's.
    X1 = rng.standard_normal((50, 2))
    assert PCA("mle", device="cpu").fit(X1).n_components_ == SkPCA("mle").fit(X1).n_components_


@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("solver", ["full", "covariance_eigh", "randomized"])
def test_model_methods_match_scikit_learn(whiten, solver):
    X = spectrum_data(n=400, d=12)
    params = dict(n_components=5, whiten=whiten, svd_solver=solver, iterated_power=15, random_state=0)
    ours = PCA(device="cpu", **params).fit(X)
    ref = SkPCA(**params).fit(X)
    Z = ours.transform(X)
    assert_close(Z, ref.transform(X), 1e-8, "transform")
    assert_close(ours.fit_transform(X), Z, 1e-12, "fit_transform")
    assert_close(ours.inverse_transform(Z), ref.inverse_transform(ref.transform(X)), 1e-8, "inverse_transform")
    assert_close(ours.get_covariance(), ref.get_covariance(), 1e-8, "get_covariance")
    assert_close(ours.get_precision(), ref.get_precision(), 1e-7, "get_precision")
    assert_close(ours.score_samples(X), ref.score_samples(X), 1e-8, "score_samples")
    assert abs(ours.score(X) - ref.score(X)) <= 1e-8 * abs(ref.score(X))
    if whiten:
        np.testing.assert_allclose(Z.var(axis=0, ddof=1), 1.0, rtol=1e-8)


def test_float32_transform_dtype_and_pickle():
    X = spectrum_data(dtype=np.float32)
    p = PCA(4, device="cpu").fit(X)
    assert p.transform(X).dtype == np.float32 and p.inverse_transform(p.transform(X)).dtype == np.float32
    q = pickle.loads(pickle.dumps(p))
    assert bits(q.transform(X)) == bits(p.transform(X))


def test_transform_checks_features():
    X = spectrum_data(n=50, d=6)
    p = PCA(2, device="cpu").fit(X)
    with pytest.raises(ValueError, match="features"):
        p.transform(X[:, :5])
    with pytest.raises(ValueError, match="features"):
        p.inverse_transform(X[:, :3])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        p.transform(Xn)
    with pytest.raises(ValueError, match="NaN"):
        PCA(2, device="cpu").fit(Xn)


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(PCA(device="cpu"))
        check_estimator(PCA(n_components=2, svd_solver="randomized", random_state=0, device="cpu"))
        check_estimator(PCA(whiten=True, svd_solver="covariance_eigh", device="cpu"))


def test_numeric_mode_used_on_cpu():
    X = spectrum_data(n=100, d=5)
    assert PCA(2, device="cpu", numeric_mode="fast").fit(X).numeric_mode_used() == "identical"


SOLVER_PARAMS = [
    {"svd_solver": "covariance_eigh"},
    {"svd_solver": "full"},
    {"svd_solver": "randomized", "random_state": 3},
    {"svd_solver": "arpack"},
    {"svd_solver": "covariance_eigh", "whiten": True},
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("params", SOLVER_PARAMS)
def test_identical_on_every_backend(device, dtype, params):
    # In identical mode the fitted attributes and the projections are the
    # same bits on the CPU backend and on the GPU.
    X = spectrum_data(n=3000, d=40, dtype=dtype, offset=50.0)
    ref = PCA(6, device="cpu", numeric_mode="identical", **params).fit(X)
    ours = PCA(6, device=device, numeric_mode="identical", **params).fit(X)
    assert ours.numeric_mode_used() == "identical"
    for attr in ("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_", "mean_",
                 "noise_variance_"):
        assert bits(getattr(ours, attr)) == bits(getattr(ref, attr)), attr
    assert bits(ours.transform(X)) == bits(ref.transform(X))
    assert bits(ours.inverse_transform(ours.transform(X))) == bits(ref.inverse_transform(ref.transform(X)))


def test_identical_wide_randomized(device):
    X = spectrum_data(n=60, d=700, offset=1.0)
    params = dict(n_components=5, svd_solver="randomized", random_state=0, numeric_mode="identical")
    ref = PCA(device="cpu", **params).fit(X)
    ours = PCA(device=device, **params).fit(X)
    assert bits(ours.components_) == bits(ref.components_)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_components", [8, 0.99])
def test_fast_mode_on_gpu(dtype, n_components):
    # 8 of 64: the k largest eigenpairs; 0.99: all of them, then the
    # selection (the covariance is diagonalized by cuSOLVER on the GPU in
    # fast mode).
    X = spectrum_data(n=20000, d=64, dtype=dtype, offset=30.0)
    fast = PCA(n_components, device="cuda:0", numeric_mode="fast").fit(X)
    assert fast.numeric_mode_used() == "fast"
    ref = reference(X, n_components=n_components)
    assert fast.n_components_ == ref.n_components_
    assert_close(fast.components_, ref.components_, tol_for(dtype), "components_")
    assert_close(fast.explained_variance_, ref.explained_variance_, tol_for(dtype), "explained_variance_")
    assert_close(fast.explained_variance_ratio_, ref.explained_variance_ratio_, tol_for(dtype), "ratio")
    assert_close(np.atleast_1d(fast.noise_variance_), np.atleast_1d(ref.noise_variance_), tol_for(dtype), "noise")


def on_device(mod, lib, X):
    """X as a CuPy array or a PyTorch CUDA tensor (skips without CUDA PyTorch)."""
    if lib == "torch":
        if not mod.cuda.is_available():
            pytest.skip("PyTorch without CUDA")
        return mod.as_tensor(X, device="cuda")
    return mod.asarray(X)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_device_arrays_stay_on_device(lib):
    mod = pytest.importorskip(lib)
    X = spectrum_data(n=2000, d=20, dtype=np.float32)
    Xd = on_device(mod, lib, X)
    p = PCA(5, numeric_mode="identical").fit(Xd)
    assert p.device_used() == "cuda:0"
    out = p.transform(Xd)
    host = out.get() if lib == "cupy" else out.cpu().numpy()
    ref = PCA(5, device="cpu", numeric_mode="identical").fit(X)
    assert bits(p.components_) == bits(ref.components_)
    assert bits(host) == bits(ref.transform(X))


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("name", ["PCA", "IncrementalPCA"])
def test_score_samples_in_the_callers_array_type(lib, name):
    """score_samples mirrors its input's array type, as transform does (the
    log-likelihoods are computed on the host: the same bits as for NumPy)."""
    from twinlearn import IncrementalPCA

    mod = pytest.importorskip(lib)
    X = spectrum_data(n=2000, d=20)
    Xd = on_device(mod, lib, X)
    est = (PCA if name == "PCA" else IncrementalPCA)(5, numeric_mode="identical").fit(Xd)
    out = est.score_samples(Xd)
    assert type(out) is type(Xd)
    host = out.get() if lib == "cupy" else out.cpu().numpy()
    assert bits(host) == bits(est.score_samples(X))
    assert isinstance(est.score(Xd), float) and est.score(Xd) == float(np.mean(host))


def test_nonfinite_found_by_column_stats():
    # Device input of PCA and TruncatedSVD is not searched for NaN and
    # infinities before the fit: the first pass, column_stats, counts them.
    from twinlearn import _backend
    from twinlearn._io import raise_nonfinite
    from twinlearn.decomposition._solvers import Backend

    core = _backend.core()
    backend = Backend(core, core.Context("cpu", 1, "identical"), "PCA")
    X = spectrum_data(n=40, d=5)
    n, _, _ = backend.column_stats(X, require_finite=True)
    assert (n == 40).all()
    for bad, msg in ((np.nan, "Input X contains NaN.\nPCA does not accept"), (np.inf, "infinity"),
                     (-np.inf, "infinity")):
        Xb = X.copy()
        Xb[7, 2] = bad
        with pytest.raises(ValueError, match=msg):
            backend.column_stats(Xb, require_finite=True)
        backend.column_stats(Xb)  # asked for nothing: no error
    # NaN is reported before infinities, as scikit-learn does.
    with pytest.raises(ValueError, match="NaN"):
        raise_nonfinite("PCA", 5, np.array([4, 5]), np.array([0, 1]))
    with pytest.raises(ValueError, match="infinity"):
        raise_nonfinite("PCA", 5, np.array([5, 4]), np.array([0, 1]))
    raise_nonfinite("PCA", 5, np.array([5, 5]), np.array([0, 0]))


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("name", ["PCA", "TruncatedSVD"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_device_nonfinite_input_raises_as_scikit_learn(lib, name, bad):
    from twinlearn.decomposition import TruncatedSVD

    mod = pytest.importorskip(lib)
    X = spectrum_data(n=300, d=8, dtype=np.float32)
    X[17, 3] = bad
    Xd = on_device(mod, lib, X)
    cls = PCA if name == "PCA" else TruncatedSVD
    msg = f"Input X contains NaN.\n{name} does not accept" if np.isnan(bad) else "Input X contains infinity"
    for mode in ("fast", "identical"):
        with pytest.raises(ValueError, match=msg):
            cls(2, device="cuda:0", numeric_mode=mode).fit(Xd)


@pytest.mark.parametrize("name", ["PCA", "TruncatedSVD"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_numpy_nonfinite_input_raises_as_scikit_learn(device, name, bad):
    """NumPy input is not searched for NaN and infinities before the fit: its
    column statistics count them, and the fit raises scikit-learn's error,
    word for word, for fit and fit_transform."""
    import sklearn.decomposition as skd
    from twinlearn.decomposition import TruncatedSVD

    X = spectrum_data(n=300, d=8, dtype=np.float32)
    X[17, 3] = bad
    X[40, 5] = np.inf if np.isnan(bad) else bad  # with NaN and infinity, NaN is named
    ours = PCA if name == "PCA" else TruncatedSVD
    with pytest.raises(ValueError) as theirs:
        getattr(skd, name)(2).fit(X)
    for call in ("fit", "fit_transform"):
        with pytest.raises(ValueError) as got:
            getattr(ours(2, device=device), call)(X)
        assert str(got.value) == str(theirs.value)


def test_kept_normal_matrices_are_the_draws_and_read_only():
    from twinlearn.decomposition import _solvers

    a = _solvers.normal_matrix(7, 50, 12)
    assert a is _solvers.normal_matrix(7, 50, 12)  # kept, not drawn again
    assert a.tobytes() == _solvers._draw_normal_matrix(7, 50, 12, 0).tobytes()
    assert _solvers.normal_matrix(7, 50, 12, 3).tobytes() != a.tobytes()
    with pytest.raises(ValueError):
        a[0, 0] = 1.0
