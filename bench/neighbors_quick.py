"""Quick timing of the two clustering / neighbours speed targets on one GPU.

    PYTHONPATH=python:. python bench/neighbors_quick.py [--rows 1000000] [--sklearn]

Workloads (float32, data on the device):
  kmeans  KMeans 1M x 64, k=256, 20 Lloyd iterations from given centers
  knn     NearestNeighbors brute force, 1M x 64 index, 10k queries, k=10

twinlearn runs in 'fast' and 'identical' mode with the data as a PyTorch CUDA
tensor (zero-copy); PyTorch's own short versions (bench/peers.py) run beside
it on the same tensors; scikit-learn runs on a subsample when --sklearn is
given (its time is scaled to the full size and marked so). Each time is the
best of --repeat runs after one warm-up; results agree checks are printed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best_time(fn, repeat, sync):
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def blobs(rows, cols, centers, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.normal(scale=10.0, size=(centers, cols)).astype(np.float32)
    lab = rng.integers(0, centers, rows)
    return (c[lab] + rng.normal(size=(rows, cols)).astype(np.float32)).astype(np.float32)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cols", type=int, default=64)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--neighbors", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sklearn", action="store_true", help="also time scikit-learn on a subsample")
    ap.add_argument("--only", choices=["kmeans", "knn"], default=None)
    args = ap.parse_args(argv)

    import torch

    import twinlearn
    from bench.peers import TorchKMeans, TorchNearestNeighbors

    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda:0"
    sync = torch.cuda.synchronize
    print(f"twinlearn {twinlearn.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    X = blobs(args.rows, args.cols, args.k)
    Xt = torch.as_tensor(X, device=dev)
    rows = []

    if args.only in (None, "kmeans"):
        init = X[np.random.default_rng(1).choice(args.rows, args.k, replace=False)].copy()
        title = f"KMeans {args.rows} x {args.cols}, k={args.k}, {args.iters} iterations (target 20 ms)"
        fits = {}
        for mode in ("fast", "identical"):
            def run(mode=mode):
                fits[mode] = twinlearn.KMeans(args.k, init=init, n_init=1, max_iter=args.iters, tol=0.0,
                                              device=dev, numeric_mode=mode).fit(Xt)
            rows.append((title, f"twinlearn {mode}", best_time(run, args.repeat, sync)))
        tk = TorchKMeans(init, args.iters)
        rows.append((title, "torch (cdist + index_add)", best_time(lambda: tk.fit(Xt), args.repeat, sync)))
        print(f"  KMeans n_iter_={fits['fast'].n_iter_}, inertia={fits['fast'].inertia_:.6g}; "
              f"fast == identical bits: {np.array_equal(fits['fast'].cluster_centers_, fits['identical'].cluster_centers_)}")
        if args.sklearn:
            from sklearn.cluster import KMeans as SkKMeans

            sub = max(args.k, args.rows // 20)
            t = best_time(lambda: SkKMeans(args.k, init=init, n_init=1, max_iter=args.iters, tol=0.0).fit(X[:sub]),
                          1, lambda: None)
            rows.append((title, f"scikit-learn (x{args.rows / sub:.0f} of a {sub}-row run)", t * args.rows / sub))

    if args.only in (None, "knn"):
        Q = blobs(args.queries, args.cols, args.k, seed=2)
        Qt = torch.as_tensor(Q, device=dev)
        title = f"kNN brute {args.rows} x {args.cols} index, {args.queries} queries, k={args.neighbors} (target 40 ms)"
        res = {}
        for mode in ("fast", "identical"):
            nn = twinlearn.NearestNeighbors(n_neighbors=args.neighbors, device=dev, numeric_mode=mode).fit(Xt)

            def run(nn=nn, mode=mode):
                res[mode] = nn.kneighbors(Qt)
            rows.append((title, f"twinlearn {mode}", best_time(run, args.repeat, sync)))
        tn = TorchNearestNeighbors(args.neighbors).fit(Xt)
        tres = {}

        def trun():
            tres["r"] = tn.kneighbors(Qt)
        rows.append((title, "torch (cdist + topk)", best_time(trun, args.repeat, sync)))
        ours = res["fast"][1].cpu().numpy()
        theirs = tres["r"][1].cpu().numpy()
        recall = np.mean([len(np.intersect1d(a, b)) / args.neighbors for a, b in zip(ours, theirs)])
        print(f"  kNN recall against torch: {recall:.4f}")
        if args.sklearn:
            from sklearn.neighbors import NearestNeighbors as SkNN

            sub = max(args.neighbors, args.rows // 20)
            sk = SkNN(n_neighbors=args.neighbors, algorithm="brute", n_jobs=-1).fit(X[:sub])
            t = best_time(lambda: sk.kneighbors(Q), 1, lambda: None)
            rows.append((title, f"scikit-learn (x{args.rows / sub:.0f} of a {sub}-row index)", t * args.rows / sub))

    width = max(len(r[1]) for r in rows)
    last = None
    for title, who, t in rows:
        if title != last:
            print(title)
            last = title
        print(f"  {who:<{width}}  {t * 1e3:10.2f} ms")


if __name__ == "__main__":
    main()
