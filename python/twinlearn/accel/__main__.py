"""``python -m twinlearn.accel``: run a script or module with scikit-learn accelerated.

    python -m twinlearn.accel [--profile] [--verbose] [--device DEV] [--threshold N] script.py [args...]
    python -m twinlearn.accel [--profile] [--verbose] [--device DEV] [--threshold N] -m module [args...]
    python -m twinlearn.accel --support-matrix
    python -m twinlearn.accel --overhead [--device DEV] [--only NAME,...] [--budget-seconds S] [--repeats N]
    python -m twinlearn.accel --measure-thresholds [--device cuda|cpu] [--only NAME,...]
        [--cols D] [--max-rows N] [--budget-seconds S] [--out FILE]
"""

from __future__ import annotations

import os
import runpy
import sys

from . import _config

USAGE = __doc__.split("\n\n", 1)[1].rstrip() + "\n"

HELP = USAGE + """
options:
  --profile         print the time spent per estimator and method (twinlearn
                    vs scikit-learn) to stderr at exit
  --verbose, -v     print each dispatch decision and its reason to stderr
  --device DEV      auto (default) | cpu | cuda | cuda:N (see twinlearn.accel.set_device)
  --threshold N     run every estimator on twinlearn from N rows on, in place of
                    the measured thresholds (twinlearn.accel.set_threshold(N))

  The program and the processes it starts (joblib / multiprocessing workers,
  subprocesses with twinlearn installed) run accelerated with these settings
  (TWINLEARN_ACCEL=1 and TWINLEARN_ACCEL_DEVICE, _THRESHOLD, _VERBOSE are set
  for them). When it ends, one line on stderr says so if nothing ran on
  twinlearn, with the main reason.

  --support-matrix  print docs/SUPPORT_MATRIX.md, generated from the registry
  --overhead        measure the accelerator's per-call overhead, one line per
                    estimator and method as each estimator is done:
    --device DEV        cpu (default) | cuda | cuda:N
    --only A,B          these estimators (class names) only; default all
    --budget-seconds S  total time, split across the estimators (default 120;
                        each method still makes one call at least)
    --repeats N         calls per method at most (default 300)
  --measure-thresholds
                    time each estimator on scikit-learn and accelerated (fit +
                    predict/transform/kneighbors, NumPy in and out) at rows
                    doubling from 256, and write the size from which twinlearn
                    is faster for good (python/twinlearn/accel/_thresholds.py):
    --device DEV        cuda (default) | cuda:N | cpu; only GPU measurements
                        become the accelerator's defaults
    --only A,B          these estimators (class names) only; default all
    --cols D            columns of the synthetic data (default 32)
    --max-rows N        largest row count (default 1048576)
    --budget-seconds S  total time, split across the estimators (default 300)
    --out FILE          results file (default: the packaged thresholds.json,
                        merged; required with --device cpu)
                    The commit recorded is the source tree's, or
                    TWINLEARN_BENCH_COMMIT when set.
"""


def _parse(argv):
    opts = {"profile": False, "verbose": False, "device": None, "threshold": None, "module": None,
            "script": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--profile":
            opts["profile"] = True
        elif a in ("--verbose", "-v"):
            opts["verbose"] = True
        elif a in ("--device", "--threshold") or a.startswith(("--device=", "--threshold=")):
            key = a[2:].split("=", 1)[0]
            if "=" in a:
                value = a.split("=", 1)[1]
            else:
                i += 1
                if i == len(argv):
                    raise SystemExit(f"python -m twinlearn.accel: --{key} needs a value\n" + USAGE)
                value = argv[i]
            opts[key] = value
        elif a in ("--support-matrix", "--overhead", "--measure-thresholds", "-h", "--help"):
            opts["action"] = a
            return opts, argv[i + 1:]
        elif a == "-m" or (a.startswith("-m") and len(a) > 2):
            if a == "-m":
                i += 1
                if i == len(argv):
                    raise SystemExit("python -m twinlearn.accel: -m needs a module name\n" + USAGE)
                opts["module"] = argv[i]
            else:
                opts["module"] = a[2:]
            return opts, argv[i + 1:]
        elif a.startswith("-") and a != "-":
            raise SystemExit(f"python -m twinlearn.accel: unknown option {a}\n" + USAGE)
        else:
            opts["script"] = a
            return opts, argv[i + 1:]
        i += 1
    raise SystemExit("python -m twinlearn.accel: nothing to run\n" + USAGE)


def _cannot_run(opts) -> tuple[int, str] | None:
    """(exit status, message) when the script or module cannot be run, as
    python itself says it: status 2 for a file it cannot open, 1 for a
    module it cannot find."""
    import importlib.util

    script, module = opts["script"], opts["module"]
    if script is not None:
        if os.path.isdir(script):
            return None  # a directory with __main__.py: runpy says what is missing
        try:
            open(script, "rb").close()
        except OSError as exc:
            return 2, f"can't open file {os.path.abspath(script)!r}: [Errno {exc.errno}] {exc.strerror}"
        return None
    try:
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations is not None:
            if importlib.util.find_spec(module + ".__main__") is None:
                return 1, (f"No module named {module}.__main__; {module!r} is a package and cannot be "
                           "directly executed")
    except (ImportError, ValueError) as exc:  # a parent package is missing, an empty name...
        return 1, f"Error while finding module specification for {module!r} ({type(exc).__name__}: {exc})"
    if spec is None:
        return 1, f"No module named {module}"
    return None


def _overhead(argv, device) -> int:
    import argparse

    from . import _overhead

    p = argparse.ArgumentParser(prog="python -m twinlearn.accel --overhead")
    p.add_argument("--device", default=device or "cpu")
    p.add_argument("--only", default=None, help="comma-separated class names")
    p.add_argument("--budget-seconds", type=float, default=120.0)
    p.add_argument("--repeats", type=int, default=300)
    a = p.parse_args(argv)
    only = [n.strip() for n in a.only.split(",") if n.strip()] if a.only else None
    print(_overhead.HEADER, flush=True)

    def show(name, per):
        print(_overhead.format_rows(name, per), flush=True)

    _overhead.measure_overhead(device=a.device, estimators=only, repeats=a.repeats,
                               budget_s=a.budget_seconds, progress=show)
    return 0


def _measure_thresholds(argv, device) -> int:
    import argparse

    from . import _calibrate, _thresholds

    p = argparse.ArgumentParser(prog="python -m twinlearn.accel --measure-thresholds")
    p.add_argument("--device", default=device or "cuda")
    p.add_argument("--only", default=None, help="comma-separated class names")
    p.add_argument("--cols", default=",".join(map(str, _thresholds.DEFAULT_COLS)),
                   help="comma-separated widths of the synthetic data")
    p.add_argument("--max-rows", type=int, default=_calibrate.DEFAULT_MAX_ROWS)
    p.add_argument("--budget-seconds", type=float, default=_calibrate.DEFAULT_BUDGET_S)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    only = [n.strip() for n in a.only.split(",") if n.strip()] if a.only else None
    try:
        cols = [int(c) for c in a.cols.split(",") if c.strip()]
    except ValueError:
        print(f"python -m twinlearn.accel --measure-thresholds: --cols takes widths such as 32,256; "
              f"got {a.cols!r}", file=sys.stderr)
        return 2
    try:
        _calibrate.measure_thresholds(device=a.device, only=only, cols=cols, max_rows=a.max_rows,
                                      budget_s=a.budget_seconds, out=a.out)
    except ValueError as exc:
        print(f"python -m twinlearn.accel --measure-thresholds: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    opts, rest = _parse(argv)
    action = opts.get("action")
    if action in ("-h", "--help"):
        sys.stdout.write(HELP)
        return 0
    from . import _matrix
    import twinlearn.accel as accel

    if action == "--support-matrix":
        sys.stdout.write(_matrix.support_matrix())
        return 0
    if action == "--measure-thresholds":
        return _measure_thresholds(rest, opts["device"])
    if action == "--overhead":
        return _overhead(rest, opts["device"])
    try:
        if opts["device"] is not None:
            accel.set_device(opts["device"])
        if opts["threshold"] is not None:
            try:
                rows = int(opts["threshold"])
            except ValueError:
                raise ValueError(f"--threshold takes a number of rows; got {opts['threshold']!r}") from None
            accel.set_threshold(rows)
    except ValueError as exc:
        print(f"python -m twinlearn.accel: {exc}", file=sys.stderr)
        return 2
    failure = _cannot_run(opts)
    if failure is not None:
        print(f"python -m twinlearn.accel: {failure[1]}", file=sys.stderr)
        return failure[0]
    if opts["verbose"]:
        accel.set_verbose(True)
    if opts["profile"]:
        accel.set_profiling(True)
    _config.export_environ()
    accel.install()
    finished = False
    try:
        if opts["module"] is not None:
            sys.argv = [opts["module"], *rest]
            runpy.run_module(opts["module"], run_name="__main__", alter_sys=True)
        else:
            script = opts["script"]
            sys.argv = [script, *rest]
            sys.path[0] = os.path.dirname(os.path.abspath(script))
            runpy.run_path(script, run_name="__main__")
        finished = True
    except SystemExit:
        finished = True
        raise
    finally:
        if opts["profile"]:
            sys.stdout.flush()
            print(accel.format_profile(), file=sys.stderr)
        if finished:
            sys.stdout.flush()
            _config.report_idle()
    return 0


if __name__ == "__main__":
    sys.exit(main())
