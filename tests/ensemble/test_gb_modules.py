"""The modules of twinlearn.ensemble: each imports on its own, and they
import one another without a cycle (no import inside a function to dodge
one)."""

import ast
import os
import pkgutil
import subprocess
import sys

import pytest

import twinlearn.ensemble

PACKAGE = os.path.dirname(twinlearn.ensemble.__file__)
MODULES = sorted(m.name for m in pkgutil.iter_modules([PACKAGE]))


def _sibling_imports(name):
    """The modules of the package that module `name` imports, at any depth of its code."""
    with open(os.path.join(PACKAGE, name + ".py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
    return out & set(MODULES)


def _cycle(graph):
    """An import cycle of `graph` (module -> the modules it imports) as a list, or None."""
    done, path = set(), []

    def visit(name):
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return None
        path.append(name)
        for dep in sorted(graph[name]):
            found = visit(dep)
            if found:
                return found
        path.pop()
        done.add(name)
        return None

    for name in sorted(graph):
        found = visit(name)
        if found:
            return found
    return None


def test_the_modules_import_one_another_without_a_cycle():
    graph = {name: _sibling_imports(name) for name in MODULES}
    assert graph["_model_io"] and "_gb" not in graph["_model_io"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))
    # separating arm: the former circle, _gb <-> _model_io through imports inside functions
    former = dict(graph, _gb={"_model_io"}, _model_io=graph["_model_io"] | {"_gb"})
    assert set(_cycle(former)) == {"_gb", "_model_io"}


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports_in_a_fresh_interpreter(name):
    python_dir = os.path.dirname(os.path.dirname(twinlearn.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([python_dir, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", f"import twinlearn.ensemble.{name}"], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
