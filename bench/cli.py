"""python -m bench: run the benchmark suites and write the results."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import environment, report
from .arrays import device_input_kind
from .progress import Progress
from .registry import REGISTRY, SUITES, select
from .runner import WARMUP_ROWS, RunConfig, Runner


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmark twinlearn against scikit-learn, PyTorch and other libraries.",
    )
    p.add_argument("--suite", choices=SUITES, default="quick",
                   help="smoke: tiny sizes (tests); quick: one size per workload (default); "
                        "full: quick plus scaling sweeps and extra workloads")
    p.add_argument("--only", metavar="NAME[,NAME]", help="run only these workloads (see --list)")
    p.add_argument("--contenders", metavar="PREFIX[,PREFIX]",
                   help="run only the contenders whose name starts with one of these (case-insensitive), "
                        "e.g. 'twinlearn deterministic,scikit-learn'")
    p.add_argument("--device", choices=("cuda", "cpu"),
                   help="default: cuda when twinlearn's CUDA backend is usable, else cpu")
    p.add_argument("--sizes", choices=("smoke", "cpu", "cuda"),
                   help="workload sizes; default: smoke for the smoke suite, else the device's")
    p.add_argument("--out", type=Path, help="result JSON (default: bench/results/<date>-<device>.json)")
    p.add_argument("--markdown", type=Path,
                   help="Markdown page to regenerate (default: docs/BENCHMARKS.md for a GPU run, the result file's "
                        "name with .md for a CPU run; none for the smoke suite)")
    p.add_argument("--no-markdown", action="store_true", help="do not write the Markdown page")
    p.add_argument("--repeats", type=int, default=3, help="timed runs after the warm-up (default 3)")
    p.add_argument("--single-run-above", type=float, default=2.0, metavar="SECONDS",
                   help="a contender whose first run takes this long is run only once (default 2)")
    p.add_argument("--warmup-min", type=float, default=0.5, metavar="SECONDS",
                   help="untimed full-size runs continue until this much time has passed, at most ten (default 0.5)")
    p.add_argument("--sweep-cutoff", type=float, default=30.0, metavar="SECONDS",
                   help="full suite: skip a contender at larger sizes once a run takes this long (default 30)")
    p.add_argument("--sweep-min-rows", type=int, metavar="N",
                   help="full suite: first sweep size (default: a 64th of the workload's rows, at least 1024)")
    p.add_argument("--sweep-max-rows", type=int, metavar="N", help="full suite: largest sweep size")
    p.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--render", type=Path, metavar="RESULT.json",
                   help="regenerate the Markdown page (and plots) from a result file; run nothing")
    p.add_argument("--merge", type=Path, nargs="+", metavar="RESULT.json",
                   help="combine result files of one device and commit (workloads run in separate "
                        "invocations) into --out, then publish it as --render does; run nothing")
    return p


def _default_markdown(device: str, json_path) -> Path:
    """The page a result is published to: docs/BENCHMARKS.md for a GPU run,
    the result file's own .md for a CPU run (the page keeps the GPU run)."""
    return report.DEFAULT_MARKDOWN if device != "cpu" else Path(json_path).with_suffix(".md")


def _default_device() -> str:
    try:
        from twinlearn import _backend
    except ImportError:
        return "cpu"
    return "cuda" if _backend.cuda_available() else "cpu"


def _check_device(parser, device: str) -> str:
    if device == "cpu":
        return "cpu"
    try:
        from twinlearn import _backend
    except ImportError as exc:
        parser.error(f"--device cuda: twinlearn could not be imported: {exc}")
    if not _backend.cuda_available():
        parser.error(f"--device cuda: {_backend.cuda_unavailable_reason()}")
    return "cuda:0"


def _target_name(estimator) -> str:
    """What a workload runs: a class or function by name, a string as twinlearn's."""
    if isinstance(estimator, str):
        return f"twinlearn.{estimator}"
    name = getattr(estimator, "__qualname__", None)
    if name is None:  # an instance standing for a call, e.g. a metric with its arguments
        fn = getattr(estimator, "fn", None)
        name = getattr(fn, "__qualname__", None) or type(estimator).__qualname__
    return name


def _list_workloads() -> str:
    lines = []
    for name, w in REGISTRY.items():
        suites = ",".join(s for s in SUITES if s in w.suites)
        target = _target_name(w.estimator) if w.estimator else "twinlearn.accelerate" if w.kind == "accel" else "-"
        lines.append(f"{name:<24} {w.format_title(w.scales['cuda']):<72} {target}  [{suites}]")
    return "\n".join(lines)


def _portable(path) -> str:
    """A path relative to the repository when inside it."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(environment.REPO_ROOT))
    except ValueError:
        return str(p)


def _publish(result: dict, json_path: Path, markdown: Path | None, plots: bool, log) -> None:
    if plots:
        from .plots import make_plots

        made, message = make_plots(result, json_path.with_suffix(""))
        if message:
            log(message)
        result["plots"] = {
            k: ({w: _portable(p) for w, p in v.items()} if isinstance(v, dict) else _portable(v))
            for k, v in made.items()
        }
    if markdown is not None:
        report.write_markdown(result, json_path, markdown)
        log(f"wrote {markdown}")


def accel_overhead(device: str, repeats: int = 50, n_samples: int = 256, n_features: int = 8) -> dict:
    """twinlearn.accel's per-call cost over the native estimators, or the reason
    it could not be measured."""
    record = {"device": device, "repeats": repeats, "n_samples": n_samples, "n_features": n_features}
    try:
        from twinlearn.accel._overhead import measure_overhead

        results = measure_overhead(n_samples, n_features, repeats, device=device)
    except Exception as exc:  # reported, never fatal to the run
        return {**record, "error": f"{type(exc).__name__}: {exc}"}
    def largest(key):
        return max(
            ((r[key], f"{est}.{m}") for est, per in results.items() for m, r in per.items() if key in r),
            default=(None, "-"),
        )

    worst, own = largest("overhead_us"), largest("proxy_us")
    return {**record, "results": results, "max_overhead_us": worst[0], "max_overhead_at": worst[1],
            "max_proxy_us": own[0], "max_proxy_at": own[1]}


def main(argv=None) -> int:
    from . import workloads  # noqa: F401  (registers the workloads)

    parser = _parser()
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    if args.list:
        print(_list_workloads())
        return 0
    markdown = None if args.no_markdown else args.markdown
    if args.render is not None:
        result = report.read_json(args.render)
        _publish(result, args.render,
                 None if args.no_markdown else markdown or _default_markdown(result.get("device", ""), args.render),
                 not args.no_plots, log)
        report.write_json(result, args.render)
        return 0
    if args.merge is not None:
        if args.out is None:
            parser.error("--merge needs --out")
        try:
            result = report.merge_results([report.read_json(p) for p in args.merge])
        except ValueError as exc:
            parser.error(str(exc))
        _publish(result, args.out,
                 None if args.no_markdown else markdown or _default_markdown(result.get("device", ""), args.out),
                 not args.no_plots, log)
        report.write_json(result, args.out)
        log(f"wrote {args.out}")
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    device = _check_device(parser, args.device or _default_device())
    sizes = args.sizes or ("smoke" if args.suite == "smoke" else "cpu" if device == "cpu" else "cuda")
    try:
        chosen = select(args.only.split(",") if args.only else None, args.suite)
    except KeyError as exc:
        parser.error(exc.args[0])
    cfg = RunConfig(
        suite=args.suite,
        device=device,
        device_input=None if device == "cpu" else device_input_kind(),
        sizes=sizes,
        repeats=args.repeats,
        single_run_above_s=args.single_run_above,
        warmup_min_s=args.warmup_min,
        sweep_cutoff_s=args.sweep_cutoff,
        sweep_min_rows=args.sweep_min_rows,
        sweep_max_rows=args.sweep_max_rows,
        contenders=tuple(args.contenders.split(",")) if args.contenders else None,
    )
    log(f"bench: {len(chosen)} workload(s), suite {cfg.suite}, sizes {cfg.sizes}, device {cfg.device}")
    load_at_start = environment.load_average()
    t0 = time.perf_counter()

    def assemble(results, sweeps, env, elapsed) -> dict:
        return {
            "schema": report.SCHEMA_VERSION,
            "suite": cfg.suite,
            "device": cfg.device,
            "settings": {
                "sizes": cfg.sizes,
                "repeats": cfg.repeats,
                "warmup_min_s": cfg.warmup_min_s,
                "warmup_max_runs": cfg.warmup_max_runs,
                "warmup_slice_rows": WARMUP_ROWS,
                "single_run_above_s": cfg.single_run_above_s,
                "sweep_cutoff_s": cfg.sweep_cutoff_s,
                "sweep_min_rows": cfg.sweep_min_rows,
                "sweep_max_rows": cfg.sweep_max_rows,
                "device_input": cfg.device_input,
                "only": args.only,
                "contenders": args.contenders,
            },
            "environment": env,
            "elapsed_s": elapsed,
            "workloads": results,
            "sweeps": sweeps,
            "plots": {},
        }

    partial_path = None
    partial_env = None

    def checkpoint(results, sweeps):
        # What has been measured so far, so that a run cut short keeps it
        # (``--merge`` combines such files). The environment is collected once
        # for these files (it runs nvidia-smi and git and scans the installed
        # packages: seconds per call); the final file collects it afresh.
        nonlocal partial_path, partial_env
        if partial_env is None:
            partial_env = environment.collect(device, load_at_start)
        env = partial_env
        path = args.out or report.default_result_path(env, cfg.suite)
        partial_path = path.with_name(path.stem + ".partial.json")
        report.write_json(assemble(results, sweeps, env, time.perf_counter() - t0), partial_path)

    results, sweeps = Runner(cfg, Progress(enabled=not args.quiet)).run(chosen, checkpoint)
    overhead = None
    if cfg.suite != "smoke" and any(w.kind == "accel" for w in chosen):
        log("bench: the accelerator's per-call overhead")
        t_over = time.perf_counter()
        overhead = accel_overhead(device)
        overhead["wall_s"] = time.perf_counter() - t_over
    elapsed = time.perf_counter() - t0
    env = environment.collect(device, load_at_start)
    result = assemble(results, sweeps, env, elapsed)
    if overhead is not None:
        result["accel_overhead"] = overhead
    json_path = args.out or report.default_result_path(env, cfg.suite)
    if markdown is None and not args.no_markdown and cfg.suite != "smoke":
        # The published page is a GPU run's: a CPU run's page goes beside its result file.
        markdown = _default_markdown(device, json_path)
    _publish(result, json_path, markdown, not args.no_plots, log)
    report.write_json(result, json_path)
    if partial_path is not None and partial_path.exists():
        partial_path.unlink()
    log(f"wrote {json_path}")
    if not args.quiet:
        print(report.console_summary(result))
        print(f"ran in {report.fmt_time(elapsed)}")
    return 0
