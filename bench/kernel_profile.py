"""Where the GPU time of one twinlearn fit goes: every CUDA kernel and copy it
launched, with its total device time, beside the call's wall time.

    PYTHONPATH=python:. python -m bench.kernel_profile [--only NAME ...] [--mode fast]

Workloads (float32, data on the device as PyTorch tensors): kmeans (1M x 64,
k=256, 20 iterations from given centers), kmeans_large (100M x 64, 5
iterations), knn (1M x 64 index, 10k queries,
k=10), linreg and ridge (2M x 256), logreg (1M x 100), pca and tsvd
(2M x 256 -> 32), standard and minmax (scaler fit_transform,
2M x 256), gbdt (HIGGS-shaped 2M x 28, 200 rounds, depth 6) and gbdt_predict
(that model's predict on the 2M training rows). The
PyTorch profiler records the kernels of every library
in the process, twinlearn's included. Wall time much above the summed device
time means the host waits (synchronizations, copies, launch gaps).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _workloads(dev):
    import torch

    import twinlearn
    from twinlearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)

    def kmeans(mode):
        c = rng.normal(scale=10.0, size=(256, 64)).astype(np.float32)
        X = (c[rng.integers(0, 256, 1_000_000)] + rng.normal(size=(1_000_000, 64))).astype(np.float32)
        init = X[:256].copy()
        Xt = torch.as_tensor(X, device=dev)
        return lambda: twinlearn.KMeans(256, init=init, n_init=1, max_iter=20, tol=0.0, device=dev,
                                        numeric_mode=mode).fit(Xt)

    def kmeans_large(mode):
        # 100M x 64 (25.6 GB), 5 iterations: blobs drawn on the device (the host would take a minute).
        # Drawn in slices so that no second 25.6 GB temporary is held.
        g = torch.Generator(device=dev).manual_seed(0)
        c = torch.randn(256, 64, device=dev, generator=g) * 10.0
        n, step = 100_000_000, 10_000_000
        Xt = torch.empty((n, 64), device=dev)
        for r0 in range(0, n, step):
            part = Xt[r0:r0 + step]
            part.normal_(generator=g)
            part += c[torch.randint(0, 256, (part.shape[0],), device=dev, generator=g)]
        torch.cuda.empty_cache()
        init = Xt[:256].cpu().numpy()
        return lambda: twinlearn.KMeans(256, init=init, n_init=1, max_iter=5, tol=0.0, device=dev,
                                        numeric_mode=mode).fit(Xt)

    def knn(mode):
        X = rng.normal(size=(1_000_000, 64)).astype(np.float32)
        Q = rng.normal(size=(10_000, 64)).astype(np.float32)
        Xt, Qt = torch.as_tensor(X, device=dev), torch.as_tensor(Q, device=dev)
        nn = twinlearn.NearestNeighbors(n_neighbors=10, device=dev, numeric_mode=mode).fit(Xt)
        return lambda: nn.kneighbors(Qt)

    def linear(cls, **kw):
        def make(mode):
            X = rng.normal(size=(2_000_000, 256)).astype(np.float32)
            y = (X @ rng.normal(size=256) + rng.normal(size=2_000_000)).astype(np.float32)
            Xt, yt = torch.as_tensor(X, device=dev), torch.as_tensor(y, device=dev)
            return lambda: cls(numeric_mode=mode, **kw).fit(Xt, yt)
        return make

    def logreg(mode):
        X = rng.normal(size=(1_000_000, 100)).astype(np.float32)
        y = (X @ rng.normal(size=100) + rng.logistic(size=1_000_000) > 0).astype(np.float32)
        Xt, yt = torch.as_tensor(X, device=dev), torch.as_tensor(y, device=dev)
        return lambda: LogisticRegression(max_iter=100, numeric_mode=mode).fit(Xt, yt)

    def decomposition(cls):
        def make(mode):
            X = (rng.normal(size=(2_000_000, 256)) * np.linspace(3, 0.1, 256)).astype(np.float32)
            Xt = torch.as_tensor(X, device=dev)
            return lambda: cls(n_components=32, random_state=0, numeric_mode=mode).fit(Xt)
        return make

    def gbdt(mode):
        from bench.gbdt_quick import higgs_like

        X, y = higgs_like(2_000_000)
        Xt = torch.as_tensor(X, device=dev)
        return lambda: twinlearn.GradientBoostingClassifier(n_estimators=200, max_depth=6, learning_rate=0.1,
                                                            early_stopping=False, device=dev, numeric_mode=mode).fit(Xt, y)

    def gbdt_predict(mode):
        from bench.gbdt_quick import higgs_like

        X, y = higgs_like(2_000_000)
        Xt = torch.as_tensor(X, device=dev)
        m = twinlearn.GradientBoostingClassifier(n_estimators=200, max_depth=6, learning_rate=0.1, device=dev,
                                                 early_stopping=False, numeric_mode=mode).fit(Xt, y)
        return lambda: m.predict(Xt)

    def scaler(cls):
        def make(mode):
            Xt = torch.as_tensor(rng.normal(size=(2_000_000, 256)).astype(np.float32), device=dev)
            return lambda: cls(numeric_mode=mode).fit_transform(Xt)
        return make

    from twinlearn.decomposition import PCA, TruncatedSVD
    from twinlearn.linear_model import LinearRegression, Ridge
    from twinlearn.preprocessing import MinMaxScaler, StandardScaler

    return {
        "kmeans": kmeans,
        "kmeans_large": kmeans_large,
        "knn": knn,
        "linreg": linear(LinearRegression),
        "ridge": linear(Ridge, alpha=1.0),
        "logreg": logreg,
        "pca": decomposition(PCA),
        "tsvd": decomposition(TruncatedSVD),
        "gbdt": gbdt,
        "gbdt_predict": gbdt_predict,
        "standard": scaler(StandardScaler),
        "minmax": scaler(MinMaxScaler),
    }


def _print_gaps(prof, DeviceType, top=8):
    """Idle stretches of the device between the first and the last operation
    of the profiled call (operations in start order, overlaps merged)."""
    ops = sorted(((e.time_range.start, e.time_range.end, e.name) for e in prof.events()
                  if e.device_type == DeviceType.CUDA and e.time_range.end > e.time_range.start),
                 key=lambda t: t[0])
    if not ops:
        return
    gaps, end, prev = [], ops[0][1], ops[0][2]
    for start, stop, name in ops[1:]:
        if start > end:
            gaps.append((start - end, prev, name, end, start))
        if stop > end:
            end, prev = stop, name
    idle = sum(g[0] for g in gaps)
    span = end - ops[0][0]
    print(f"  device span {span / 1e3:.2f} ms, idle {idle / 1e3:.2f} ms in {len(gaps)} gaps")
    # The host's CUDA runtime calls, to show what the host did in a gap.
    calls = [(e.time_range.start, e.time_range.end, e.name) for e in prof.events()
             if e.device_type != DeviceType.CUDA and e.name.startswith("cuda")]
    for g, before, after, g0, g1 in sorted(gaps, reverse=True)[:top]:
        print(f"    {g / 1e3:7.3f} ms  after {before[:50]}  before {after[:50]}")
        inside = {}
        for c0, c1, name in calls:
            overlap = min(c1, g1) - max(c0, g0)
            if overlap > 0:
                n, t = inside.get(name, (0, 0.0))
                inside[name] = (n + 1, t + overlap)
        busy = sorted(inside.items(), key=lambda kv: -kv[1][1])[:4]
        if busy:
            print("             host in it: " + ", ".join(f"{k} {t / 1e3:.3f} ms x{n}" for k, (n, t) in busy))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--mode", default="fast")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--once", action="store_true",
                    help="run each workload once, without the profiler (for an outside profiler such as ncu)")
    ap.add_argument("--gaps", action="store_true",
                    help="also print the device's idle time within the call and its longest idle gaps, "
                         "each with the operations before and after it")
    ap.add_argument("--python", action="store_true",
                    help="also print the Python functions with the most own time in one call (cProfile)")
    args = ap.parse_args(argv)

    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    dev = "cuda:0"
    work = _workloads(dev)
    for name in args.only or list(work):
        fn = work[name](args.mode)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        if args.once:
            continue
        walls = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            walls.append(time.perf_counter() - t0)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        events = [e for e in prof.key_averages() if e.device_type == DeviceType.CUDA and e.device_time_total > 0]
        events.sort(key=lambda e: -e.device_time_total)
        total = sum(e.device_time_total for e in events) / 1e3
        print(f"\n== {name} ({args.mode}): wall median {np.median(walls) * 1e3:.2f} ms "
              f"(first call {first * 1e3:.2f} ms), device total {total:.2f} ms")
        for e in events[: args.top]:
            print(f"  {e.device_time_total / 1e3:9.3f} ms  x{e.count:<5d} {e.key[:110]}")
        # Host side: the CUDA runtime calls (synchronisations, copies, allocations) by host time.
        calls = [e for e in prof.key_averages() if e.key.startswith("cuda") and e.cpu_time_total > 0]
        calls.sort(key=lambda e: -e.cpu_time_total)
        print("  host: " + ", ".join(f"{e.key} {e.cpu_time_total / 1e3:.2f} ms x{e.count}" for e in calls[:6]))
        if args.gaps:
            _print_gaps(prof, DeviceType)
        if args.python:
            import cProfile
            import io
            import pstats

            pr = cProfile.Profile()
            pr.enable()
            fn()
            torch.cuda.synchronize()
            pr.disable()
            buf = io.StringIO()
            pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(8)
            lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()][-9:]
            print("\n".join("  py " + ln for ln in lines))


if __name__ == "__main__":
    main()
