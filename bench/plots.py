"""PNG plots of a result: twinlearn's speed-up over each peer per workload,
and time against rows for the full suite's sweeps. Needs matplotlib; without
it the plots are skipped with a message."""

from __future__ import annotations

from pathlib import Path

from .contenders import OK
from .report import fmt_time, reference


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _speedups(result: dict) -> list[tuple[str, dict]]:
    out = []
    for w in result["workloads"]:
        ref = reference(w["contenders"])
        if ref and ref.get("speedup_vs"):
            out.append((w["title"], ref["name"], ref["speedup_vs"]))
    return out


def speedup_plot(plt, result: dict, path: Path) -> Path | None:
    from matplotlib import ticker

    data = _speedups(result)
    if not data:
        return None
    fig, axes = plt.subplots(len(data), 1, figsize=(8, 0.5 + sum(0.35 * len(s) + 0.8 for _, _, s in data)),
                             squeeze=False)
    for ax, (title, ref_name, speedups) in zip(axes[:, 0], data):
        names = list(speedups)
        values = [speedups[n] for n in names]
        colors = ["tab:green" if v >= 1 else "tab:red" for v in values]
        ax.barh(names, values, color=colors)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlim(min(0.5, min(values) / 2), max(2.0, max(values) * 2))
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.invert_yaxis()
        ax.set_title(f"{title}\nspeed-up of {ref_name} (>1: twinlearn faster)", fontsize=9)
        for y, v in enumerate(values):
            ax.text(v, y, f" {v:.3g}×", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def scaling_plot(plt, sweep: dict, path: Path) -> Path | None:
    from matplotlib import ticker

    series: dict[str, list[tuple[int, float]]] = {}
    for p in sweep["points"]:
        for r in p["contenders"]:
            if r["status"] == OK:
                series.setdefault(r["name"], []).append((p["rows"], r["total_s"]))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, pts in series.items():
        xs, ys = zip(*pts)
        ax.plot(xs, ys, marker="o", linestyle="--" if not name.startswith("twinlearn") else "-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{int(v):,}"))
    time_label = ticker.FuncFormatter(lambda v, _: fmt_time(v))
    ax.yaxis.set_major_formatter(time_label)
    ax.yaxis.set_minor_formatter(time_label)
    ax.set_xlabel(f"rows ({sweep['cols']} columns)")
    ax.set_ylabel("time")
    ax.set_title(sweep["title"], fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def make_plots(result: dict, stem: Path) -> tuple[dict, str | None]:
    """Writes <stem>-speedup.png and <stem>-scaling-<workload>.png; returns
    ({'speedup': path, 'scaling': {workload: path}}, message or None)."""
    plt = _pyplot()
    if plt is None:
        return {}, "matplotlib is not importable: plots skipped"
    stem.parent.mkdir(parents=True, exist_ok=True)
    plots: dict = {}
    p = speedup_plot(plt, result, stem.with_name(stem.name + "-speedup.png"))
    if p:
        plots["speedup"] = str(p)
    for sweep in result.get("sweeps") or []:
        p = scaling_plot(plt, sweep, stem.with_name(f"{stem.name}-scaling-{sweep['workload']}.png"))
        if p:
            plots.setdefault("scaling", {})[sweep["workload"]] = str(p)
    return plots, None
