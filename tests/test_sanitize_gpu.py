"""The verdicts of tests/sanitize_gpu.py (make sanitize-gpu) from its steps' logs."""

import importlib.util
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("sanitize_gpu", Path(__file__).with_name("sanitize_gpu.py"))
san = importlib.util.module_from_spec(spec)
spec.loader.exec_module(san)

GTEST_OK = "[ RUN      ] A.B\n[       OK ] A.B (5 ms)\n[ RUN      ] A.C\n[       OK ] A.C (5 ms)\n"
REPORT = ("========= Host API memory access error at host access to 0x7f of size 288 bytes\n"
          "=========     Uninitialized access to 0x7f on access by cudaMemcpy source\n")


@pytest.mark.parametrize("log, kind, rc, ok, says", [
    ("========= COMPUTE-SANITIZER\n" + GTEST_OK + "========= ERROR SUMMARY: 0 errors\n", "ctest", 0, True,
     "clean: 0 findings; 2 tests passed"),
    (REPORT + GTEST_OK + "========= ERROR SUMMARY: 3 errors\n"
     "========= ERROR SUMMARY: 1 error was not printed. Use --print-limit option\n", "ctest", 1, False,
     "FAILED: 3 findings"),
    (GTEST_OK + "[  FAILED  ] A.D (1 ms)\n========= ERROR SUMMARY: 0 errors\n", "ctest", 1, False, "1 failed"),
    (REPORT + GTEST_OK, "ctest", None, False, "TIMED OUT after 2 tests passed; 1 report lines"),
    (GTEST_OK, "ctest", 1, False, "no summary line"),
    # nanobind's exit message can run into the summary line
    ("24 passed, 2552 deselected in 57.84s\nrefleaks.html========= RACECHECK SUMMARY: 0 hazards displayed "
     "(0 errors, 0 warnings)\n", "pytest", 0, True, "clean: 0 findings; 24 passed"),
    ("1 failed, 23 passed in 5s\n========= ERROR SUMMARY: 0 errors\n", "pytest", 1, False, "FAILED"),
])
def test_verdict(log, kind, rc, ok, says):
    got_ok, line = san.verdict(log, kind, rc)
    assert got_ok is ok
    assert says in line


def test_pytest_steps_split_the_k_expression(monkeypatch):
    monkeypatch.setattr(san, "sanitizer", lambda: "compute-sanitizer")
    cmd = san.command("memcheck", "pytest", "tests/test_common.py -k a and (b or c)", [])
    assert cmd[-4:] == ["gpu", "tests/test_common.py", "-k", "a and (b or c)"]
    assert san.command("racecheck", "ctest", "X.*", ["--x"])[-1] == "--gtest_filter=X.*"


def test_every_tool_has_steps_with_unique_names():
    names = [s[0] for s in san.STEPS]
    assert len(names) == len(set(names))
    assert {s[1] for s in san.STEPS} == {"memcheck", "racecheck", "initcheck", "synccheck"}


def test_small_fixtures_only_where_asked(monkeypatch):
    monkeypatch.setenv("TWINLEARN_TEST_SMALL", "1")  # a caller's setting does not leak into a step
    assert "TWINLEARN_TEST_SMALL" not in san.step_env("mem-kmeans", small=False)
    assert san.step_env("race-kmeans", small=False)["TWINLEARN_TEST_SMALL"] == "1"
    assert san.step_env("mem-kmeans", small=True)["TWINLEARN_TEST_SMALL"] == "1"
    assert san.SMALL <= {s[0] for s in san.STEPS}
