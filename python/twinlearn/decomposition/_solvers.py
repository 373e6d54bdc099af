"""Building blocks of the decompositions: the backend calls of a fit (column
statistics, Gram matrices, products, centring), the host eigen- and singular
value solvers they feed, scikit-learn's sign rule, and the randomized range
finder written on a Gram matrix or on tall iterates.

Where the work is (docs/NUMERICS.md, "Decompositions"): everything that reads
the n_samples x n_features data runs on the backend (the CPU backend or a GPU)
with the canonical kernels, or cuBLAS in fast mode; what is left is small
(n_features x n_features, or n x k with k the projection width) and runs on the
host in float64, the same code for both backends. In identical mode those
host steps use fixed-order code instead of LAPACK and BLAS, whose kernels
differ between CPU models: the Jacobi eigensolver and SVD and the Householder
QR of twinlearn/core/jacobi.hpp, and the CPU backend's canonical products
(host_matmul, host_qr, host_svd, eigh_desc with exact=True).
"""

from __future__ import annotations

import contextlib
import functools
from numbers import Integral

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state

from .. import _backend, identity
from .._io import (check_no_overflow, empty_like_kind, is_device_array, np_float_dtype, overflow_error,
                   raise_nonfinite, to_numpy)
from ..linalg._linalg import gram_matrix

#: Philox stream of the random projections (docs/NUMERICS.md, rule 5).
RNG_STREAM = 0x5043
#: Above this many rows and columns, the randomized solver works on tall
#: iterates instead of a Gram matrix (whose side, min(n_samples, n_features),
#: would make the host work and memory grow as its square).
MAX_GRAM_SIDE = 8192


class Staged:
    """A C-contiguous float matrix in GPU memory held by the backend itself:
    NumPy input of a GPU computation, copied once instead of once per pass.
    The bindings read it through DLPack."""

    __slots__ = ("_a", "shape", "dtype", "ndim")

    def __init__(self, a, shape, dtype):
        self._a, self.shape, self.dtype, self.ndim = a, tuple(shape), np.dtype(dtype), len(shape)

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class Backend:
    """The backend module and Context of one call, and the numeric mode that
    the call's products delivered (fast as soon as one product used cuBLAS)."""

    def __init__(self, mod, ctx, tag):
        self.mod, self.ctx, self.tag = mod, ctx, tag
        self._fast = False

    @property
    def on_gpu(self) -> bool:
        return self.ctx.device != "cpu"

    def stage(self, X):
        """X itself, or for NumPy input of a GPU computation a device copy (Staged)."""
        if self.on_gpu and isinstance(X, np.ndarray) and X.ndim == 2:
            X = np.ascontiguousarray(X)
            return Staged(self.mod.linalg_to_device(self.ctx, X), X.shape, X.dtype)
        return X

    def empty(self, like, shape, dtype):
        """An uninitialised array of like's kind: Staged for Staged, else the
        caller's array type (NumPy for host arrays)."""
        if isinstance(like, Staged):
            return Staged(self.mod.linalg_device_empty(self.ctx, shape[0], shape[1], np.dtype(dtype).name), shape,
                          dtype)
        return empty_like_kind(like, shape, dtype)

    def host(self, a):
        """a as a NumPy array (a Staged array is copied back)."""
        if isinstance(a, Staged):
            out = np.empty(a.shape, dtype=a.dtype)
            self.mod.linalg_prepare_rows(self.ctx, a, None, None, False, out)
            return out
        return to_numpy(a)

    def result(self, a):
        """What a method returns: Staged results come back as NumPy."""
        return self.host(a) if isinstance(a, Staged) else a

    def _note(self, mode):
        if mode == "fast":
            self._fast = True

    @property
    def delivered(self) -> str:
        return "fast" if self._fast else "identical"

    def record(self, stage, a):
        if identity.enabled():
            identity.record(f"{self.tag}.{stage}", self.host(a))

    def column_stats(self, X, require_finite=False):
        """(count, mean, m2) per column, float64 NumPy (canonical order).
        require_finite: scikit-learn's error when X holds NaN or infinities
        (the counts show them)."""
        w, mean, m2, n, ninf = np.asarray(self.mod.column_stats(self.ctx, X, None))
        if require_finite:
            raise_nonfinite(self.tag, X.shape[0], n, ninf, np_float_dtype(X))
        return n, mean, m2

    def stats_with_gram(self, X, center):
        """column_stats(X, require_finite=True) and, in the same call, the
        Gram matrix: gram(X, offset=mean rounded to X's dtype) with `center`,
        else gram(X). (count, mean, m2, G); the same bits as the two calls,
        except in fast mode on a GPU, where one pass over X gives both
        (gram_moments, twinlearn/core/gram.hpp)."""
        r = self.mod.gram_moments(self.ctx, X, None, bool(center))
        w, mean, m2, n, ninf = np.asarray(r.stats)
        raise_nonfinite(self.tag, X.shape[0], n, ninf, np_float_dtype(X))
        self._note(r.delivered)
        return n, mean, m2, self.check_overflow(X, "its Gram matrix overflows", np.asarray(r.gram))

    def check_overflow(self, X, what, *results, find_nan=True):
        """results (the first returned), unless one is not finite (only
        infinities count without `find_nan`): the overflow error for the
        finite X (products of pairs of its values, summed over its rows)."""
        check_no_overflow(self.tag, what, *results, dtype=np_float_dtype(X), power=2, terms=X.shape[0],
                          find_nan=find_nan)
        return results[0]

    def gram(self, X, offset=None):
        """(X - offset)ᵀ (X - offset), float64 NumPy (entries computed in X's dtype)."""
        if offset is not None:
            offset = np.ascontiguousarray(offset, dtype=np_float_dtype(X))
        G, mode = gram_matrix(self.mod, self.ctx, X, None, offset)
        self._note(mode)
        return self.check_overflow(X, "its Gram matrix overflows", G)

    @property
    def exact_host(self) -> bool:
        """Whether the host steps must give the same bits on every machine
        (identical mode): fixed-order factorizations and products instead of
        LAPACK and BLAS."""
        return self.ctx.mode == "identical"

    @property
    def eigh_on_device(self) -> bool:
        """Whether eigh_desc runs on the device (fast mode on a GPU)."""
        return self.on_gpu and self.ctx.mode == "fast"

    def eigh_desc(self, C, k=None):
        """:func:`eigh_desc` of the symmetric float64 NumPy C. In fast mode on
        a GPU, cuSOLVER's divide and conquer there (all eigenpairs, then the k
        largest); in identical mode the Jacobi eigensolver on the host, in
        deterministic mode (and fast mode on the CPU) LAPACK on the host, the
        same on both backends."""
        d = C.shape[0]
        if not (self.eigh_on_device and d > 1):
            return eigh_desc(C, k, self.tag, exact=self.exact_host)
        w, V = np.empty(d), np.empty((d, d))
        self.mod.linalg_sym_eigh(self.ctx, np.ascontiguousarray(C, dtype=np.float64), w, V)
        self._note("fast")
        keep = _subset_k(k, d) or d  # as the host path
        return w[::-1][:keep].copy(), V[:, ::-1][:, :keep].copy()

    def matmul(self, A, transpose_a, B, transpose_b, like=None):
        """op(A) @ op(B) in A's dtype; an array of like's kind (default: the
        device operand's, else NumPy). Host operands are float arrays of A's dtype."""
        dt = np_float_dtype(A)
        if not _is_dev(A):
            A = np.ascontiguousarray(A, dtype=dt)
        if not _is_dev(B):
            B = np.ascontiguousarray(B, dtype=dt)
        m = A.shape[1] if transpose_a else A.shape[0]
        n = B.shape[0] if transpose_b else B.shape[1]
        if like is None:
            like = A if _is_dev(A) else (B if _is_dev(B) else np.empty(0))
        out = self.empty(like, (m, n), dt)
        self._note(self.mod.linalg_matmul(self.ctx, A, transpose_a, B, transpose_b, out))
        return out

    def center(self, X, offset):
        """X - offset (offset rounded to X's dtype), a new array of X's kind."""
        out = self.empty(X, tuple(X.shape), np_float_dtype(X))
        off = np.ascontiguousarray(offset, dtype=np_float_dtype(X))
        self.mod.linalg_prepare_rows(self.ctx, X, None, off, False, out)
        return out

    def affine(self, Y, sub=None, div=None, add=None):
        """Y = (Y - sub) / div + add by columns, in place (float64 host vectors)."""
        if Y.shape[0] == 0 or Y.shape[1] == 0:
            return Y
        f = lambda v: None if v is None else np.ascontiguousarray(v, dtype=np.float64)  # noqa: E731
        self.mod.column_affine_apply(self.ctx, Y, Y, sub=f(sub), div=f(div), add=f(add))
        return Y


def _is_dev(a):
    return isinstance(a, Staged) or is_device_array(a)


def seed_from(random_state) -> int:
    """The Philox seed for scikit-learn's random_state: an int is the seed
    itself; None or a RandomState instance gives one draw from it."""
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(0, 2**32 - 1, dtype=np.int64))


def normal_matrix(seed, rows, cols, offset=0):
    """rows x cols standard normal draws (float64) of the project's generator:
    entry (i, j) is draw offset + i * cols + j of (seed, RNG_STREAM), the same
    bits on every backend. Read-only; matrices of up to 2**20 entries are
    kept (a few fits' worth) so that refits with the same seed do not draw
    them again (256 x 42: about 0.9 ms)."""
    if rows * cols <= 1 << 20:
        return _normal_matrix_kept(int(seed), int(rows), int(cols), int(offset))
    return _draw_normal_matrix(seed, rows, cols, offset)


@functools.lru_cache(maxsize=8)
def _normal_matrix_kept(seed, rows, cols, offset):
    out = _draw_normal_matrix(seed, rows, cols, offset)
    out.flags.writeable = False
    return out


def _draw_normal_matrix(seed, rows, cols, offset):
    core = _backend.core()
    # One thread: the draws are few, and a pool of OpenMP threads left spinning
    # slowed the small LAPACK calls that follow (randomized_from_gram at
    # 256 x 42: 9.2 ms against 3.3 ms on one thread, on a 2-core machine).
    ctx = core.Context("cpu", 1, "identical")
    return core.rng_normal(ctx, seed, RNG_STREAM, offset, rows * cols, np.float64).reshape(rows, cols)


def svd_flip_rows(Vt, U=None):
    """scikit-learn's svd_flip(U, Vt, u_based_decision=False): each row of Vt
    (and column of U) gets the sign that makes the row's largest-magnitude
    entry (the first, on ties) positive. In place; returns (U, Vt)."""
    if Vt.shape[0] == 0:
        return U, Vt
    idx = np.argmax(np.abs(Vt), axis=1)
    signs = np.sign(Vt[np.arange(Vt.shape[0]), idx])
    Vt *= signs[:, None]
    if U is not None:
        U *= signs[None, : U.shape[1]]
    return U, Vt


_blas_controller = None
#: Up to this side the host eigensolver runs on one BLAS thread: threads cost
#: more than they save on small matrices (and many more on a busy machine).
SINGLE_THREAD_EIGH = 512


def _blas_threads(d):
    global _blas_controller
    if d > SINGLE_THREAD_EIGH:
        return contextlib.nullcontext()
    if _blas_controller is None:
        from threadpoolctl import ThreadpoolController

        _blas_controller = ThreadpoolController()
    return _blas_controller.limit(limits=1, user_api="blas")


def _subset_k(k, d):
    """The k largest eigenpairs only (LAPACK's syevr on a subset) when k is
    given and small enough to save work; None: all of them."""
    return k if k is not None and 0 < k and 4 * k <= d else None


def eigh_desc(C, k=None, owner="the eigendecomposition", exact=False):
    """Eigenvalues (descending) and eigenvectors (columns) of the symmetric C,
    float64. With k, only the k largest (LAPACK's syevr on a subset) when that
    saves work; otherwise all of them. A C that is not finite because
    products of finite data overflowed (LAPACK fails to converge on it) gets
    the overflow error naming `owner`.

    exact (identical mode): all eigenpairs, whatever k, by the cyclic Jacobi
    eigensolver (twinlearn/core/jacobi.hpp: fixed order, the same bits on
    every CPU; ties in diagonal order). NaN in C gives NaN results, as LAPACK."""
    d = C.shape[0]
    check_no_overflow(owner, "the products of its values overflow", C, dtype=np.float64, power=2, find_nan=False)
    if exact:
        w, V, sweeps, converged = _backend.core().jacobi_eigh(np.ascontiguousarray(C, dtype=np.float64))
        if not converged:
            raise np.linalg.LinAlgError(f"{owner}: the Jacobi eigensolver did not converge in {sweeps} sweeps")
        return w, V
    try:
        with _blas_threads(d):
            k = _subset_k(k, d)
            if k is not None:
                w, V = linalg.eigh(C, subset_by_index=[d - k, d - 1], check_finite=False)
            else:
                w, V = np.linalg.eigh(C)
    except (np.linalg.LinAlgError, linalg.LinAlgError) as e:
        # NaN from overflowed products (inf - inf) keeps LAPACK from converging;
        # NaN of other causes (the covariance of one sample, 0 / 0) passes through.
        if np.isfinite(C).all():
            raise
        raise overflow_error(owner, "the products of its values overflow", np.float64, power=2) from e
    return w[::-1].copy(), V[:, ::-1].copy()


def host_matmul(A, B, exact=False):
    """A @ B of float64 host matrices (2-D). BLAS; with `exact` (identical
    mode) the CPU backend's canonical product, whose fixed order gives the
    same bits on every CPU, instruction set and thread count."""
    if not exact:
        return A @ B
    A = np.ascontiguousarray(A, dtype=np.float64)
    B = np.ascontiguousarray(B, dtype=np.float64)
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"host_matmul: shapes {A.shape} and {B.shape} do not align")
    out = np.zeros((A.shape[0], B.shape[1]))
    if out.size and A.shape[1]:
        core = _backend.core()
        core.linalg_matmul(_exact_context(), A, False, B, False, out)
    return out


def _exact_context():
    from .._config import get_n_threads

    return _backend.core().Context("cpu", get_n_threads(), "identical")


def host_qr(A, exact=False):
    """Q (orthonormal columns) of the thin QR of the float64 host matrix A
    (rows >= columns): LAPACK, or with `exact` the fixed-order Householder QR
    (twinlearn/core/jacobi.hpp)."""
    if exact:
        return _backend.core().jacobi_qr_q(np.ascontiguousarray(A, dtype=np.float64))
    return linalg.qr(A, mode="economic", check_finite=False)[0]


def host_svd(A, exact=False, compute_u=True, owner="the SVD"):
    """(U, s, Vt), the thin SVD of the float64 host matrix A (U None without
    compute_u): LAPACK, or with `exact` the fixed-order one-sided Jacobi SVD
    (twinlearn/core/jacobi.hpp; s descending, ties in index order)."""
    if exact:
        U, s, Vt, sweeps, converged = _backend.core().jacobi_svd(np.ascontiguousarray(A, dtype=np.float64),
                                                                 compute_u)
        if not converged:
            raise np.linalg.LinAlgError(f"{owner}: the Jacobi SVD did not converge in {sweeps} sweeps")
        return U, s, Vt
    U, s, Vt = linalg.svd(A, full_matrices=False, check_finite=False, compute_uv=True)
    return (U if compute_u else None), s, Vt


def complete_rows(Vt, k, seed, offset, exact=False):
    """Vt (r x d, orthonormal rows) extended to k orthonormal rows with
    directions orthogonal to it (r < k happens only when the data has rank
    below k; the added directions carry zero singular value). exact: the
    host steps of identical mode (host_matmul, host_qr)."""
    r, d = Vt.shape
    if r >= k:
        return Vt[:k]
    R = normal_matrix(seed, d, k - r, offset).copy()
    if r:
        for _ in range(2):
            R -= host_matmul(Vt.T, host_matmul(Vt, R, exact), exact)
    return np.vstack([Vt, host_qr(R, exact).T])


# ---------------------------------------------------------------------------
# Randomized SVD (Halko et al., as scikit-learn's _randomized_svd)


def _orthonormal(Q, exact=False):
    """An orthonormal basis of the columns of the host iterate Q (QR, float64;
    host_qr's fixed-order one with `exact`).

    scikit-learn's power_iteration_normalizer ('QR', 'LU', 'none') chooses how
    its iterates are kept apart; every choice spans the same space in exact
    arithmetic. Here the iterates on the host are small (side x width), so
    they are always orthonormalized, the most stable of the choices."""
    return host_qr(Q, exact)


def _keep_threshold(lam, dtype):
    """Eigenvalues of a Gram matrix computed in `dtype` below this are rounding
    noise (for a Gram matrix of float32 data summed in float64, pass float64)."""
    return max(lam[0], 0.0) * np.finfo(dtype).eps * max(len(lam), 8) * 4


def randomized_from_gram(G, n_components, n_oversamples, n_iter, seed, dtype, owner="the randomized SVD",
                         exact=False):
    """Randomized SVD of A from its Gram matrix on the range side.

    G (s x s, float64) is AᵀA (the rows' side, s = n_features) or AAᵀ
    (s = n_samples, scikit-learn's ``transpose``): the power iterations
    ``Q <- norm(A Q); Q <- norm(Aᵀ Q)`` span the same space as
    ``Q <- orth(G Q)``, and the final ``B = orth(A Q)ᵀ A`` is
    ``(H W Λ^-1/2)ᵀ`` with ``H = G Q``, ``W Λ Wᵀ = Qᵀ G Q`` (the tall basis
    orthonormalized through its k x k Gram matrix). Directions whose
    eigenvalue is rounding noise (data of lower rank) are dropped.

    Returns (Uh, s, Vt_s, T, Q) where svd(B) = Uh diag(s) Vt_s (Vt_s: r x s)
    and, for the AAᵀ side, the rows' right vectors are (Uhᵀ Tᵀ Qᵀ) A.
    exact (identical mode): every product, factorization and eigensolver is
    the fixed-order one (host_matmul, host_qr, eigh_desc, host_svd).
    """
    mm = functools.partial(host_matmul, exact=exact)
    s_side = G.shape[0]
    size = min(n_components + n_oversamples, s_side)
    # Small products and factorizations: one BLAS thread (waking a pool of
    # them for each costs more than it saves, most of all beside a GPU
    # library's own threads), the first orthonormalization included (256 x
    # 42 from a 256 x 256 Gram matrix: 4.7 ms against 6.2 ms with it outside,
    # on a 2-core machine).
    with _blas_threads(s_side):
        Q = _orthonormal(normal_matrix(seed, s_side, n_components + n_oversamples)[:, :size], exact)
        for _ in range(n_iter):
            Q = _orthonormal(mm(G, Q), exact)
        H = mm(G, Q)
        M = mm(Q.T, H)
        M = 0.5 * (M + M.T)
        lam, W = eigh_desc(M, owner=owner, exact=exact)
        keep = lam > _keep_threshold(lam, dtype) if len(lam) else np.zeros(0, bool)
        T = W[:, keep] / np.sqrt(lam[keep])
        B = mm(H, T).T
        Uh, sv, Vt = host_svd(B, exact, owner=owner)
    return Uh, sv, Vt, T, Q


def randomized_right(backend, A, G, side, n_components, n_oversamples, n_iter, seed):
    """Top n_components right singular vectors (rows, float64) and singular
    values of A by the randomized method, A being a backend array.
    side: 'right' (G = AᵀA), 'left' (G = AAᵀ) or 'tall' (G is None: tall
    iterates on the backend). May return fewer rows than n_components when
    A has lower rank."""
    dtype = np_float_dtype(A)
    if side == "tall":
        return _randomized_tall(backend, A, n_components, n_oversamples, n_iter, seed)
    # AᵀA comes from backend.gram: exact products summed in float64 whatever
    # A's dtype, so its noise is float64's. (Judged by float32's, directions
    # below about 0.45% of the largest singular value were dropped as noise:
    # TruncatedSVD of 200k x 256 float32 data offset by up to 5 a column, whose
    # mean direction dwarfs the rest, lost 7 of 32 components.) AAᵀ is a
    # product in A's dtype.
    noise_dtype = np.float64 if side == "right" else dtype
    exact = backend.exact_host
    Uh, sv, Vt_s, T, Q = randomized_from_gram(G, n_components, n_oversamples, n_iter, seed, noise_dtype,
                                               backend.tag, exact)
    k = min(n_components, len(sv))
    if side == "right":
        return Vt_s[:k], sv[:k]
    # The AAᵀ side: the right vectors are (Uhᵀ Tᵀ Qᵀ) A, one product on the backend.
    L = host_matmul(Q, host_matmul(T, Uh[:, :k], exact), exact).T
    Vt = np.asarray(backend.host(backend.matmul(L.astype(dtype), False, A, False, like=np.empty(0))),
                    dtype=np.float64)
    # Rows of norm 1 in exact arithmetic: remove the product's rounding.
    norms = np.linalg.norm(Vt, axis=1)
    Vt /= np.where(norms > 0, norms, 1.0)[:, None]
    return Vt, sv[:k]


def _orthonormalize_tall(backend, Y, dtype, passes=1):
    """An orthonormal basis of the columns of the tall Y (n x k, backend array):
    Y T with T = W Λ^-1/2 from Yᵀ Y = W Λ Wᵀ (k x k, host), noise directions
    dropped; `passes` repetitions (2 = orthonormal to working precision)."""
    for _ in range(passes):
        M = backend.gram(Y)
        lam, W = eigh_desc(0.5 * (M + M.T), owner=backend.tag, exact=backend.exact_host)
        keep = lam > _keep_threshold(lam, dtype) if len(lam) else np.zeros(0, bool)
        if not keep.any():
            return None
        T = W[:, keep] / np.sqrt(lam[keep])
        Y = backend.matmul(Y, False, T.astype(dtype), False)
    return Y


def _randomized_tall(backend, A, n_components, n_oversamples, n_iter, seed):
    """scikit-learn's range finder step by step on the backend: the n x k
    iterates A Q stay on the device and are orthonormalized through their
    k x k Gram matrix; the d x k iterates Aᵀ Q come to the host (QR)."""
    n, d = A.shape
    dtype = np_float_dtype(A)
    size = n_components + n_oversamples
    exact = backend.exact_host
    Q = _orthonormal(normal_matrix(seed, d, size)[:, : min(size, d)], exact)
    for _ in range(n_iter):
        Y = _orthonormalize_tall(backend, backend.matmul(A, False, Q.astype(dtype), False), dtype)
        if Y is None:
            return np.zeros((0, d)), np.zeros(0)
        Z = np.asarray(backend.host(backend.matmul(Y, True, A, False, like=np.empty(0))), dtype=np.float64).T
        Q = _orthonormal(Z, exact)
    Y = backend.matmul(A, False, Q.astype(dtype), False)
    Y = _orthonormalize_tall(backend, Y, dtype, passes=2)
    if Y is None:
        return np.zeros((0, d)), np.zeros(0)
    B = np.asarray(backend.host(backend.matmul(Y, True, A, False, like=np.empty(0))), dtype=np.float64)
    _, sv, Vt = host_svd(B, exact, compute_u=False, owner=backend.tag)
    k = min(n_components, len(sv))
    return Vt[:k], sv[:k]


def use_gram_route(n, d, n_components, n_oversamples, n_iter):
    """True when one Gram matrix beats 2 n_iter + 3 passes of tall products:
    its side s = min(n, d) against the projection width, and s small enough."""
    s = min(n, d)
    width = n_components + n_oversamples
    return s <= MAX_GRAM_SIDE and (s <= 1024 or s <= 2 * width * (2 * n_iter + 3))


def auto_n_iter(n_iter, n_components, n, d):
    """scikit-learn's randomized_svd: 7 power iterations for few components, else 4."""
    if n_iter == "auto":
        return 7 if n_components < 0.1 * min(n, d) else 4
    return int(n_iter)
