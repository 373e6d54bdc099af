"""``python -m twinlearn.accel``: run a script or module with scikit-learn accelerated.

    python -m twinlearn.accel [--profile] [--verbose] [--device DEV] script.py [args...]
    python -m twinlearn.accel [--profile] [--verbose] [--device DEV] -m module [args...]
    python -m twinlearn.accel --support-matrix
    python -m twinlearn.accel --overhead
    python -m twinlearn.accel --measure-thresholds [--device cuda|cpu] [--only NAME,...]
        [--cols D] [--max-rows N] [--budget-seconds S] [--out FILE]
"""

from __future__ import annotations

import os
import runpy
import sys

USAGE = __doc__.split("\n\n", 1)[1].rstrip() + "\n"

HELP = USAGE + """
options:
  --profile         print the time spent per estimator and method (twinlearn
                    vs scikit-learn) to stderr at exit
  --verbose, -v     print each dispatch decision and its reason to stderr
  --device DEV      auto (default) | cpu | cuda | cuda:N (see twinlearn.accel.set_device)
  --support-matrix  print docs/SUPPORT_MATRIX.md, generated from the registry
  --overhead        measure the accelerator's per-call overhead
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
    opts = {"profile": False, "verbose": False, "device": None, "module": None, "script": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--profile":
            opts["profile"] = True
        elif a in ("--verbose", "-v"):
            opts["verbose"] = True
        elif a == "--device" or a.startswith("--device="):
            if "=" in a:
                opts["device"] = a.split("=", 1)[1]
            else:
                i += 1
                if i == len(argv):
                    raise SystemExit("python -m twinlearn.accel: --device needs a value\n" + USAGE)
                opts["device"] = argv[i]
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
    from . import _matrix, _overhead
    import twinlearn.accel as accel

    if action == "--support-matrix":
        sys.stdout.write(_matrix.support_matrix())
        return 0
    if action == "--measure-thresholds":
        return _measure_thresholds(rest, opts["device"])
    if opts["device"] is not None:
        accel.set_device(opts["device"])
    if action == "--overhead":
        dev = opts["device"] or "cpu"
        print(_overhead.format_overhead(_overhead.measure_overhead(device=dev)))
        return 0
    if opts["verbose"]:
        accel.set_verbose(True)
    if opts["profile"]:
        accel.set_profiling(True)
    accel.install()
    try:
        if opts["module"] is not None:
            sys.argv = [opts["module"], *rest]
            runpy.run_module(opts["module"], run_name="__main__", alter_sys=True)
        else:
            script = opts["script"]
            sys.argv = [script, *rest]
            sys.path[0] = os.path.dirname(os.path.abspath(script))
            runpy.run_path(script, run_name="__main__")
    finally:
        if opts["profile"]:
            sys.stdout.flush()
            print(accel.format_profile(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
