"""PCA's host-side model arithmetic (get_covariance, get_precision,
score_samples) gives the same bits whatever BLAS kernel NumPy picks, in
identical mode: the separating arm evaluates one fitted model (pickled) under
two OpenBLAS core types, which change the bits of a plain matrix product.
(The fit's small eigendecomposition still goes through LAPACK: not covered here.)"""

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
