"""Run scikit-learn's own metric tests against twinlearn.metrics.

    python tests/sklearn_metrics/run_metrics.py            # every module of every modules_*.txt
                                                   # (make test-sklearn-metrics)
    python tests/sklearn_metrics/run_metrics.py --ci       # the bounded run of make test
    python tests/sklearn_metrics/run_metrics.py --only sklearn.metrics.tests.test_ranking[,...]

Each ``modules_*.txt`` here lists one scikit-learn test module per line,
optionally followed by `` -k <expr>`` (its selection in every run) and
`` --ci-k <expr>`` (narrowed further under ``--ci``; without it ``--ci``
runs the module's whole selection: the three modules of
modules_classification.txt take about 15 s on one core). Each module runs in its own pytest process with
metrics_plugin.py, which swaps twinlearn.metrics's functions in for the
names the module imported from sklearn.metrics, applies the
known_failures_*.txt files (xfail, not strict) and prints the module's pass
rate. Extra arguments go to every pytest run. ``TWINLEARN_METRICS_MODE``
chooses the numeric mode (default 'identical': twinlearn's own path).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RATE = re.compile(r"^(\S+): pass rate ([0-9.]+)% (.*)$")


def read_plan(ci: bool) -> list[tuple[str, str]]:
    """[(module, -k expression)] from every modules_*.txt."""
    plan = []
    for path in sorted(HERE.glob("modules_*.txt")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            line, _, ci_k = line.partition(" --ci-k ")
            module, _, k = line.partition(" -k ")
            module, k, ci_k = module.strip(), k.strip(), ci_k.strip()
            if not module or " " in module:
                raise ValueError(f"{path}:{n}: expected '<module> [-k <expr>] [--ci-k <expr>]', got {line!r}")
            if ci and ci_k:
                k = f"({k}) and ({ci_k})" if k else ci_k
            plan.append((module, k))
    return plan


def pytest_command(module: str, k: str, extra=()) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "-c", str(HERE / "pytest.ini"), "--rootdir", str(HERE),
           "-p", "metrics_plugin", "-p", "no:cacheprovider", "-q", "--pyargs", module]
    if k:
        cmd += ["-k", k]
    return cmd + list(extra)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ci = "--ci" in argv
    argv = [a for a in argv if a != "--ci"]
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        if i + 1 >= len(argv):
            print("--only needs a comma-separated list of modules", file=sys.stderr)
            return 2
        only = set(argv[i + 1].split(","))
        argv = argv[:i] + argv[i + 2:]
    plan = read_plan(ci)
    if only is not None:
        unknown = only - {m for m, _ in plan}
        if unknown:
            print(f"not in the plan: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        plan = [(m, k) for m, k in plan if m in only]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    env.setdefault("TWINLEARN_NUM_THREADS", "1")
    status, results = 0, []
    for module, k in plan:
        cmd = pytest_command(module, k, argv)
        print("+", " ".join(repr(c) if " " in c else c for c in cmd), flush=True)
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(proc.stdout)
        rates = [m.groups() for m in map(RATE.match, proc.stdout.splitlines()) if m]
        results.append((module, k, proc.returncode, rates))
        if proc.returncode != 0:  # 5 (nothing collected) too: the selection no longer matches
            status = 1
    print("\ntwinlearn.metrics against scikit-learn's tests:", "FAILED" if status else "passed")
    for module, k, rc, rates in results:
        sel = f" -k {k!r}" if k else ""
        rate = "; ".join(f"{r}% {detail}" for _, r, detail in rates) or "no rate"
        print(f"  {module}{sel}: {'ok' if rc == 0 else f'pytest exit {rc}'}: pass rate {rate}")
    return status


if __name__ == "__main__":
    sys.exit(main())
