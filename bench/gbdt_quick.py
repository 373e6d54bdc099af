"""Quick GBDT benchmark on HIGGS-shaped synthetic data (standalone script).

Fits twinlearn's GradientBoostingClassifier and scikit-learn's
HistGradientBoostingClassifier with the same number of trees, depth and
learning rate on the same data, and prints fit / predict times with test
accuracy and AUC for both.

    python bench/gbdt_quick.py                      # 2M x 28, 200 trees, depth 6
    python bench/gbdt_quick.py --n 200000 --skip-sklearn
    python bench/gbdt_quick.py --device cpu --n 100000

The data: 21 "low-level" features (mixtures of normals and exponentials, a
few rounded to create ties) and 7 "high-level" features derived from them
non-linearly, as in HIGGS; the label thresholds a nonlinear function of a
handful of features plus noise, so a good model reaches an AUC around 0.9.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def higgs_like(n, seed=0):
    rng = np.random.default_rng(seed)
    low = np.empty((n, 21), dtype=np.float32)
    low[:, 0::3] = rng.standard_normal((n, 7))
    low[:, 1::3] = rng.exponential(1.0, (n, 7))
    low[:, 2::3] = rng.uniform(-np.pi, np.pi, (n, 7))
    low[:, 5] = np.round(low[:, 5] * 2) / 2  # ties
    high = np.empty((n, 7), dtype=np.float32)
    high[:, 0] = np.sqrt(low[:, 1] ** 2 + low[:, 4] ** 2)
    high[:, 1] = low[:, 0] * low[:, 3]
    high[:, 2] = np.cos(low[:, 2] - low[:, 5])
    high[:, 3] = np.log1p(low[:, 7] + low[:, 10])
    high[:, 4] = low[:, 9] * np.sin(low[:, 8])
    high[:, 5] = np.abs(low[:, 12] - low[:, 15])
    high[:, 6] = low[:, 13] / (1.0 + low[:, 16])
    X = np.concatenate([low, high], axis=1)
    s = (
        0.9 * high[:, 1]
        + 0.7 * np.tanh(high[:, 0] - 1.5)
        + 0.6 * high[:, 2] * low[:, 6]
        - 0.5 * high[:, 5]
        + 0.4 * np.sin(2 * low[:, 18]) * low[:, 19]
        + 0.3 * high[:, 4]
        + 0.8 * rng.standard_normal(n)
    )
    y = (s > np.median(s)).astype(np.int32)
    return np.ascontiguousarray(X), y


def timed(fn, repeat=1):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2_000_000, help="training rows (the test set adds n/4)")
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--max-bins", type=int, default=255, help="bins per feature (both libraries)")
    ap.add_argument("--device", default="auto", help="twinlearn device: auto, cpu, cuda, cuda:N")
    ap.add_argument("--numeric-mode", default="deterministic")
    ap.add_argument("--repeat", type=int, default=2, help="timed repetitions (best is reported)")
    ap.add_argument("--skip-sklearn", action="store_true")
    args = ap.parse_args()

    import twinlearn
    from sklearn.metrics import accuracy_score, roc_auc_score

    n_test = max(1, args.n // 4)
    X, y = higgs_like(args.n + n_test)
    Xtr, ytr, Xte, yte = X[: args.n], y[: args.n], X[args.n :], y[args.n :]
    print(f"data: train {Xtr.shape} test {Xte.shape} float32; trees={args.trees} depth={args.depth} lr={args.lr}")

    def ours():
        return twinlearn.GradientBoostingClassifier(
            n_estimators=args.trees, max_depth=args.depth, learning_rate=args.lr, max_bins=args.max_bins,
            early_stopping=False, device=args.device, numeric_mode=args.numeric_mode,
        )

    ours().set_params(n_estimators=2).fit(Xtr[:10000], ytr[:10000])  # warm-up: CUDA context, allocator
    t_fit, model = timed(lambda: ours().fit(Xtr, ytr), args.repeat)
    t_pred, proba = timed(lambda: model.predict_proba(Xte), max(args.repeat, 3))
    p = proba[:, 1]
    print(f"twinlearn  device={model.device_used()} mode={model.numeric_mode_used()}")
    print(f"  fit {t_fit:8.3f} s   predict_proba({len(Xte)}) {t_pred * 1e3:8.2f} ms (NumPy in, NumPy out)")
    try:
        import cupy

        if model.device_used().startswith("cuda"):
            Xd = cupy.asarray(Xte)
            Xtr_d = cupy.asarray(Xtr)  # fit from a device array too

            def fit_dev():
                m = ours().fit(Xtr_d, ytr)
                cupy.cuda.get_current_stream().synchronize()
                return m

            t_fit_d, _ = timed(fit_dev, args.repeat)

            def pred_dev():
                out = model.predict_proba(Xd)
                cupy.cuda.get_current_stream().synchronize()
                return out

            t_pred_d, _ = timed(pred_dev, max(args.repeat, 3))
            print(f"  fit {t_fit_d:8.3f} s   predict_proba {t_pred_d * 1e3:8.2f} ms (data on the device, CuPy)")
    except ImportError:
        pass
    print(f"  accuracy {accuracy_score(yte, p > 0.5):.4f}   AUC {roc_auc_score(yte, p):.4f}")

    if not args.skip_sklearn:
        from sklearn.ensemble import HistGradientBoostingClassifier

        def ref():
            return HistGradientBoostingClassifier(
                max_iter=args.trees, max_depth=args.depth, learning_rate=args.lr, max_bins=min(args.max_bins, 255),
                early_stopping=False, random_state=0,
            )

        t_fit_r, hgb = timed(lambda: ref().fit(Xtr, ytr), 1)
        t_pred_r, pr = timed(lambda: hgb.predict_proba(Xte), 1)
        pr = pr[:, 1]
        print("scikit-learn HistGradientBoostingClassifier")
        print(f"  fit {t_fit_r:8.3f} s   predict_proba({len(Xte)}) {t_pred_r * 1e3:8.2f} ms")
        print(f"  accuracy {accuracy_score(yte, pr > 0.5):.4f}   AUC {roc_auc_score(yte, pr):.4f}")


if __name__ == "__main__":
    main()
