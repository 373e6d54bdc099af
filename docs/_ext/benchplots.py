"""The benchmark plots page, written from bench/results at each build.

Every ``bench/results/*.png`` (the plots ``make bench`` and ``make bench-gpu``
leave beside their JSON results), newest first, so a new run's plots are on
the site without an edit. Written to ``docs/bench_plots.md`` (ignored by git).
"""

from __future__ import annotations

from pathlib import Path


def plots_page(results: Path, docs: Path) -> str:
    lines = ["# Benchmark plots", "",
             "Every plot under `bench/results/`, newest first: the speed-up of twinlearn over its peers "
             "per workload (`*-speedup.png`) and scaling with the row count (`*-scaling-*.png`). The runs "
             "and their tables are in [the benchmarks](BENCHMARKS.md).", ""]
    pngs = sorted(results.glob("*.png"), key=lambda p: p.name, reverse=True)
    if not pngs:
        lines.append("No plots have been recorded yet.")
    for png in pngs:
        rel = Path("..") / png.relative_to(docs.parent)
        lines += [f"## {png.stem}", "", f"![{png.stem}]({rel.as_posix()})", ""]
    return "\n".join(lines) + "\n"


def _config_inited(app, config):
    docs = Path(app.srcdir)
    page = docs / "bench_plots.md"
    text = plots_page(docs.parent / "bench" / "results", docs)
    if not page.exists() or page.read_text() != text:
        page.write_text(text)


def setup(app):
    app.connect("config-inited", _config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
