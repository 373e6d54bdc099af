"""The host steps of the decompositions give the same bits whatever BLAS or
LAPACK kernel NumPy picks, in identical mode: PCA's model arithmetic
(get_covariance, get_precision, score_samples) and the fits themselves (PCA's
solvers, IncrementalPCA, TruncatedSVD: the Jacobi eigensolver and SVD, the
Householder QR and the canonical products of twinlearn/core/jacobi.hpp
instead of LAPACK and BLAS). The separating arm runs the same code under two
OpenBLAS core types, which change the bits of a plain matrix product and of
LAPACK's results (deterministic mode), and under every TWINLEARN_CPU_ISA cap
and two thread counts."""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from twinlearn import _hostmath

_PROBE = textwrap.dedent(
    """
    import hashlib, json, pickle, sys
    import numpy as np

    def h(a):
        return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()

    rng = np.random.default_rng(0)
    A = rng.standard_normal((400, 37))
    Xt = rng.standard_normal((300, 24))
    out = {"probe": h(A @ A.T)}
    est = pickle.load(open(sys.argv[1], "rb"))
    for mode in ("identical", "deterministic"):
        est.set_params(numeric_mode=mode)
        out[mode] = [h(est.score_samples(Xt)), h(est.get_precision()), h(est.get_covariance())]
    print(json.dumps(out))
    """
)


def _run(coretype, model):
    env = dict(os.environ, OPENBLAS_CORETYPE=coretype)
    r = subprocess.run([sys.executable, "-c", _PROBE, str(model)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_identical_mode_bits_do_not_depend_on_the_blas_kernel(tmp_path):
    import twinlearn as tl

    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 24)) * rng.uniform(0.5, 3.0, 24)
    model = tmp_path / "pca.pkl"
    model.write_bytes(pickle.dumps(tl.PCA(n_components=5, device="cpu").fit(X)))
    a, b = _run("Haswell", model), _run("Nehalem", model)
    if a["probe"] == b["probe"]:
        pytest.skip("NumPy's BLAS gives the same bits under both core types here: nothing to separate")
    # The separating arm: the BLAS path (deterministic mode) moves with the kernel ...
    assert a["deterministic"] != b["deterministic"]
    # ... identical mode does not.
    assert a["identical"] == b["identical"]


def test_host_math_agrees_with_blas():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((50, 7)), rng.standard_normal((7, 9))
    np.testing.assert_allclose(_hostmath.matmul(A, B), A @ B, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(_hostmath.row_sums(A), A.sum(axis=1), rtol=1e-13, atol=1e-13)
    M = A.T @ A + np.eye(7)
    L = _hostmath.cholesky(M)
    np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_hostmath.spd_inverse(L), np.linalg.inv(M), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_hostmath.logdet_from_cholesky(L), np.linalg.slogdet(M)[1], rtol=1e-12)
    assert _hostmath.cholesky(-M) is None
    with pytest.raises(ValueError, match="do not align"):
        _hostmath.matmul(A, A)


def test_identical_score_samples_close_to_scikit_learn():
    from sklearn.decomposition import PCA as SkPCA

    import twinlearn as tl

    rng = np.random.default_rng(2)
    X = rng.standard_normal((500, 12)) * rng.uniform(0.5, 3.0, 12)
    ours = tl.PCA(n_components=4, device="cpu", numeric_mode="identical").fit(X)
    ref = SkPCA(n_components=4, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X), rtol=1e-9)
    np.testing.assert_allclose(ours.get_precision(), ref.get_precision(), rtol=1e-8, atol=1e-10)


# -- the fits ------------------------------------------------------------------

_FIT_PROBE = textwrap.dedent(
    """
    import hashlib, json
    import numpy as np
    import twinlearn as tl

    def h(a):
        return hashlib.sha256(np.ascontiguousarray(np.asarray(a)).tobytes()).hexdigest()

    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 24)) * rng.uniform(0.5, 3.0, 24)
    Xs = rng.standard_normal((400, 24)) * rng.uniform(0.5, 3.0, 24)
    Xw = rng.standard_normal((40, 300)) * rng.uniform(0.5, 3.0, 300)
    Xt = rng.standard_normal((1200, 1100))
    kw = dict(device="cpu")
    cases = {
        # PCA: covariance_eigh (Jacobi eigensolver), full and arpack with
        # n < d (Jacobi SVD), randomized on AᵀA, on AAᵀ and on tall iterates
        # (QR, products, eigensolver, SVD on the host).
        "pca_covariance_eigh": (lambda m: tl.PCA(5, svd_solver="covariance_eigh", numeric_mode=m, **kw), X),
        "pca_full": (lambda m: tl.PCA(5, svd_solver="full", numeric_mode=m, **kw), Xs),
        "pca_arpack_wide": (lambda m: tl.PCA(5, svd_solver="arpack", numeric_mode=m, **kw), Xw),
        "pca_randomized_gram": (lambda m: tl.PCA(5, svd_solver="randomized", random_state=0, numeric_mode=m, **kw), X),
        "pca_randomized_left": (lambda m: tl.PCA(5, svd_solver="randomized", random_state=0, numeric_mode=m, **kw),
                                Xw),
        "pca_randomized_tall": (lambda m: tl.PCA(2, svd_solver="randomized", iterated_power=2, random_state=0,
                                                 numeric_mode=m, **kw), Xt),
        "ipca": (lambda m: tl.IncrementalPCA(5, batch_size=500, numeric_mode=m, **kw), X),
        "tsvd_randomized": (lambda m: tl.TruncatedSVD(5, random_state=0, numeric_mode=m, **kw), X),
        "tsvd_arpack_wide": (lambda m: tl.TruncatedSVD(5, algorithm="arpack", numeric_mode=m, **kw), Xw),
    }
    A = rng.standard_normal((400, 37))
    out = {"probe": h(A @ A.T)}
    for mode in ("identical", "deterministic"):
        for name, (make, data) in cases.items():
            est = make(mode).fit(data)
            out[f"{mode}/{name}"] = [h(est.components_), h(est.explained_variance_), h(est.singular_values_),
                                     h(est.transform(data[:50]))]
    print(json.dumps(out))
    """
)


def _run_fits(**env):
    r = subprocess.run([sys.executable, "-c", _FIT_PROBE], env=dict(os.environ, **env), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _split(res, mode):
    return {k: v for k, v in res.items() if k.startswith(mode + "/")}


def test_identical_fits_do_not_depend_on_the_blas_kernel_isa_or_threads():
    a = _run_fits(OPENBLAS_CORETYPE="Haswell", TWINLEARN_NUM_THREADS="2")
    b = _run_fits(OPENBLAS_CORETYPE="Nehalem", TWINLEARN_NUM_THREADS="2")
    if a["probe"] == b["probe"]:
        pytest.skip("NumPy's BLAS gives the same bits under both core types here: nothing to separate")
    # The separating arm: LAPACK and BLAS (deterministic mode) move with the kernel ...
    det_a, det_b = _split(a, "deterministic"), _split(b, "deterministic")
    moved = [k for k in det_a if det_a[k] != det_b[k]]
    assert moved, "no deterministic-mode fit moved with the BLAS kernel"
    # ... identical mode does not, in any fit, nor under another instruction
    # set cap or thread count.
    assert _split(a, "identical") == _split(b, "identical")
    for isa, threads in (("baseline", "1"), ("avx2", "2"), ("avx512", "1")):
        c = _run_fits(OPENBLAS_CORETYPE="Haswell", TWINLEARN_CPU_ISA=isa, TWINLEARN_NUM_THREADS=threads)
        assert _split(c, "identical") == _split(a, "identical"), (isa, threads)


# -- the fixed-order factorizations against LAPACK ------------------------------

EPS = np.finfo(np.float64).eps


def _with_spectrum(lam, seed):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(lam), len(lam))))
    A = (Q * np.asarray(lam, dtype=np.float64)) @ Q.T
    return 0.5 * (A + A.T)


def _hard_matrices():
    rng = np.random.default_rng(3)
    out = {}
    for d in (1, 2, 64, 256):
        G = rng.standard_normal((d, d))
        out[f"random{d}"] = G + G.T
    d = 64
    out["repeated"] = _with_spectrum(np.r_[np.full(30, 3.0), 1.0 + 1e-13 * np.arange(30), np.full(4, -2.0)], 1)
    out["rank_deficient"] = _with_spectrum(np.r_[np.arange(1.0, 49.0), np.zeros(16)], 2)
    out["dynamic_range"] = _with_spectrum(10.0 ** -np.linspace(0, 30, d), 4)
    out["zero"] = np.zeros((5, 5))
    X = rng.standard_normal((500, 12)) @ rng.standard_normal((12, 40))  # a covariance of rank 12
    out["covariance_rank12"] = np.cov(X, rowvar=False)
    return out


@pytest.mark.parametrize("name", list(_hard_matrices()))
def test_jacobi_eigh_against_lapack(name):
    from twinlearn.decomposition import _solvers

    A = _hard_matrices()[name]
    d = len(A)
    w, V = _solvers.eigh_desc(A, exact=True)
    ref = np.linalg.eigh(A)[0][::-1]
    norm = max(np.linalg.norm(A, 2), np.finfo(float).tiny)
    tol = 8 * d * EPS * norm
    np.testing.assert_allclose(w, ref, rtol=0, atol=tol)
    assert np.all(np.diff(w) <= 0)
    np.testing.assert_allclose(A @ V - V * w, 0.0, atol=tol)
    np.testing.assert_allclose(V.T @ V, np.eye(d), atol=8 * d * EPS)
    # A k argument computes them all (the caller takes what it needs).
    assert _solvers.eigh_desc(A, k=1, exact=True)[0].shape == (d,)


@pytest.mark.parametrize("shape,rank", [((200, 24), 24), ((24, 200), 24), ((50, 50), 50), ((80, 16), 5),
                                        ((1, 7), 1), ((7, 1), 1)])
def test_jacobi_svd_and_qr_against_lapack(shape, rank):
    from twinlearn.decomposition import _solvers

    rng = np.random.default_rng(5)
    A = rng.standard_normal((shape[0], rank)) @ (rng.standard_normal((rank, shape[1])) * np.logspace(0, -6, shape[1]))
    U, s, Vt = _solvers.host_svd(A, exact=True)
    ref = np.linalg.svd(A, compute_uv=False)
    tol = 8 * max(shape) * EPS * ref[0]
    np.testing.assert_allclose(s, ref, rtol=0, atol=tol)
    np.testing.assert_allclose((U * s) @ Vt, A, atol=tol)
    np.testing.assert_allclose(Vt[:rank] @ Vt[:rank].T, np.eye(rank), atol=1e-8)
    assert _solvers.host_svd(A, exact=True, compute_u=False)[0] is None
    if shape[0] >= shape[1]:
        Q = _solvers.host_qr(A, exact=True)
        np.testing.assert_allclose(Q.T @ Q, np.eye(shape[1]), atol=16 * shape[0] * EPS)
        if rank == shape[1]:
            np.testing.assert_allclose(Q @ (Q.T @ A), A, atol=tol)


def test_jacobi_bindings_reject_bad_input_and_pass_nan():
    from twinlearn import _backend

    core = _backend.core()
    with pytest.raises(ValueError, match="square"):
        core.jacobi_eigh(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="float64"):
        core.jacobi_eigh(np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        core.jacobi_svd(np.zeros((4, 3))[:, ::2].T)
    with pytest.raises(ValueError, match="at least as many rows"):
        core.jacobi_qr_q(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="max_sweeps"):
        core.jacobi_eigh(np.eye(2), 0)
    w, V, sweeps, converged = core.jacobi_eigh(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    assert np.isnan(w).all() and np.isnan(V).all() and converged and sweeps == 0
    # The sweep limit is reported (not converged).
    A = _with_spectrum([3.0, 2.0, 1.0], 0)
    assert core.jacobi_eigh(A, 1)[3] is False


def _fits(mode):
    import twinlearn as tl

    rng = np.random.default_rng(7)
    X = rng.standard_normal((600, 20)) * rng.uniform(0.5, 3.0, 20)
    Xw = rng.standard_normal((30, 120))
    kw = dict(device="cpu", numeric_mode=mode)
    return {
        "pca_cov": tl.PCA(6, svd_solver="covariance_eigh", **kw).fit(X),
        "pca_full": tl.PCA(6, svd_solver="full", **kw).fit(X),
        "pca_full_wide": tl.PCA(6, svd_solver="full", **kw).fit(Xw),
        "pca_arpack": tl.PCA(6, svd_solver="arpack", **kw).fit(X),
        "pca_randomized": tl.PCA(6, svd_solver="randomized", random_state=0, **kw).fit(X),
        "pca_randomized_wide": tl.PCA(6, svd_solver="randomized", random_state=0, **kw).fit(Xw),
        "ipca": tl.IncrementalPCA(6, batch_size=150, **kw).fit(X),
        "tsvd": tl.TruncatedSVD(6, random_state=0, **kw).fit(X),
        "tsvd_arpack_wide": tl.TruncatedSVD(6, algorithm="arpack", **kw).fit(Xw),
    }


def test_identical_fits_agree_with_the_lapack_fits():
    ours, ref = _fits("identical"), _fits("deterministic")
    for name in ours:
        a, b = ours[name], ref[name]
        np.testing.assert_allclose(a.explained_variance_, b.explained_variance_, rtol=1e-10, err_msg=name)
        np.testing.assert_allclose(a.singular_values_, b.singular_values_, rtol=1e-10, err_msg=name)
        # The same sign rule: the same components up to rounding.
        np.testing.assert_allclose(a.components_, b.components_, atol=1e-8, err_msg=name)
