"""Attribute names in numpydoc type specs, read as text.

scikit-learn's docstring convention writes shapes with fitted attributes,
``coef_ : ndarray of shape (n_features_in_,)``; reStructuredText reads a word
ending in an underscore as a link to a target of that name, and the build
(warnings as errors) fails on the missing target. Before numpydoc parses a
docstring, this escapes such a trailing underscore in the type part of
``name : type`` lines, so the docstrings keep scikit-learn's spelling.
"""

from __future__ import annotations

import re

_FIELD = re.compile(r"^(\s*\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*\s+:\s+)(.+)$")
_TRAILING = re.compile(r"(?<![\\`\w])([A-Za-z]\w*[A-Za-z0-9])_(?=[\s,)\]}]|$)")


def escape_type_specs(lines: list[str]) -> None:
    """Escapes trailing underscores in the type part of numpydoc field lines, in place."""
    for i, line in enumerate(lines):
        m = _FIELD.match(line)
        if m and "`" not in m.group(2):
            lines[i] = m.group(1) + _TRAILING.sub(r"\1\\_", m.group(2))


def _process(app, what, name, obj, options, lines):
    escape_type_specs(lines)


def setup(app):
    # before numpydoc's handler of the same event (priority 500)
    app.connect("autodoc-process-docstring", _process, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
