"""Bit fingerprints of every public estimator, to show that a change keeps the bits.

Each estimator is fitted on fixed data (the same draw every run) on each
device and numeric mode asked for; the fingerprint is a SHA-256 over its
public fitted attributes (names ending in ``_``, arrays by their raw bytes)
and over what it returns for held-out rows (predict, predict_proba,
decision_function, transform, kneighbors, score_samples). Two runs of one
build on one device must agree in every deterministic and identical entry;
in identical mode the CPU and GPU entries must agree with each other.

    python -m bench.fingerprint --device cpu --device cuda --out before.json
    python -m bench.fingerprint --compare before.json after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

MODES = ("fast", "deterministic", "identical")
OUTPUT_METHODS = ("predict", "predict_proba", "decision_function", "transform", "score_samples")


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    X[:, 0] += 2.0 * (rng.random(n) > 0.5)
    w = rng.standard_normal(d).astype(np.float32)
    # X @ w without BLAS (whose kernels differ per CPU): the same y on every machine.
    from twinlearn._hostmath import matmul

    y_reg = (matmul(X, w[:, None])[:, 0] + 0.1 * rng.standard_normal(n)).astype(np.float32)
    y_cls = (X[:, 0] + 0.5 * X[:, 1] > 1.0).astype(np.int64) + (X[:, 2] > 1.0)
    return X, y_reg, y_cls


def cases():
    """(name, factory(device, mode), fit-data kind, rows, features). Rows are
    above the GPU's certified-path thresholds for KMeans (16 384) and the
    neighbour searches (65 536 index rows)."""
    import twinlearn as tl

    def mk(cls, **kw):
        return lambda device, mode: cls(device=device, numeric_mode=mode, **kw)

    return [
        ("StandardScaler", mk(tl.StandardScaler), "X", 20000, 24),
        ("MinMaxScaler", mk(tl.MinMaxScaler), "X", 20000, 24),
        ("MaxAbsScaler", mk(tl.MaxAbsScaler), "X", 20000, 24),
        ("RobustScaler", mk(tl.RobustScaler), "X", 20000, 24),
        ("Normalizer", mk(tl.Normalizer), "X", 20000, 24),
        ("PCA", mk(tl.PCA, n_components=5), "X", 20000, 24),
        ("PCA-randomized", mk(tl.PCA, n_components=5, svd_solver="randomized", random_state=0), "X", 20000, 24),
        ("IncrementalPCA", mk(tl.IncrementalPCA, n_components=5, batch_size=5000), "X", 20000, 24),
        ("TruncatedSVD", mk(tl.TruncatedSVD, n_components=5, random_state=0), "X", 20000, 24),
        ("KMeans", mk(tl.KMeans, n_clusters=12, n_init=2, random_state=0), "X", 20000, 24),
        ("MiniBatchKMeans", mk(tl.MiniBatchKMeans, n_clusters=12, random_state=0, batch_size=2048), "X", 20000, 24),
        ("NearestNeighbors", mk(tl.NearestNeighbors, n_neighbors=7), "X", 70000, 24),
        ("KNeighborsClassifier", mk(tl.KNeighborsClassifier, n_neighbors=7), "cls", 70000, 24),
        ("KNeighborsRegressor", mk(tl.KNeighborsRegressor, n_neighbors=7, weights="distance"), "reg", 70000, 24),
        ("LinearRegression", mk(tl.LinearRegression), "reg", 20000, 24),
        ("Ridge", mk(tl.Ridge, alpha=2.0), "reg", 20000, 24),
        ("RidgeClassifier", mk(tl.RidgeClassifier), "cls", 20000, 24),
        ("Lasso", mk(tl.Lasso, alpha=0.01), "reg", 20000, 24),
        ("ElasticNet", mk(tl.ElasticNet, alpha=0.01, l1_ratio=0.3), "reg", 20000, 24),
        ("LogisticRegression", mk(tl.LogisticRegression, max_iter=200), "cls", 20000, 24),
        ("GaussianNB", mk(tl.GaussianNB), "cls", 20000, 24),
        ("GradientBoosting", mk(tl.GradientBoosting, loss="RMSE", n_estimators=30, max_depth=4, random_state=0),
         "reg", 20000, 12),
        ("GradientBoostingClassifier", mk(tl.GradientBoostingClassifier, n_estimators=30, max_depth=4, random_state=0,
                                                  early_stopping=False),
         "cls", 20000, 12),
        ("GradientBoostingRegressor", mk(tl.GradientBoostingRegressor, n_estimators=30, max_depth=4, random_state=0,
                                                early_stopping=False),
         "reg", 20000, 12),
        ("GradientBoosting-depthwise",
         mk(tl.GradientBoosting, loss="RMSE", n_estimators=30, max_depth=4, random_state=0, grow_policy="Depthwise"),
         "reg", 20000, 12),
        ("GradientBoosting-multiclass",
         mk(tl.GradientBoosting, loss="MultiClass", n_estimators=20, max_depth=4, random_state=0), "cls", 20000, 12),
        ("SpectralClustering", mk(tl.SpectralClustering, n_clusters=6, gamma=0.05, n_init=2, random_state=0), "X",
         3000, 8),
    ]


def _feed(h, value):
    if isinstance(value, np.ndarray):
        h.update(f"{value.dtype.str}{value.shape}".encode())
        if value.dtype.kind == "O":
            h.update(repr(value.tolist()).encode())
        else:
            h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(f"seq{len(value)}".encode())
        for v in value:
            _feed(h, v)
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            h.update(str(k).encode())
            _feed(h, value[k])
    elif isinstance(value, (int, float, str, bool, np.generic, type(None))):
        h.update(repr(value).encode())
    else:
        h.update(type(value).__name__.encode())


def fingerprint(est, X_test):
    """(hash of fitted attributes, {method: hash of its output on X_test})."""
    from twinlearn._io import to_host

    h = hashlib.sha256()
    for name in sorted(vars(est)):
        if name.endswith("_") and not name.startswith("_"):
            h.update(name.encode())
            _feed(h, getattr(est, name))
    outs = {}
    for m in OUTPUT_METHODS:
        if hasattr(est, m):
            try:
                out = getattr(est, m)(X_test)
            except (AttributeError, NotImplementedError, ValueError):
                continue
            ho = hashlib.sha256()
            _feed(ho, np.asarray(to_host(out)))
            outs[m] = ho.hexdigest()[:16]
    if hasattr(est, "kneighbors"):
        d, i = est.kneighbors(X_test)
        ho = hashlib.sha256()
        _feed(ho, [np.asarray(to_host(d)), np.asarray(to_host(i))])
        outs["kneighbors"] = ho.hexdigest()[:16]
    return h.hexdigest()[:16], outs


def run(devices, modes, only=None):
    import twinlearn as tl

    table = {}
    for name, make, kind, n, d in cases():
        if only and name not in only:
            continue
        X, y_reg, y_cls = _data(n, d)
        X_test = _data(500, d, seed=1)[0]
        y = {"X": None, "reg": y_reg, "cls": y_cls}[kind]
        for device in devices:
            for mode in modes:
                with tl.config_context(n_threads=0):
                    est = make(device, mode)
                    t0 = time.perf_counter()
                    est.fit(X) if y is None else est.fit(X, y)
                    attrs, outs = fingerprint(est, X_test)
                table.setdefault(name, {}).setdefault(device, {})[mode] = {
                    "attrs": attrs, "outputs": outs, "delivered": est.numeric_mode_used(),
                    "seconds": round(time.perf_counter() - t0, 3),
                }
                print(f"{name:38s} {device:7s} {mode:13s} {attrs} {' '.join(f'{k}={v}' for k, v in outs.items())}",
                      flush=True)
    return table


def compare(a, b):
    """Lines naming every entry whose bits differ between runs a and b; the
    count of equal and differing deterministic/identical entries."""
    same = differ = 0
    lines = []
    for name in sorted(set(a) & set(b)):
        for device in sorted(set(a[name]) & set(b[name])):
            for mode in sorted(set(a[name][device]) & set(b[name][device])):
                ea, eb = a[name][device][mode], b[name][device][mode]
                ok = ea["attrs"] == eb["attrs"] and ea["outputs"] == eb["outputs"]
                if mode == "fast":
                    if not ok:
                        lines.append(f"  (fast, no promise) {name} {device}: differs")
                    continue
                same += ok
                differ += not ok
                if not ok:
                    lines.append(f"  DIFFERS {name} {device} {mode}")
    return same, differ, lines


def cross_device(table):
    """Identical-mode entries whose CPU and GPU bits differ."""
    out = []
    for name, devs in table.items():
        cpu, gpu = devs.get("cpu", {}).get("identical"), next(
            (v.get("identical") for k, v in devs.items() if k.startswith("cuda")), None)
        if cpu and gpu and (cpu["attrs"] != gpu["attrs"] or cpu["outputs"] != gpu["outputs"]):
            out.append(name)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.fingerprint", description=__doc__.splitlines()[0])
    p.add_argument("--device", action="append", help="cpu, cuda (repeatable; default cpu)")
    p.add_argument("--mode", action="append", choices=MODES, help="default: all three")
    p.add_argument("--only", action="append", help="estimator name (repeatable)")
    p.add_argument("--out", help="write the table as JSON here")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two written tables and exit")
    args = p.parse_args(argv)
    if args.compare:
        a, b = (json.load(open(f))["table"] for f in args.compare)
        same, differ, lines = compare(a, b)
        print("\n".join(lines))
        print(f"deterministic/identical entries: {same} same bits, {differ} differ")
        return 1 if differ else 0
    import twinlearn as tl

    table = run(args.device or ["cpu"], args.mode or list(MODES), args.only)
    mismatched = cross_device(table)
    print(f"identical mode, CPU vs GPU bits differ: {mismatched or 'none'}")
    if args.out:
        import subprocess

        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        with open(args.out, "w") as f:
            json.dump({"commit": commit, "twinlearn": tl.__version__, "vendor": tl.vendor(),
                       "table": table, "identical_cross_device_mismatch": mismatched}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
