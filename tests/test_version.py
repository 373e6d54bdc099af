"""The package version: git describe in a checkout, the build's record in a
wheel, the recorded fallback elsewhere; the wheel's metadata agrees."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import twinlearn
from twinlearn import _core, _version

ROOT = Path(__file__).resolve().parent.parent
VERSION_PY = ROOT / "python" / "twinlearn" / "_version.py"
HAS_GIT = shutil.which("git") is not None
needs_git = pytest.mark.skipif(not HAS_GIT, reason="git is not installed")


@pytest.mark.parametrize("describe, n_commits, expected", [
    ("v0.2.0-0-gabc1234", None, "0.2.0"),
    ("v0.2.0-3-gabc1234", None, "0.2.0.dev3+gabc1234"),
    ("v0.2.0-3-gabc1234-dirty", None, "0.2.0.dev3+gabc1234.dirty"),
    ("v0.2.0-0-gabc1234-dirty", None, "0.2.0+gabc1234.dirty"),
    ("v1.10.2rc1-12-g0123456789ab", None, "1.10.2rc1.dev12+g0123456789ab"),
    ("abc1234", 517, "0.1.0.dev517+gabc1234"),
    ("abc1234-dirty", 5, "0.1.0.dev5+gabc1234.dirty"),
    ("v0.2.0-3-gabc1234\n", None, "0.2.0.dev3+gabc1234"),
])
def test_version_from_describe(describe, n_commits, expected):
    assert _version.version_from_describe(describe, n_commits, fallback="0.1.0") == expected


def test_version_from_describe_untagged_counts_after_the_fallback():
    assert _version.version_from_describe("abc1234", 7) == f"{_version.FALLBACK_VERSION}.dev7+gabc1234"


@pytest.mark.parametrize("describe, n_commits, match", [
    ("release-1-2-gabc", None, "describe"),
    ("", None, "describe"),
    ("abc1234", None, "n_commits"),
])
def test_version_from_describe_refuses_what_it_cannot_read(describe, n_commits, match):
    with pytest.raises(ValueError, match=match):
        _version.version_from_describe(describe, n_commits)


def _git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _source_tree(path):
    """A minimal copy of the source layout: pyproject.toml, python/twinlearn/_version.py."""
    pkg = path / "python" / "twinlearn"
    pkg.mkdir(parents=True)
    shutil.copy(VERSION_PY, pkg / "_version.py")
    (pkg / "__init__.py").write_text("")
    (path / "pyproject.toml").write_text("[project]\nname = 'twinlearn'\n")
    return pkg


def _copy_version(pkg, name):
    """get_version() of the copied package, imported under `name`."""
    spec = importlib.util.spec_from_file_location(name, pkg / "__init__.py", submodule_search_locations=[str(pkg)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
        return importlib.import_module(f"{name}._version").get_version()
    finally:
        for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[k]


@needs_git
def test_git_checkout_versions_follow_the_tags(tmp_path):
    pkg = _source_tree(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = _git(tmp_path, "rev-parse", "--short=7", "HEAD")
    # No tag yet: the count of every commit after the recorded fallback.
    assert _version.git_version(tmp_path) == f"{_version.FALLBACK_VERSION}.dev1+g{head}"
    _git(tmp_path, "tag", "v0.2.0")
    _git(tmp_path, "tag", "not-a-version")  # tags not of the form v<digits> are ignored
    assert _version.git_version(tmp_path) == "0.2.0"
    assert _copy_version(pkg, "tl_version_copy_a") == "0.2.0"
    (tmp_path / "README").write_text("x")
    _git(tmp_path, "add", "README")
    _git(tmp_path, "commit", "-q", "-m", "two")
    head = _git(tmp_path, "rev-parse", "--short=7", "HEAD")
    assert _version.git_version(tmp_path) == f"0.2.0.dev1+g{head}"
    (tmp_path / "README").write_text("changed")  # a changed tracked file
    assert _version.git_version(tmp_path) == f"0.2.0.dev1+g{head}.dirty"
    (tmp_path / "README").write_text("x")
    (tmp_path / "untracked.txt").write_text("new")  # untracked files do not count
    assert _version.git_version(tmp_path) == f"0.2.0.dev1+g{head}"
    _git(tmp_path, "tag", "v0.3.0rc1")
    assert _version.git_version(tmp_path) == "0.3.0rc1"


def test_outside_git_the_fallback_or_an_sdists_version(tmp_path):
    pkg = _source_tree(tmp_path)
    assert _version.git_version(tmp_path) is None
    assert _version.source_version(tmp_path) == _version.FALLBACK_VERSION
    assert _copy_version(pkg, "tl_version_copy_b") == _version.FALLBACK_VERSION
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.2\nName: twinlearn\nVersion: 0.4.1.dev3+gabc1234\n")
    assert _version.source_version(tmp_path) == "0.4.1.dev3+gabc1234"


def test_an_installed_wheel_reads_the_version_its_build_recorded(tmp_path):
    pkg = _source_tree(tmp_path)
    (pkg / "_build_version.py").write_text('version = "9.8.7"\n')
    assert _copy_version(pkg, "tl_version_copy_c") == "9.8.7"


@needs_git
def test_this_checkout_reports_git_describe():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    described = _version.git_version(ROOT)
    if described is None:
        pytest.skip("git cannot describe this checkout")
    assert twinlearn.__version__ == described
    head = _git(ROOT, "rev-parse", "--short=7", "HEAD")
    assert head in twinlearn.__version__ or re.fullmatch(r"\d+(\.\d+)*\S*", twinlearn.__version__)


def test_the_core_library_carries_the_recorded_release():
    # CMake reads FALLBACK_VERSION out of _version.py (CMakeLists.txt).
    assert _core.version == re.match(r"\d+(\.\d+)*", _version.FALLBACK_VERSION).group(0)


def test_pyproject_takes_the_version_from_this_module():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in cfg["project"] and "version" in cfg["project"]["dynamic"]
    sk = cfg["tool"]["scikit-build"]
    provider = sk["metadata"]["version"]
    assert (ROOT / provider["provider-path"] / f"{provider['provider']}.py") == VERSION_PY
    (gen,) = [g for g in sk["generate"] if g["path"].endswith("_build_version.py")]
    assert gen["path"] == "twinlearn/_build_version.py" and gen["location"] == "install"
    assert 'version = "${version}"' in gen["template"]
    assert _version.dynamic_metadata("version") == twinlearn.__version__
    with pytest.raises(ValueError, match="field"):
        _version.dynamic_metadata("description")


def test_wheel_metadata_has_the_package_version(tmp_path):
    # The metadata step of the wheel build (no compile): its Version is twinlearn.__version__.
    pytest.importorskip("scikit_build_core")
    code = ("import sys; from scikit_build_core.build import prepare_metadata_for_build_wheel as p; "
            "print(p(sys.argv[1]))")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    dist_info = r.stdout.strip().splitlines()[-1]
    meta = (tmp_path / dist_info / "METADATA").read_text()
    assert re.search(r"^Version: (\S+)$", meta, re.MULTILINE).group(1) == twinlearn.__version__
