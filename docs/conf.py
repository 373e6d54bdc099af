"""Sphinx configuration of the twinlearn documentation (`make docs`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(ROOT / "python"))
# The gallery runs on the CPU backend wherever the docs are built.
os.environ.setdefault("TWINLEARN_DEVICE", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")

import twinlearn  # noqa: E402

project = "twinlearn"
author = "the twinlearn developers"
copyright = "the twinlearn developers"
release = twinlearn.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "apigen",
    "typespec",
    "benchplots",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "_ext", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
                    "auto_examples/*.md5", "auto_examples/*.pickle"]

html_theme = "furo"
html_title = f"twinlearn {release}"
html_static_path = []

# API reference: numpydoc docstrings, one page per public name (docs/_ext/apigen.py).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "alphabetical"}
autodoc_typehints = "none"  # the numpydoc sections give the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False


# The existing pages are Markdown (MyST).
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "substitution"]
myst_substitutions = {"version": release}
myst_heading_anchors = 4

# The examples gallery: examples/gallery/*.py run on the CPU during the build.
sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "examples" / "gallery")],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "reset_modules": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
}
