"""Quick timings of the decompositions on one GPU: PCA and TruncatedSVD of a
float32 matrix (default 2M x 256 -> 32 components), twinlearn in fast and
identical mode with the data on the device and from NumPy, beside
scikit-learn and PyTorch (a covariance eigh, torch.pca_lowrank and
torch.svd_lowrank).

    PYTHONPATH=python:. python bench/decomp_quick.py [--rows 2000000] [--cols 256]
        [--components 32] [--repeats 5] [--no-sklearn] [--stages] [--out result.json]

Target (fast mode, data on the device): each fit at most 10 ms.
Every time is the median of --repeats runs after one warm-up, with the GPU
synchronized around each call. Quality is the share of the data's variance
captured by the returned components (against a float64 covariance), and the
largest distance between their projector and the float64 eigenvectors'.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

from bench import arrays, datasets
from bench.registry import Scale


def _sync(lib):
    if lib == "torch":
        import torch

        torch.cuda.synchronize()
    elif lib == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()


def timed(fn, repeats, lib):
    """(median seconds, min seconds, last result) of fn() after a warm-up."""
    out = fn()
    _sync(lib)
    times = []
    for _ in range(repeats):
        _sync(lib)
        t = time.perf_counter()
        out = fn()
        _sync(lib)
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), out


def to_np(a):
    return np.asarray(arrays.to_host(a), dtype=np.float64)


class Reference:
    """The float64 covariance of X and its top eigenvectors, for quality."""

    def __init__(self, X, lib, k, center, device):
        from twinlearn.linalg import gram

        X64 = X.double() if lib == "torch" else X.astype("float64")
        n = X.shape[0]
        G = gram(X64, center=center, numeric_mode="fast", device=device)
        self.C = G / (n - 1 if center else n)
        del X64
        _, V = np.linalg.eigh(self.C)
        self.top = V[:, ::-1][:, :k].T
        self.total = float(np.trace(self.C))

    def quality(self, components):
        V = np.asarray(components, dtype=np.float64)
        Q, _ = np.linalg.qr(V.T)
        captured = float(np.trace(Q.T @ self.C @ Q)) / self.total
        P, R = Q @ Q.T, self.top.T @ self.top
        return {"captured": captured, "projector_error": float(np.abs(P - R).max())}


def twinlearn_rows(args, X_host, X_dev, lib, ref_pca, ref_svd):
    from twinlearn import PCA, TruncatedSVD

    k = args.components
    dev = args.device
    rows = []
    cases = []
    for mode in ("fast", "identical"):
        if X_dev is not None:
            cases.append((f"PCA {mode} (device)", lambda m=mode: PCA(k, device=dev, numeric_mode=m).fit(X_dev),
                          ref_pca, lib))
            cases.append((f"PCA {mode} fit_transform (device)",
                          lambda m=mode: _keep(PCA(k, device=dev, numeric_mode=m), X_dev), ref_pca, lib))
            cases.append((f"TruncatedSVD {mode} (device)",
                          lambda m=mode: TruncatedSVD(k, random_state=0, device=dev, numeric_mode=m).fit(X_dev),
                          ref_svd, lib))
        cases.append((f"PCA {mode} (numpy)", lambda m=mode: PCA(k, device=dev, numeric_mode=m).fit(X_host),
                      ref_pca, None))
        cases.append((f"TruncatedSVD {mode} (numpy)",
                      lambda m=mode: TruncatedSVD(k, random_state=0, device=dev, numeric_mode=m).fit(X_host),
                      ref_svd, None))
    for name, fn, ref, sync_lib in cases:
        repeats = args.repeats if "identical" not in name else max(1, min(args.repeats, 2))
        med, best, est = timed(fn, repeats, sync_lib)
        rows.append({"contender": "twinlearn " + name, "median_s": med, "min_s": best,
                     **(ref.quality(est.components_) if ref else {})})
        print(_fmt(rows[-1]), flush=True)
    return rows


def _keep(est, X):
    est.fit_transform(X)
    return est


def stage_rows(args, X, lib, mode):
    """Where a PCA fit's time goes: each backend stage of the covariance path
    timed on its own (same calls as PCA.fit / transform)."""
    from twinlearn import PCA
    from twinlearn.decomposition import _solvers
    from twinlearn.decomposition._base import project

    est = PCA(args.components, device=args.device, numeric_mode=mode)
    mod, ctx = est._tl_context(args.device, X)
    backend = _solvers.Backend(mod, ctx, "PCA")
    Xs = backend.stage(X)
    _, mean64, _ = backend.column_stats(Xs)
    mean = mean64.astype(np.float32)
    G = backend.gram(Xs, offset=mean)
    _, V = _solvers.eigh_desc(G / (X.shape[0] - 1), args.components)
    comps = V.T.astype(np.float32)
    steps = [
        ("column_stats", lambda: backend.column_stats(Xs)),
        ("centre (copy)", lambda: backend.center(Xs, mean)),
        ("gram (centred)", lambda: backend.gram(Xs, offset=mean)),
        ("gram (no centring)", lambda: backend.gram(Xs)),
        ("host eigh (top k)", lambda: _solvers.eigh_desc(G / (X.shape[0] - 1), args.components)),
        ("host eigh (all)", lambda: _solvers.eigh_desc(G / (X.shape[0] - 1))),
        ("transform", lambda: project(backend, Xs, comps, mean)),
    ]
    rows = []
    for name, fn in steps:
        med, best, _ = timed(fn, args.repeats, lib)
        rows.append({"contender": f"  stage {mode}: {name}", "median_s": med, "min_s": best})
        print(_fmt(rows[-1]), flush=True)
    return rows


def torch_rows(args, X_dev, ref_pca, ref_svd):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    k = args.components
    rows = []

    def pca_eigh():
        mean = X_dev.mean(0)
        xc = X_dev - mean
        _, vecs = torch.linalg.eigh(xc.T @ xc / (X_dev.shape[0] - 1))
        return vecs[:, -k:].flip(1).T

    def pca_lowrank():
        _, _, V = torch.pca_lowrank(X_dev, q=k, center=True, niter=2)
        return V.T

    def svd_gram_eigh():
        _, vecs = torch.linalg.eigh(X_dev.T @ X_dev)
        return vecs[:, -k:].flip(1).T

    def svd_lowrank():
        _, _, V = torch.svd_lowrank(X_dev, q=k + 10, niter=5)
        return V[:, :k].T

    for name, fn, ref in [
        ("PCA covariance eigh", pca_eigh, ref_pca),
        ("PCA pca_lowrank(niter=2)", pca_lowrank, ref_pca),
        ("TruncatedSVD Gram eigh", svd_gram_eigh, ref_svd),
        ("TruncatedSVD svd_lowrank(niter=5)", svd_lowrank, ref_svd),
    ]:
        med, best, comps = timed(fn, args.repeats, "torch")
        rows.append({"contender": "torch " + name, "median_s": med, "min_s": best,
                     **ref.quality(comps.double().cpu().numpy())})
        print(_fmt(rows[-1]), flush=True)
    return rows


def sklearn_rows(args, X_host, ref_pca, ref_svd):
    from sklearn.decomposition import PCA, TruncatedSVD

    k = args.components
    rows = []
    for name, fn, ref in [
        ("PCA (auto)", lambda: PCA(k).fit(X_host), ref_pca),
        ("TruncatedSVD (randomized)", lambda: TruncatedSVD(k, random_state=0).fit(X_host), ref_svd),
    ]:
        med, best, est = timed(fn, 1, None)
        rows.append({"contender": "scikit-learn " + name, "median_s": med, "min_s": best,
                     **ref.quality(est.components_)})
        print(_fmt(rows[-1]), flush=True)
    return rows


def _fmt(row):
    q = ""
    if "captured" in row:
        q = f"  captured={row['captured']:.6f}  projector_error={row['projector_error']:.1e}"
    return f"  {row['contender']:<48} {row['median_s'] * 1e3:9.2f} ms (min {row['min_s'] * 1e3:.2f}){q}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--cols", type=int, default=256)
    p.add_argument("--components", type=int, default=32)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-sklearn", action="store_true", help="skip scikit-learn (slow at full size)")
    p.add_argument("--out", default=None, help="write the rows as JSON here")
    p.add_argument("--device", default="cuda:0", help="cuda:N, or cpu for a dry run at small sizes")
    p.add_argument("--stages", action="store_true", help="also time each stage of the PCA fit (fast mode)")
    args = p.parse_args(argv)

    from twinlearn import _backend

    if args.device != "cpu" and not _backend.cuda_available():
        print(f"no usable GPU: {_backend.cuda_unavailable_reason()}", file=sys.stderr)
        return 2
    lib = arrays.device_input_kind() if args.device != "cpu" else None
    print(f"data: {args.rows} x {args.cols} float32 -> {args.components} components; device arrays: {lib}")
    X_host = np.ascontiguousarray(
        datasets.low_rank(Scale(args.rows, args.cols), 0, np.float32)["X"], dtype=np.float32
    )
    X_dev = arrays.to_input(X_host, lib, "cuda") if lib else None
    ref_X, ref_lib = (X_dev, lib) if X_dev is not None else (X_host, None)
    ref_pca = Reference(ref_X, ref_lib, args.components, center=True, device=args.device)
    ref_svd = Reference(ref_X, ref_lib, args.components, center=False, device=args.device)
    rows = twinlearn_rows(args, X_host, X_dev, lib, ref_pca, ref_svd)
    if args.stages:
        rows += stage_rows(args, X_dev if X_dev is not None else X_host, lib, "fast")
    if lib is not None and arrays.torch_cuda_usable():
        import torch

        Xt = X_dev if lib == "torch" else torch.as_tensor(X_dev, device="cuda")
        rows += torch_rows(args, Xt, ref_pca, ref_svd)
    else:
        print("  torch: not available on the GPU")
    if not args.no_sklearn:
        rows += sklearn_rows(args, X_host, ref_pca, ref_svd)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": args.rows, "cols": args.cols, "components": args.components, "results": rows}, f,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
