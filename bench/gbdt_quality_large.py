"""Test accuracy on the 2M-row boosting task, over several draws of its data.

The ``gbdt`` workload scores every contender on one draw of its task (2M
training rows, 28 features, 100 000 held-out rows); between libraries that grow
equally good trees, a few tenths of a point on one draw is the draw's noise
(scikit-learn's own accuracy moved between 0.8232 and 0.8317 as the row sample
its bin edges come from changed). This fits the ``gbdt`` and ``gbdt_depthwise``
workloads' contenders, with the workloads' parameters, on draws 0 .. S-1 of the
same task (``bench.datasets.classification``, nonlinear) and reports each draw's
accuracy and ROC AUC, the means, and each contender's mean paired difference
from scikit-learn's HistGradientBoosting with its standard error over the draws.
XGBoost joins when it is importable (its GPU build on a GPU).

    PYTHONPATH=python:. python -m bench.gbdt_quality_large --draws 5 --device cuda \\
        --out bench/results/<date>-<device>-gbdt-quality-2m.json --markdown <same>.md
    PYTHONPATH=python:. python -m bench.gbdt_quality_large --rows 20000 --draws 2 --out /tmp/q.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from pathlib import Path

import numpy as np

from . import datasets, peers, workloads
from .registry import REGISTRY, PeerArgs, Scale

HGB = "scikit-learn HistGradientBoosting"


def contenders(scale: Scale, device: str):
    """(label, factory) of every contender: twinlearn's oblivious and Depthwise
    trees as the gbdt and gbdt_depthwise workloads run them, scikit-learn, and
    XGBoost where importable."""
    import twinlearn

    out = []
    for name, label in (("gbdt", "twinlearn oblivious"), ("gbdt_depthwise", "twinlearn Depthwise")):
        wl = REGISTRY[name]
        module, _, cls = wl.estimator.rpartition(".")
        est = getattr(importlib.import_module(f"twinlearn.{module}"), cls)
        params = {**wl.resolve_params(scale, None, "twinlearn"), "device": device}
        out.append((label, lambda est=est, params=params: est(**params)))
    from sklearn.ensemble import HistGradientBoostingClassifier

    hgb_params = workloads.GBDT.resolve_params(scale, None, "sklearn")
    out.append((HGB, lambda: HistGradientBoostingClassifier(**hgb_params)))
    try:
        import xgboost  # noqa: F401
    except ImportError:
        return out, twinlearn
    peer_args = PeerArgs(params={}, scale=scale, data=None, device="cpu" if device == "cpu" else "cuda:0")
    out.append((f"XGBoost {peers.XGBOOST.note(peer_args)}",
                lambda: peers.XGBOOST.build(peer_args)))
    return out, twinlearn


def run(rows: int, draws: int, device: str, log=print) -> dict:
    from sklearn.metrics import roc_auc_score

    from .environment import cpu_info, device_record, git_info, library_versions

    base = workloads.GBDT.scales["cuda"]
    scale = Scale(rows, base.cols, base.extra)
    made, twinlearn = contenders(scale, device)
    per = {label: [] for label, _ in made}
    for seed in range(draws):
        data = datasets.classification(scale, seed, np.float32)
        X, y, Xte, yte = (data[k] for k in ("X", "y", "X_test", "y_test"))
        for label, make in made:
            est = make()
            t = time.perf_counter()
            est.fit(X, y)
            fit_s = time.perf_counter() - t
            proba = np.asarray(est.predict_proba(Xte), dtype=np.float64)[:, 1]
            pred = (proba > 0.5).astype(yte.dtype) if label.startswith("XGBoost") else np.asarray(est.predict(Xte))
            score = {"accuracy": float(np.mean(pred == yte)), "auc": float(roc_auc_score(yte, proba)),
                     "fit_s": fit_s}
            per[label].append(score)
            log(f"draw {seed} {label:36s} accuracy={score['accuracy']:.4f} auc={score['auc']:.4f} "
                f"fit {fit_s:.2f} s")
    summary = []
    for label, scores in per.items():
        entry = {"label": label, "draws": scores}
        for metric in ("accuracy", "auc"):
            v = np.array([s[metric] for s in scores])
            d = v - np.array([s[metric] for s in per[HGB]])
            entry[metric] = {"mean": float(v.mean()),
                             "diff_vs_hgb": float(d.mean()),
                             "diff_se": float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else None}
        summary.append(entry)
    env = {"git": git_info(), "cpu": cpu_info(), "libraries": library_versions(),
           "date": time.strftime("%Y-%m-%d"), "device": device_record("cpu" if device == "cpu" else "cuda:0")}
    return {"suite": "gbdt-quality-large", "environment": env, "rows": rows, "features": scale.cols,
            "held_out": datasets.held_out_rows(rows), "trees": scale.extra["rounds"],
            "depth": scale.extra["depth"], "draws": draws, "contenders": summary, "twinlearn": twinlearn.__version__}


def render(result: dict) -> str:
    env = result["environment"]
    where = env["device"]["name"]
    lines = [
        "<!-- Generated by `python -m bench.gbdt_quality_large`: edit the generator, not this page. -->",
        f"# Boosting on {result['rows']:,} x {result['features']}: accuracy over {result['draws']} draws",
        "",
        f"The gbdt workload's task ({result['trees']} trees, depth {result['depth']}, learning rate 0.1,",
        f"{result['held_out']:,} held-out rows), drawn {result['draws']} times (seeds 0 .. {result['draws'] - 1});",
        "every contender fits every draw, twinlearn in its default (deterministic) mode.",
        "Differences are paired by draw, against scikit-learn's HistGradientBoosting,",
        "± their standard error over the draws.",
        "",
        f"Commit `{env['git'].get('commit', 'unknown')[:12]}`, {env['date']}, {where}, "
        f"scikit-learn {env['libraries'].get('scikit-learn')}.",
        "",
        "| contender | accuracy (mean) | vs HistGradientBoosting | AUC (mean) | vs HistGradientBoosting "
        "| fit (mean s) | per draw: accuracy |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in result["contenders"]:
        cells = [c["label"]]
        for metric in ("accuracy", "auc"):
            m = c[metric]
            cells.append(f"{m['mean']:.4f}")
            cells.append("-" if c["label"] == HGB else
                         f"{m['diff_vs_hgb']:+.4f}" + (f" ± {m['diff_se']:.4f}" if m["diff_se"] is not None else ""))
        cells.append(f"{np.mean([d['fit_s'] for d in c['draws']]):.2f}")
        cells.append(", ".join(f"{d['accuracy']:.4f}" for d in c["draws"]))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Fit times here are single fits beside the scoring, not the harness's timing "
              "(docs/BENCHMARKS.md).", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=workloads.GBDT.scales["cuda"].rows)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--device", default="cuda", help="twinlearn's device: cpu or cuda")
    ap.add_argument("--out", required=True, help="result JSON")
    ap.add_argument("--markdown", help="Markdown page to write")
    args = ap.parse_args(argv)
    result = run(args.rows, args.draws, args.device)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(render(result))


if __name__ == "__main__":
    main()
