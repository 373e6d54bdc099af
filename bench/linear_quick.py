"""Quick timing of the linear models on one GPU, side by side with
scikit-learn and PyTorch (standalone: ``python bench/linear_quick.py``).

Workloads (float32, the targets of docs/BENCHMARKS.md):
  LinearRegression 2M x 256, Ridge(alpha=1) 2M x 256, LogisticRegression
  (lbfgs, C=1, max_iter=100) 1M x 100.

For twinlearn it reports the fit time with the data already on the GPU (a
PyTorch CUDA tensor, passed zero-copy) in fast and identical mode, and with
NumPy input; the peers are scikit-learn on the host (NumPy) and PyTorch on
the same GPU (normal equations and torch.linalg.lstsq). Times are the median
of --repeat runs after one warm-up run; quality (R² or accuracy on the
training data) is printed beside them so that a fast wrong answer shows.

Options: --rows-scale 0.1 shrinks every workload (smoke runs), --no-sklearn
skips the slow scikit-learn runs, --repeat N.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def timed(fn, repeat, sync=None):
    fn()  # warm-up
    if sync:
        sync()
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def r2(y, p):
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    return 1.0 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2)


def regression(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d), dtype=np.float32)
    w = rng.standard_normal(d).astype(np.float32)
    y = X @ w + np.float32(3.0) + rng.standard_normal(n, dtype=np.float32) * np.float32(0.1 * np.sqrt(d))
    return X, y


def classification(n, d, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d), dtype=np.float32)
    w = rng.standard_normal(d) / np.sqrt(d)
    logit = 3.0 * (X @ w.astype(np.float32)).astype(np.float64)
    y = (logit + rng.logistic(size=n) > 0).astype(np.int32)
    return X, y


def row(name, who, seconds, quality, note=""):
    print(f"{name:<34} {who:<34} {seconds * 1e3:>10.2f} ms   quality {quality:.6f}  {note}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows-scale", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-sklearn", action="store_true")
    args = ap.parse_args(argv)

    import sklearn.linear_model as sk
    import torch

    import twinlearn
    from twinlearn.linear_model import LinearRegression, LogisticRegression, Ridge

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda:0")
    sync = torch.cuda.synchronize
    print(f"twinlearn {twinlearn.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name(0)}")

    def torch_normal_equations(Xt, yt, alpha):
        xm, ym = Xt.mean(0), yt.mean()
        xc = Xt - xm
        G = xc.T @ xc
        if alpha:
            G += alpha * torch.eye(Xt.shape[1], device=dev, dtype=Xt.dtype)
        coef = torch.linalg.solve(G, xc.T @ (yt - ym))
        return coef, ym - xm @ coef

    def torch_lstsq(Xt, yt):
        xm, ym = Xt.mean(0), yt.mean()
        return torch.linalg.lstsq(Xt - xm, (yt - ym)[:, None]).solution

    n_lin = max(1000, int(2_000_000 * args.rows_scale))
    X, y = regression(n_lin, 256)
    Xt, yt = torch.from_numpy(X).to(dev), torch.from_numpy(y).to(dev)
    for name, make, alpha in (("LinearRegression 2M x 256", lambda m: LinearRegression(numeric_mode=m), 0.0),
                              ("Ridge(alpha=1) 2M x 256", lambda m: Ridge(alpha=1.0, numeric_mode=m), 1.0)):
        for mode in ("fast", "identical"):
            est = make(mode)
            t, _ = timed(lambda: est.fit(Xt, yt), args.repeat, sync)
            row(name, f"twinlearn cuda {mode} (device)", t, r2(y, est.predict(X)), est.numeric_mode_used())
        est = make("fast")
        t, _ = timed(lambda: est.fit(X, y), max(1, args.repeat // 2), sync)
        row(name, "twinlearn cuda fast (NumPy in)", t, r2(y, est.predict(X)))
        t, (coef, icpt) = timed(lambda: torch_normal_equations(Xt, yt, alpha), args.repeat, sync)
        row(name, "torch normal equations", t, r2(y, (Xt @ coef + icpt).cpu().numpy()))
        if not alpha:
            t, _ = timed(lambda: torch_lstsq(Xt, yt), args.repeat, sync)
            row(name, "torch linalg.lstsq", t, float("nan"))
        if not args.no_sklearn:
            ref = sk.LinearRegression() if not alpha else sk.Ridge(alpha=alpha)
            t0 = time.perf_counter()
            ref.fit(X, y)
            row(name, "scikit-learn (host)", time.perf_counter() - t0, r2(y, ref.predict(X)))

    n_log = max(1000, int(1_000_000 * args.rows_scale))
    Xc, yc = classification(n_log, 100)
    Xct, yct = torch.from_numpy(Xc).to(dev), torch.from_numpy(yc).to(dev)
    name = "LogisticRegression lbfgs 1M x 100"
    for mode in ("fast", "identical"):
        est = LogisticRegression(C=1.0, max_iter=100, numeric_mode=mode)
        t, _ = timed(lambda: est.fit(Xct, yct), args.repeat, sync)
        acc = float(np.mean(est.predict(Xc) == yc))
        row(name, f"twinlearn cuda {mode} (device)", t, acc, f"n_iter={est.n_iter_[0]}")
    est = LogisticRegression(C=1.0, max_iter=100)
    t, _ = timed(lambda: est.fit(Xc, yc), max(1, args.repeat // 2), sync)
    row(name, "twinlearn cuda (NumPy in)", t, float(np.mean(est.predict(Xc) == yc)))
    if not args.no_sklearn:
        ref = sk.LogisticRegression(C=1.0, max_iter=100)
        t0 = time.perf_counter()
        ref.fit(Xc, yc)
        row(name, "scikit-learn lbfgs (host)", time.perf_counter() - t0, float(np.mean(ref.predict(Xc) == yc)),
            f"n_iter={ref.n_iter_[0]}")
    print("targets: LinearRegression, Ridge <= 8 ms; LogisticRegression <= 30 ms; identical <= 2x fast")


if __name__ == "__main__":
    main()
