"""docs/SUPPORT_MATRIX.md, generated from the registry (``python -m twinlearn.accel --support-matrix``)."""

from __future__ import annotations

import sklearn

from . import _registry, _thresholds


def _methods(rs):
    return ", ".join(f"`{m}`" for m in rs.methods)


def support_matrix() -> str:
    """The support matrix as Markdown."""
    resolved = _registry.available()
    skipped = _registry.skipped()
    out = [
        "# Support matrix: scikit-learn estimators on twinlearn",
        "",
        "Generated from the accelerator's registry (`python/twinlearn/accel/_estimators.py`) by",
        "`python -m twinlearn.accel --support-matrix > docs/SUPPORT_MATRIX.md`",
        f"with scikit-learn {sklearn.__version__}. Do not edit by hand.",
        "",
        "`twinlearn.accelerate(...)`, `with twinlearn.accel.enabled():`, `twinlearn.accel.install()`,",
        "`python -m twinlearn.accel script.py`, `%load_ext twinlearn.accel` and `TWINLEARN_ACCEL=1`",
        "run the estimators below on twinlearn when every condition holds; otherwise scikit-learn's",
        "own code runs, and the reason is logged (`twinlearn.accel.set_verbose(True)`, logger",
        "`twinlearn.accel`).",
        "",
        "## Conditions for every estimator",
        "",
        "- **Input X**: a dense 2-D NumPy array of bool, integer, float32 or float64 (lists and tuples",
        "  are converted), a pandas DataFrame whose columns all have such dtypes, or a 2-D CUDA array",
        "  (CuPy, PyTorch, `__cuda_array_interface__`). Sparse matrices, other dtypes (object, complex,",
        "  float16, pandas extension dtypes) and empty arrays run on scikit-learn.",
        "- **NaN / infinity**: where the table says NaN is not served, X holding NaN or infinity runs on",
        "  scikit-learn (which raises or handles it as it always does).",
        "- **Device**: `twinlearn.accel.set_device(\"auto\")` (default) needs a usable GPU; `\"cuda:N\"`",
        "  needs that GPU; `\"cpu\"` runs twinlearn's CPU backend.",
        "- **Size**: X has at least the threshold's rows and columns (`twinlearn.accel.set_threshold`,",
        "  `update_threshold`, `reset_thresholds`). Device arrays run on twinlearn at any size; so do the",
        "  later batches of a `partial_fit` that started on twinlearn.",
        "- **Parameters**: scikit-learn validates them first (same errors as without the accelerator);",
        "  twinlearn runs only when it serves every value (per estimator below; a parameter not listed",
        "  is served only at its default). No callbacks set (`set_callbacks`).",
        "- **Keyword arguments** of routed methods: only those listed per estimator (or None).",
        "- **Methods using the fit** (`transform`, `predict`...): run on twinlearn only after a twinlearn",
        "  fit. The fitted attributes are mirrored onto the scikit-learn object as NumPy arrays, so",
        "  scikit-learn's own methods serve whatever twinlearn does not, and a pickle loads as the plain",
        "  scikit-learn estimator.",
        "- **Errors**: when twinlearn rejects a call, scikit-learn runs it instead (logged; a warning",
        "  unless the rejection was a ValueError or TypeError about the input).",
        "",
        "## Estimators",
        "",
        "| scikit-learn | twinlearn | routed methods | NaN in X | default threshold (rows, columns) | threshold source |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rs in resolved:
        e = rs.entry
        shown = _thresholds.threshold_text(e)
        out.append(
            f"| `{e.sklearn}` | `{e.twinlearn}` | {_methods(rs)} | "
            f"{'served' if e.allow_nan else 'scikit-learn'} | {shown} | {_thresholds.describe(e)} |"
        )
    out += [
        "",
        "Default thresholds are measured with `python -m twinlearn.accel --measure-thresholds --device cuda`",
        "(the size from which the accelerated estimator, fit plus its main method with NumPy in and out,",
        "is faster than scikit-learn at that size and every larger size measured, at each width measured:",
        f"{' and '.join(map(str, _thresholds.DEFAULT_COLS))} columns unless stated; data of d columns takes the",
        "threshold of the widest measured width <= d) and kept in `python/twinlearn/accel/thresholds.json`;",
        "only measurements made on a GPU become defaults. A placeholder is not a measurement.",
    ]
    for rs in resolved:
        e = rs.entry
        out += [
            "",
            f"### {e.name}",
            "",
            "| parameter | scikit-learn default | values run on twinlearn |",
            "| --- | --- | --- |",
        ]
        for p in rs.param_names:
            rule = e.params.get(p)
            served = rule.doc if rule is not None else "the default only"
            out.append(f"| `{p}` | `{rs.defaults[p]!r}` | {served} |")
        if e.check_doc:
            out += ["", f"Also: {e.check_doc}"]
        if e.notes:
            out += ["", f"Differences from scikit-learn: {e.notes}"]
        kw = ", ".join(f"`{k}`" for k in e.kwargs) or "none"
        out += [
            "",
            f"Keyword arguments served: {kw}.",
            "Fitted attributes mirrored: " + ", ".join(f"`{a}`" for a in rs.attributes) + ".",
        ]
        if e.derive is not None:
            doc = (e.derive.__doc__ or "").strip().split("\n\n")[0]
            doc = " ".join(doc.split())
            out.append(f"Further fitted state derived from the twinlearn fit (`{e.derive.__name__}`)"
                       + (f": {doc}" if doc else "."))
        if e.conformance:
            tests = ", ".join(f"`{m}`" + (f" (`-k {k}`)" if k else "") for m, k in e.conformance)
            out.append(f"scikit-learn test modules run with it (`make test-sklearn`): {tests}.")
    out += _metrics_section()
    out += _clustering_metric_rows()
    out += ["", "## Declared but not available in this build", ""]
    if skipped:
        out += [f"- `{k}`: {v}" for k, v in sorted(skipped.items())]
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


def _metrics_section() -> list[str]:
    """The functions of twinlearn.metrics that mirror sklearn.metrics (every
    ``SUPPORT_*`` table of the package: name -> its own path)."""
    import twinlearn.metrics as tm

    rows = {}
    for attr in sorted(a for a in vars(tm) if a.startswith("SUPPORT_")):
        rows.update(getattr(tm, attr))
    if not rows:
        return []
    out = [
        "", "## Metrics (`twinlearn.metrics`)", "",
        "Functions with scikit-learn's signatures, errors and warnings, plus `device` and `numeric_mode`",
        "(docs/NUMERICS.md, \"Metrics\"). NumPy input outside `numeric_mode='identical'` is scikit-learn's own",
        "computation; device input (CuPy, PyTorch CUDA) and identical mode take twinlearn's own path below,",
        "which leaves the data where it is (\"host copy\": scikit-learn on a host copy of device input).",
        "They are not routed by the accelerator.", "",
        "| scikit-learn | twinlearn | device input and identical mode |",
        "| --- | --- | --- |",
    ]
    for name in sorted(rows):
        out.append(f"| `sklearn.metrics.{name}` | `twinlearn.metrics.{name}` | {rows[name]} |")
    return out


def _clustering_metric_rows() -> list[str]:
    """The clustering metrics and pairwise kernels of twinlearn.metrics (their
    rows: the SUPPORT tables beside the functions)."""
    from ..metrics import _cluster, _kernels, _unsupervised

    out = [
        "",
        "## Functions: clustering metrics and pairwise kernels",
        "",
        "`twinlearn.metrics` functions with scikit-learn's signatures (plus keyword-only `device` and",
        "`numeric_mode`), called directly (the accelerator does not route functions). Numbers:",
        "docs/NUMERICS.md, \"Clustering metrics\".",
        "",
        "| scikit-learn | twinlearn | computed by twinlearn | computed by scikit-learn | numbers |",
        "| --- | --- | --- | --- | --- |",
    ]
    for sk, tl, ours, theirs, numbers in (*_cluster.SUPPORT, *_unsupervised.SUPPORT, *_kernels.SUPPORT):
        out.append(f"| `{sk}` | `{tl}` | {ours} | {theirs} | {numbers} |")
    return out
