"""Test quality of twinlearn's boosted trees beside scikit-learn's HistGradientBoosting.

The same number of trees, learning rate and depth for every contender, scored
by cross-validation (the same folds for all) on iris, digits, breast_cancer,
diabetes, a Friedman #1 regression set and HIGGS-shaped synthetic data:
accuracy and ROC AUC (one-vs-rest for several classes) for classification,
RMSE for regression. twinlearn runs its three tree shapes: oblivious trees
(the default, ``GradientBoostingClassifier`` / ``GradientBoostingRegressor``),
``grow_policy='Depthwise'`` and ``grow_policy='Lossguide'`` with 31 leaves
(scikit-learn's default ``max_leaf_nodes``); HistGradientBoosting runs with
``max_depth`` equal to the depth and its default 31 leaves, without early
stopping. The Depthwise and Lossguide fits use ``min_data_in_leaf=20``, the
value of scikit-learn's ``min_samples_leaf``.

    PYTHONPATH=python:. python -m bench.gbdt_quality                 # writes docs/GBDT_QUALITY.md
    PYTHONPATH=python:. python -m bench.gbdt_quality --higgs-rows 20000 --out /tmp/q.json --markdown /tmp/q.md
    PYTHONPATH=python:. python -m bench.gbdt_quality --only iris,digits --repeats 5 --out ... --markdown ...

``--repeats R`` repeats the cross-validation with R shuffles of the rows
(seeds 0 .. R-1, the same for every contender): the means then average R
times as many folds, and the page gives each mean with its standard error,
so that a difference of one test row in 150 is not read as a ranking.

The twinlearn fits use the CPU backend in identical mode: the CUDA backend
fits the same models, bit for bit, so the scores are those of a GPU fit too.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from .gbdt_quick import higgs_like

#: (name, task, trees, learning rate, folds)
DATASETS = (
    ("iris", "multiclass", 100, 0.1, 5),
    ("digits", "multiclass", 100, 0.1, 5),
    ("breast_cancer", "binary", 100, 0.1, 5),
    ("higgs_like", "binary", 200, 0.1, 3),
    ("diabetes", "regression", 100, 0.05, 5),
    ("friedman1", "regression", 200, 0.1, 5),
)
DEPTH = 6


def load(name: str, higgs_rows: int):
    from sklearn import datasets

    if name == "iris":
        return datasets.load_iris(return_X_y=True)
    if name == "digits":
        return datasets.load_digits(return_X_y=True)
    if name == "breast_cancer":
        return datasets.load_breast_cancer(return_X_y=True)
    if name == "diabetes":
        return datasets.load_diabetes(return_X_y=True)
    if name == "friedman1":
        return datasets.make_friedman1(n_samples=5000, noise=0.5, random_state=3)
    if name == "higgs_like":
        return higgs_like(higgs_rows, seed=1)
    raise ValueError(name)


def contenders(task: str, trees: int, lr: float):
    """(label, estimator factory) for every contender of a task."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    import twinlearn

    classify = task != "regression"
    common = dict(n_estimators=trees, learning_rate=lr, max_depth=DEPTH, device="cpu", numeric_mode="identical")
    loss = "RMSE" if not classify else ("Logloss" if task == "binary" else "MultiClass")
    shaped = twinlearn.GradientBoostingClassifier if classify else twinlearn.GradientBoostingRegressor
    # Every tree shape with the scikit-learn-shaped estimator's regularization.
    common_gb = dict(common, l2_leaf_reg=shaped().l2_regularization)
    hgb = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
    return (
        # early_stopping=False: the same number of trees as the others (its default stops above 10 000 rows).
        ("twinlearn oblivious", lambda: shaped(early_stopping=False, **common)),
        ("twinlearn Depthwise", lambda: twinlearn.GradientBoosting(loss=loss, grow_policy="Depthwise",
                                                                   min_data_in_leaf=20, **common_gb)),
        ("twinlearn Lossguide (31 leaves)", lambda: twinlearn.GradientBoosting(
            loss=loss, grow_policy="Lossguide", max_leaves=31, min_data_in_leaf=20, **common_gb)),
        ("scikit-learn HistGradientBoosting", lambda: hgb(max_iter=trees, learning_rate=lr, max_depth=DEPTH,
                                                          early_stopping=False, random_state=0)),
    )


def scores(task: str, est, Xte, yte) -> dict:
    from sklearn.metrics import accuracy_score, mean_squared_error, roc_auc_score

    if task == "regression":
        return {"rmse": float(np.sqrt(mean_squared_error(yte, np.asarray(est.predict(Xte), dtype=np.float64))))}
    proba = np.asarray(est.predict_proba(Xte), dtype=np.float64)
    out = {"accuracy": float(accuracy_score(yte, est.predict(Xte)))}
    if task == "binary":
        out["auc"] = float(roc_auc_score(yte, proba[:, 1]))
    else:
        out["auc"] = float(roc_auc_score(yte, proba / proba.sum(axis=1, keepdims=True), multi_class="ovr"))
    return out


def paired_difference(values, reference) -> dict:
    """The mean of values[i] - reference[i] and its standard error (None for
    a single pair)."""
    d = np.asarray(values, dtype=np.float64) - np.asarray(reference, dtype=np.float64)
    return {"mean": float(d.mean()), "se": float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else None}


def add_paired_differences(entry: dict) -> None:
    """Each contender's per-fold score minus scikit-learn's on the same fold
    (the last contender): the mean difference and its standard error. The
    folds' own spread (which rows are hard) cancels, so this is the figure to
    read a ranking from."""
    ref = entry["contenders"][-1]["folds"]
    for c in entry["contenders"][:-1]:
        c["vs_sklearn"] = {k: paired_difference([f[k] for f in c["folds"]], [r[k] for r in ref]) for k in ref[0]}


def run(higgs_rows: int, only: list[str] | None = None, log=print, repeats: int = 1) -> dict:
    from sklearn.model_selection import KFold, StratifiedKFold

    from .environment import cpu_info, git_info, library_versions

    results = []
    for name, task, trees, lr, folds in DATASETS:
        if only and name not in only:
            continue
        X, y = load(name, higgs_rows)
        X = np.ascontiguousarray(X, dtype=np.float32)
        splits = [(KFold if task == "regression" else StratifiedKFold)(folds, shuffle=True, random_state=seed)
                  for seed in range(repeats)]
        entry = {"dataset": name, "task": task, "rows": int(X.shape[0]), "features": int(X.shape[1]),
                 "trees": trees, "learning_rate": lr, "depth": DEPTH, "folds": folds, "repeats": repeats,
                 "contenders": []}
        for label, make in contenders(task, trees, lr):
            per_fold, fit_s = [], 0.0
            for split in splits:
                for tr, te in split.split(X, y):
                    est = make()
                    t = time.perf_counter()
                    est.fit(X[tr], y[tr])
                    fit_s += time.perf_counter() - t
                    per_fold.append(scores(task, est, X[te], y[te]))
            mean = {k: float(np.mean([f[k] for f in per_fold])) for k in per_fold[0]}
            # Standard error of the mean over the folds (folds of one
            # repetition share training rows, so it is a rough guide).
            se = {k: float(np.std([f[k] for f in per_fold], ddof=1) / np.sqrt(len(per_fold)))
                  for k in per_fold[0]}
            entry["contenders"].append({"label": label, "mean": mean, "se": se, "folds": per_fold,
                                        "fit_s_total": fit_s})
            log(f"{name:14s} {label:34s} " + "  ".join(f"{k}={v:.4f}" for k, v in mean.items()))
        add_paired_differences(entry)
        results.append(entry)
    return {"suite": "gbdt-quality", "environment": {"git": git_info(), "cpu": cpu_info(),
                                                     "libraries": library_versions(),
                                                     "date": time.strftime("%Y-%m-%d")},
            "higgs_rows": higgs_rows, "datasets": results}


def render(result: dict, docs: str = "") -> str:
    """The Markdown page; docs: the path from the page's folder to docs/
    (empty for a page in docs/), for its links."""
    git = result["environment"]["git"]
    commit = git.get("commit", "unknown")
    repeats = max(d.get("repeats", 1) for d in result["datasets"])
    names = ",".join(d["dataset"] for d in result["datasets"])
    args = (f" --only {names}" if len(result["datasets"]) < len(DATASETS) else "") + \
        (f" --repeats {repeats}" if repeats > 1 else "")
    lines = [
        "<!-- Generated by `python -m bench.gbdt_quality`: edit the generator, not this page. -->",
        "# Boosted trees: test quality beside HistGradientBoosting",
        "",
        "Cross-validated test scores of twinlearn's three tree shapes and scikit-learn's",
        "`HistGradientBoosting*` with the same number of trees, learning rate and depth",
        f"({DEPTH}), the same folds for every contender. twinlearn fits on the CPU backend in",
        "identical mode, which the CUDA backend reproduces bit for bit. Higher is better for",
        "accuracy and AUC, lower for RMSE; **bold**: the best of the row.",
        "",
        f"Commit `{commit[:12]}`, {result['environment']['date']}, "
        f"scikit-learn {result['environment']['libraries'].get('scikit-learn')}. "
        f"Reproduce: `PYTHONPATH=python:. python -m bench.gbdt_quality{args}`.",
        "",
    ]
    labels = [c["label"] for c in result["datasets"][0]["contenders"]]
    lines += ["| dataset | rows x features | trees, lr | metric | " + " | ".join(labels) + " |",
              "| --- | --- | --- | --- | " + " | ".join("---" for _ in labels) + " |"]
    for d in result["datasets"]:
        for metric in d["contenders"][0]["mean"]:
            vals = [c["mean"][metric] for c in d["contenders"]]
            best = min(vals) if metric == "rmse" else max(vals)
            repeats = d.get("repeats", 1)
            cells = []
            for c, v in zip(d["contenders"], vals):
                cell = f"**{v:.4f}**" if v == best else f"{v:.4f}"
                if repeats > 1:
                    cell += f" ± {c['se'][metric]:.4f}"
                paired = c.get("vs_sklearn", {}).get(metric)
                if paired and paired["se"] is not None:
                    cell += f" ({paired['mean']:+.4f} ± {paired['se']:.4f})"
                cells.append(cell)
            cv = f"{d['folds']}-fold" + (f" x {repeats}" if repeats > 1 else "")
            lines.append(f"| {d['dataset']} | {d['rows']:,} x {d['features']} | {d['trees']}, {d['learning_rate']:g} "
                         f"| {metric} ({cv}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        "The HIGGS-shaped rows here are a CPU-sized sample; the 2M-row task, timed on an",
        f"H200 beside scikit-learn, is in [BENCHMARKS.md]({docs}BENCHMARKS.md) (accuracy and AUC",
        f"columns) and, for depths 4, 8, 10 and Lossguide trees, [BENCHMARKS_FULL.md]({docs}BENCHMARKS_FULL.md);",
        "its accuracy over five draws of the data, beside HistGradientBoosting and XGBoost, is in",
        "bench/results/*-gbdt-quality-2m.md (`python -m bench.gbdt_quality_large`).",
        "Regularization: each twinlearn tree shape takes the scikit-learn-shaped estimator's",
        "default, `l2_regularization=1` for classification and 3 for regression (scikit-learn:",
        "0, its default); the Depthwise and Lossguide fits take `min_data_in_leaf=20`,",
        "scikit-learn's default `min_samples_leaf` (oblivious trees have no such parameter).",
    ]
    if any(d.get("repeats", 1) > 1 for d in result["datasets"]):
        lines += ["Repeated cross-validation (`5-fold x R`): R shuffles of the rows, the same for",
                  "every contender; each mean is given ± its standard error over the folds."]
    lines += ["In brackets: the mean difference from scikit-learn's score on the same folds,",
              "± its standard error (paired by fold, so the folds' own spread cancels); a",
              "positive difference is better for accuracy and AUC, a negative one for RMSE."]
    lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--higgs-rows", type=int, default=200_000)
    ap.add_argument("--only", help="comma-separated dataset names")
    ap.add_argument("--out", help="result JSON (default bench/results/<date>-cpu-gbdt-quality.json)")
    ap.add_argument("--markdown", default="docs/GBDT_QUALITY.md")
    ap.add_argument("--repeats", type=int, default=1,
                    help="repetitions of the cross-validation with other shuffles (default 1)")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    result = run(args.higgs_rows, args.only.split(",") if args.only else None, repeats=args.repeats)
    out = Path(args.out or f"bench/results/{result['environment']['date']}-cpu-gbdt-quality.json")
    out.write_text(json.dumps(result, indent=1) + "\n")
    page = Path(args.markdown)
    docs = os.path.relpath(Path("docs").resolve(), page.resolve().parent)
    page.write_text(render(result, "" if docs == "." else docs + "/"))
    print(f"wrote {out} and {args.markdown}")


if __name__ == "__main__":
    main()
