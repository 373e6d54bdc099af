"""compute-sanitizer over the CUDA side, steps side by side (make sanitize-gpu).

    python3 tests/sanitize_gpu.py [--tools memcheck,racecheck] [--only race-gbdt,...]
                                  [--step NAME:TOOL:ctest|pytest:WHAT] [--jobs 4]
                                  [--timeout 1800] [--small] [--list]

Each step runs one compute-sanitizer tool over part of the CUDA C++ suites
(``build/gpu/twinlearn_cuda_tests``, a gtest filter) or over a GPU pytest
subset, under a time limit, with its log in ``build/gpu/sanitize-logs/<step>.txt``.
The steps are split so that several run at once (the tools are mostly
host-bound) and no step's slowest test hides the others'. The summary
(``build/gpu/sanitize-summary.txt``) says per step: clean, the number of
findings, failed tests, or a time-out with the number of tests that finished
(with no finding before it). Any finding, failure, time-out or missing summary
line fails the run (exit status 1). docs/SANITIZERS.md has the runs on record.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINARY = ROOT / "build" / "gpu" / "twinlearn_cuda_tests"
LOGS = ROOT / "build" / "gpu" / "sanitize-logs"
SUMMARY = ROOT / "build" / "gpu" / "sanitize-summary.txt"

# MathCuda's exhaustive sweep of the 2^32 floats takes hours under any tool.
ALL_CUDA = "*Cuda.*-MathCuda.*"
# The suites other than the two slow ones (KMeansCuda, GbdtCuda).
REST = "*Cuda.*-MathCuda.*:KMeansCuda.*:GbdtCuda.*"
IDENTITY = "tests/test_common.py -k test_identical_across_devices"

# (step name, tool, "ctest" gtest filter | "pytest" arguments)
STEPS = [
    ("mem-kmeans", "memcheck", "ctest", "KMeansCuda.*"),
    ("mem-gbdt", "memcheck", "ctest", "GbdtCuda.*"),
    ("mem-rest", "memcheck", "ctest", REST),
    ("mem-py", "memcheck", "pytest", IDENTITY + " and (float64-dense or float32-nan)"),
    ("race-kmeans", "racecheck", "ctest", "KMeansCuda.*"),
    ("race-gbdt", "racecheck", "ctest", "GbdtCuda.*"),
    ("race-rest", "racecheck", "ctest", REST),
    ("race-py", "racecheck", "pytest", IDENTITY),
    ("init-kmeans", "initcheck", "ctest", "KMeansCuda.*"),
    ("init-gbdt", "initcheck", "ctest", "GbdtCuda.*"),
    ("init-rest", "initcheck", "ctest", REST),
    ("init-py", "initcheck", "pytest", IDENTITY + " and float64-hostile"),
    ("sync-cuda", "synccheck", "ctest", ALL_CUDA),
    ("sync-py", "synccheck", "pytest", IDENTITY + " and float32-dense"),
]

# Steps whose tests run at the reduced size (TWINLEARN_TEST_SMALL=1, the
# fixtures' rows divided by 8, cpp/tests/test_util.hpp): racecheck runs the
# KMeans and GBDT identity tests too slowly to finish at full size.
SMALL = {"race-kmeans", "race-gbdt"}

SUMMARY_LINE = re.compile(r"========= (?:ERROR SUMMARY: (\d+) errors?$|RACECHECK SUMMARY: (\d+) hazards)", re.M)


def sanitizer() -> str:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for cand in sorted(Path("/usr/local").glob("cuda*/bin/compute-sanitizer")):
        return str(cand)
    sys.exit("compute-sanitizer not found (PATH, /usr/local/cuda*/bin)")


def command(tool: str, kind: str, what: str, flags: list[str]) -> list[str]:
    head = [sanitizer(), "--tool", tool, "--error-exitcode", "1", *flags]
    if kind == "ctest":
        return [*head, str(BINARY), f"--gtest_filter={what}"]
    args = what.split(" -k ", 1)
    tail = ["-k", args[1]] if len(args) == 2 else []
    return [*head, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", *args[0].split(), *tail]


def verdict(log: str, kind: str, rc: int | None) -> tuple[bool, str]:
    """(clean, one line) from a step's log and exit status (None: timed out)."""
    counts = [int(m.group(1) or m.group(2)) for m in SUMMARY_LINE.finditer(log)]
    if kind == "ctest":
        done = len(re.findall(r"^\[       OK \]", log, re.M))
        failed = len(re.findall(r"^\[  FAILED  \] \w", log, re.M))
        tests = f"{done} tests passed" + (f", {failed} failed" if failed else "")
    else:
        m = re.findall(r"^(?:=+ )?(\d+ (?:passed|failed).*?)(?: =+)?$", log, re.M)
        tests = m[-1] if m else "no pytest summary"
        failed = "failed" in tests
    findings = sum(counts)
    # Findings print as they happen; a timed-out step has no summary line.
    reports = len(re.findall(r"^========= (?!COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY| )\S", log, re.M))
    if rc is None:
        return False, f"TIMED OUT after {tests}; {reports} report lines before it"
    if not counts:
        return False, f"no summary line (exit status {rc}); {tests}"
    ok = findings == 0 and not failed and rc == 0
    return ok, f"{'clean' if ok else 'FAILED'}: {findings} findings; {tests}; exit status {rc}"


def step_env(name: str, small: bool) -> dict[str, str]:
    """The environment of one step: the GPU required, the source tree's package,
    and the reduced fixture size for the steps in SMALL (or all, with --small)."""
    env = dict(os.environ, TWINLEARN_REQUIRE_GPU="1", PYTHONPATH=str(ROOT / "python"))
    env.pop("TWINLEARN_TEST_SMALL", None)
    if small or name in SMALL:
        env["TWINLEARN_TEST_SMALL"] = "1"
    return env


def run_step(step, timeout: float, flags: dict[str, list[str]], small: bool = False):
    name, tool, kind, what = step
    cmd = command(tool, kind, what, flags.get(tool, []))
    env = step_env(name, small)
    path = LOGS / f"{name}.txt"
    t0 = time.monotonic()
    with open(path, "w") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        try:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = None
    ok, line = verdict(path.read_text(errors="replace"), kind, rc)
    size = ", small fixtures" if "TWINLEARN_TEST_SMALL" in env else ""
    return name, tool, ok, f"{line} ({time.monotonic() - t0:.0f} s{size})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", default="memcheck,racecheck,initcheck,synccheck")
    ap.add_argument("--only", default="", help="comma-separated step names (see --list)")
    ap.add_argument("--jobs", type=int, default=4, help="steps at a time")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per step")
    ap.add_argument("--flags", action="append", default=[], metavar="TOOL=FLAGS",
                    help="extra options for one tool, e.g. memcheck='--leak-check full'")
    ap.add_argument("--step", action="append", default=[], metavar="NAME:TOOL:KIND:WHAT",
                    help="an extra step: KIND 'ctest' (WHAT a gtest filter) or 'pytest' (WHAT its arguments)")
    ap.add_argument("--small", action="store_true",
                    help="every step at the reduced fixture size (TWINLEARN_TEST_SMALL=1), not only " + ", ".join(sorted(SMALL)))
    ap.add_argument("--list", action="store_true", help="print the steps and exit")
    a = ap.parse_args(argv)
    tools = set(a.tools.split(","))
    only = set(filter(None, a.only.split(",")))
    unknown = only - {s[0] for s in STEPS}
    TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
    if unknown:
        ap.error(f"unknown steps: {sorted(unknown)}")
    extra = []
    for spec in a.step:
        parts = spec.split(":", 3)
        if len(parts) != 4 or parts[2] not in ("ctest", "pytest") or parts[1] not in TOOLS:
            ap.error(f"--step {spec!r}: expected NAME:TOOL:ctest|pytest:WHAT with TOOL one of {', '.join(TOOLS)}")
        extra.append(tuple(parts))
    steps = [s for s in STEPS if s[1] in tools and (not only or s[0] in only)]
    if a.step and not a.only:
        steps = []  # --step alone runs only the steps it names
    steps += extra
    if a.list:
        for s in steps:
            print(f"{s[0]:12s} {s[1]:10s} {s[2]:6s} {s[3]}" + ("  (small)" if a.small or s[0] in SMALL else ""))
        return 0
    if not BINARY.exists():
        sys.exit(f"{BINARY.relative_to(ROOT)} is missing: build build/gpu first (make sanitize-gpu does)")
    flags = {}
    for f in a.flags:
        tool, _, opts = f.partition("=")
        flags[tool] = opts.split()
    if LOGS.exists():
        shutil.rmtree(LOGS)
    LOGS.mkdir(parents=True)
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = list(pool.map(lambda s: run_step(s, a.timeout, flags, a.small), steps))
    lines = [f"== compute-sanitizer summary (logs in {LOGS.relative_to(ROOT)}) =="]
    lines += [f"{name:12s} {tool:10s} {line}" for name, tool, _, line in results]
    rc = 0 if all(ok for _, _, ok, _ in results) else 1
    lines.append(f"exit status: {rc}")
    SUMMARY.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return rc


if __name__ == "__main__":
    sys.exit(main())
