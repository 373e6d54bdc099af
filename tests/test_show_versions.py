"""twinlearn.show_versions: the versions and build facts for a bug report."""

import io
import platform
import sys

import numpy as np
import scipy
import sklearn

import twinlearn
from twinlearn import _backend, _core, _info


def _shown():
    buf = io.StringIO()
    twinlearn.show_versions(file=buf)
    return buf.getvalue()


def _value(text, key):
    (line,) = [ln for ln in text.splitlines() if ln.strip().startswith(key + ":")]
    return line.split(":", 1)[1].strip()


def test_show_versions_prints_versions_and_build_facts():
    out = _shown()
    for section in ("twinlearn:", "build:", "system:", "python dependencies:", "gpu:"):
        assert section in out.splitlines()
    assert _value(out, "version") == twinlearn.__version__
    assert _value(out, "C++ core") == _core.version
    assert _value(out, "python") == platform.python_version()
    assert _value(out, "numpy") == np.__version__
    assert _value(out, "scipy") == scipy.__version__
    assert _value(out, "scikit-learn") == sklearn.__version__
    assert _value(out, "CPU ISA") in ("baseline", "avx2", "avx512")
    compiled = _backend.cuda_module_raw() is not None
    assert _value(out, "CUDA backend") == ("compiled in" if compiled else "not compiled in")
    if compiled:
        status = _backend.cuda_module_raw().cuda_status()
        assert _value(out, "CUDA architectures") == status["arch"]
        rt = status["runtime_version"]
        assert _value(out, "CUDA toolkit") == f"{rt // 1000}.{rt % 1000 // 10}"
    for opt in ("cupy", "torch"):
        assert _value(out, opt) == (_info._installed_version({"cupy": "cupy", "torch": "torch"}[opt])
                                    or "not installed")


def test_show_versions_gpu_lines():
    out = _shown()
    if _backend.cuda_available():
        for g in _backend.cuda().cuda_devices():
            assert g["name"] in _value(out, f"GPU {g['id']}")
        assert _value(out, "CUDA driver") != "none"
    else:
        assert _value(out, "GPU").startswith("none usable: ")
        assert _backend.cuda_unavailable_reason() in out


def test_show_versions_prints_to_stdout_by_default(capsys):
    twinlearn.show_versions()
    assert capsys.readouterr().out == _shown()


def test_optional_packages_are_not_imported():
    # torch and cupy are looked up, not imported (torch takes seconds to import).
    before = set(sys.modules)
    _info.versions()
    assert not {m for m in set(sys.modules) - before if m.split(".")[0] in ("torch", "cupy")}


def test_installed_version_of_a_missing_package_is_none():
    assert _info._installed_version("surely_not_a_module_twinlearn") is None


def test_cpu_isa_follows_the_cap(monkeypatch):
    # The C++ core reads TWINLEARN_CPU_ISA at each call and never exceeds it.
    monkeypatch.setenv("TWINLEARN_CPU_ISA", "baseline")
    assert _core.cpu_isa() == "baseline"
    assert _info.versions()["cpu_isa"] == "baseline"
    monkeypatch.setenv("TWINLEARN_CPU_ISA", "avx2")
    assert _core.cpu_isa() in ("baseline", "avx2")
    monkeypatch.delenv("TWINLEARN_CPU_ISA")
    assert _core.cpu_isa() in ("baseline", "avx2", "avx512")


def test_doctor_reports_the_same_facts():
    from twinlearn import cli

    rep = cli.doctor_report()
    facts = _info.versions()
    for key in ("twinlearn", "python", "numpy", "scipy", "scikit-learn", "cpu_isa", "cuda_arch", "cuda_runtime"):
        assert rep[key] == facts[key]
