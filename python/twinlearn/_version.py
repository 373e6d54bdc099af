"""The package version, from git tags.

- An installed wheel knows its version: the build wrote it into
  ``twinlearn/_build_version.py``.
- A git checkout of the sources (``python/twinlearn`` two folders below a
  ``pyproject.toml`` and a ``.git``) asks ``git describe`` for the newest tag
  ``vX.Y.Z`` reachable from HEAD: ``X.Y.Z`` on the tagged commit,
  ``X.Y.Z.devN+g<hash>`` N commits after it, ``.dirty`` appended to the local
  part when tracked files have changes. Without any such tag the count is of
  every commit, after :data:`FALLBACK_VERSION`.
- Anywhere else (no git, an unpacked sdist or a copied tree): the version in
  an sdist's ``PKG-INFO``, else :data:`FALLBACK_VERSION`.

This file is also the wheel build's version provider (``pyproject.toml``,
``[tool.scikit-build.metadata.version]``): the build loads it on its own, so
it imports the standard library only, and the wheel's metadata and
``twinlearn.__version__`` come from the same function.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

#: The last release, recorded in the sources: the version of a build made
#: without git, and the base of the count before the first tag. CMake reads
#: it as the C++ library's version (``twinlearn._core.version``). Raise it
#: with each release tag.
FALLBACK_VERSION = "0.1.0"

_TAG = r"v(?P<tag>\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?)"
_DESCRIBE = re.compile(_TAG + r"-(?P<n>\d+)-g(?P<hash>[0-9a-f]+)(?P<dirty>-dirty)?")
_UNTAGGED = re.compile(r"(?P<hash>[0-9a-f]+)(?P<dirty>-dirty)?")
_GIT_TIMEOUT_S = 10


def version_from_describe(describe: str, n_commits: int | None = None, fallback: str = FALLBACK_VERSION) -> str:
    """The version for the output of ``git describe --tags --long --always --dirty --match 'v[0-9]*'``.

    Parameters
    ----------
    describe : str
        ``v0.2.0-3-gabc1234`` (3 commits after the tag ``v0.2.0``, at
        abc1234), with ``-dirty`` appended for a changed work tree; or just
        ``abc1234[-dirty]`` when no tag is reachable.
    n_commits : int, optional
        The number of commits up to HEAD, needed when no tag is reachable.
    fallback : str, default=FALLBACK_VERSION
        The base version when no tag is reachable.

    Returns
    -------
    str
        A PEP 440 version: ``0.2.0``, ``0.2.0.dev3+gabc1234``,
        ``0.2.0+gabc1234.dirty``, ``0.1.0.dev517+gabc1234``.

    Examples
    --------
    >>> version_from_describe("v0.2.0-0-gabc1234")
    '0.2.0'
    >>> version_from_describe("v0.2.0-3-gabc1234")
    '0.2.0.dev3+gabc1234'
    >>> version_from_describe("abc1234-dirty", n_commits=517, fallback="0.1.0")
    '0.1.0.dev517+gabc1234.dirty'
    """
    describe = describe.strip()
    m = _DESCRIBE.fullmatch(describe)
    if m is not None:
        base, n, ghash, dirty = m["tag"], int(m["n"]), m["hash"], bool(m["dirty"])
    else:
        m = _UNTAGGED.fullmatch(describe)
        if m is None:
            raise ValueError(f"describe: not the output of git describe --tags --long --always --dirty: {describe!r}")
        if n_commits is None:
            raise ValueError("n_commits is needed when no version tag is reachable")
        base, n, ghash, dirty = fallback, int(n_commits), m["hash"], bool(m["dirty"])
    if n == 0 and not dirty:
        return base
    dev = f".dev{n}" if n > 0 else ""
    return f"{base}{dev}+g{ghash}" + (".dirty" if dirty else "")


def _git(root: Path, *args: str) -> str:
    # GIT_OPTIONAL_LOCKS=0: --dirty must not write the index of a checkout
    # another process is using (or that is read-only).
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
    r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env,
                       timeout=_GIT_TIMEOUT_S, check=True)
    return r.stdout.strip()


def git_version(root: str | os.PathLike) -> str | None:
    """The version of the git checkout at `root`, or None where git cannot tell."""
    root = Path(root)
    if not (root / ".git").exists():
        return None
    try:
        describe = _git(root, "describe", "--tags", "--long", "--always", "--dirty", "--abbrev=7",
                        "--match", "v[0-9]*")
        n_commits = None if _DESCRIBE.fullmatch(describe) else int(_git(root, "rev-list", "--count", "HEAD"))
        return version_from_describe(describe, n_commits)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None  # no git, not a repository git trusts, a shallow clone without HEAD...


def _pkg_info_version(root: Path) -> str | None:
    try:
        text = (root / "PKG-INFO").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"^Version:\s*(\S+)\s*$", text, re.MULTILINE)
    return m.group(1) if m else None


def source_version(root: str | os.PathLike) -> str:
    """The version of a source tree at `root`: git, an sdist's PKG-INFO, or the fallback."""
    root = Path(root)
    return git_version(root) or _pkg_info_version(root) or FALLBACK_VERSION


def _source_root() -> Path | None:
    """The checkout holding this package (``<root>/python/twinlearn``), if it is one."""
    root = Path(__file__).resolve().parent.parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def get_version() -> str:
    """twinlearn's version (see the module docstring for where it comes from)."""
    try:
        from ._build_version import version  # written into wheels by the build

        return version
    except ImportError:
        pass
    root = _source_root()
    return source_version(root) if root is not None else FALLBACK_VERSION


def dynamic_metadata(field: str, settings: dict | None = None) -> str:
    """scikit-build-core's metadata provider hook: the version of the tree being built."""
    if field != "version":
        raise ValueError(f"field: this provider gives only 'version', not {field!r}")
    if settings:
        raise ValueError(f"settings: this provider takes none, got {sorted(settings)}")
    root = _source_root()
    return source_version(root if root is not None else Path.cwd())
