"""The tests run against an installed wheel import the wheel, not the checkout.

``make test-wheel`` installs the built wheel into a fresh virtual environment
and runs part of the suite with ``TWINLEARN_EXPECT_INSTALLED=1`` and without
``PYTHONPATH``; these tests then fail if ``twinlearn`` (or its compiled
modules) came from the source tree. Without the variable they are skipped.
"""

import importlib.metadata
import os
from pathlib import Path

import pytest

EXPECT_INSTALLED = os.environ.get("TWINLEARN_EXPECT_INSTALLED") == "1"
pytestmark = pytest.mark.skipif(not EXPECT_INSTALLED, reason="set TWINLEARN_EXPECT_INSTALLED=1 (make test-wheel)")

SOURCE_PACKAGE = Path(__file__).resolve().parents[1] / "python" / "twinlearn"


def test_twinlearn_is_imported_from_site_packages():
    import twinlearn
    from twinlearn import _info

    here = Path(twinlearn.__file__).resolve().parent
    assert here != SOURCE_PACKAGE.resolve(), f"twinlearn was imported from the checkout ({here})"
    assert "site-packages" in here.parts, here
    assert _info.install_kind() == "wheel"


def test_compiled_modules_are_the_wheels():
    import twinlearn
    from twinlearn import _backend

    here = Path(twinlearn.__file__).resolve().parent
    assert Path(_backend.core().__file__).resolve().parent == here
    raw = _backend.cuda_module_raw()
    if raw is not None:
        assert Path(raw.__file__).resolve().parent == here


def test_metadata_version_is_the_package_version():
    import twinlearn

    assert importlib.metadata.version("twinlearn") == twinlearn.__version__
