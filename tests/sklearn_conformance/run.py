"""Run scikit-learn's own tests for the accelerated estimators, accelerator installed.

    python tests/sklearn_conformance/run.py          # every module of every entry (make test-sklearn)
    python tests/sklearn_conformance/run.py --ci     # each entry's first module, -k conformance_k
                                                     # (the bounded run in make test)
    python tests/sklearn_conformance/run.py --only sklearn.tests.test_common[,...]
                                                     # those modules of the plan only

The modules and ``-k`` expressions come from the registry
(``Entry.conformance``; with ``--ci`` the first module only, narrowed by
``Entry.conformance_k``). Each
module runs in its own pytest process with accel_plugin.py, which installs
the accelerator, sets the thresholds to 0, applies known_failures.txt and
prints the module's pass rate. Extra arguments go to every pytest run.

The CPU backend runs single-threaded unless TWINLEARN_NUM_THREADS says
otherwise: scikit-learn's tests make thousands of calls on tiny arrays, and
results do not depend on the thread count (the numeric contract, tested in
twinlearn's own suite).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _or(exprs):
    exprs = [e for e in exprs if e]
    if not exprs:
        return ""
    return exprs[0] if len(exprs) == 1 else " or ".join(f"({e})" for e in exprs)


def plan(ci: bool) -> list[tuple[str, str]]:
    """[(module, -k expression)] to run, from the registry."""
    from twinlearn.accel import _registry

    per_module: dict[str, list[str]] = {}
    whole: set[str] = set()
    for rs in _registry.available():
        modules = rs.entry.conformance[:1] if ci else rs.entry.conformance
        for module, k in modules:
            if ci and rs.entry.conformance_k:
                k = f"({k}) and ({rs.entry.conformance_k})" if k else rs.entry.conformance_k
            if not k:
                whole.add(module)
            per_module.setdefault(module, []).append(k)
    return [(m, "" if m in whole else _or(ks)) for m, ks in per_module.items()]


def pytest_command(module: str, k: str, ci: bool, extra=()) -> list[str]:
    cmd = [
        sys.executable, "-m", "pytest", "-c", str(HERE / "pytest.ini"), "--rootdir", str(HERE),
        "-p", "accel_plugin", "-p", "no:cacheprovider", "-q", "--pyargs", module,
    ]
    if k:
        cmd += ["-k", k]
    if not ci:
        cmd += ["--known-failures-complete"]
    return cmd + list(extra)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ci = "--ci" in argv
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        if i + 1 >= len(argv):
            print("--only needs a comma-separated list of modules", file=sys.stderr)
            return 2
        only = set(argv[i + 1].split(","))
        argv = argv[:i] + argv[i + 2:]
    extra = [a for a in argv if a != "--ci"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    env.setdefault("TWINLEARN_NUM_THREADS", "1")
    status = 0
    results = []
    chosen = plan(ci)
    if only is not None:
        unknown = only - {m for m, _ in chosen}
        if unknown:
            print(f"not in the plan: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        chosen = [(m, k) for m, k in chosen if m in only]
    for module, k in chosen:
        cmd = pytest_command(module, k, ci, extra)
        print("+", " ".join(repr(c) if " " in c else c for c in cmd), flush=True)
        rc = subprocess.call(cmd, env=env)
        results.append((module, k, rc))
        if rc != 0:  # 5 (nothing collected) too: the selection no longer matches
            status = 1
    print("\ntwinlearn.accel conformance:", "FAILED" if status else "passed")
    for module, k, rc in results:
        sel = f" -k {k!r}" if k else ""
        print(f"  {module}{sel}: {'ok' if rc == 0 else f'pytest exit {rc}'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
