"""Every way in: accelerate(), enabled(), install(), python -m twinlearn.accel,
%load_ext, TWINLEARN_ACCEL."""

from __future__ import annotations

import logging
import shutil
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest
import sklearn.preprocessing
import sklearn.preprocessing._data
from numpy.testing import assert_allclose
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import QuantileTransformer, StandardScaler

import twinlearn
import twinlearn.accel as accel
from accel_helpers import PYTHON_DIR, REPO, run_python, accel_state, toy  # noqa: F401 (fixtures)

PLAIN = StandardScaler


def data(n=100, d=4, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d)) * 3 + 1


# -- accelerate() ----------------------------------------------------------------------
def test_exported_from_twinlearn():
    assert twinlearn.accelerate is accel.accelerate
    assert "accelerate" in twinlearn.__all__


def test_accelerate_instance_copies_params_and_state():
    plain = StandardScaler(with_std=False)
    acc = twinlearn.accelerate(plain)
    assert accel.is_accelerated(acc) and not accel.is_accelerated(plain)
    assert acc.get_params() == plain.get_params()
    fitted = StandardScaler().fit(data())
    acc2 = twinlearn.accelerate(fitted)
    assert accel.fitted_on(acc2) == "scikit-learn"
    assert_allclose(acc2.transform(data()), fitted.transform(data()))
    assert twinlearn.accelerate(acc2) is acc2


def test_accelerate_class_and_unsupported_class(caplog):
    caplog.set_level(logging.INFO, "twinlearn.accel")
    Acc = twinlearn.accelerate(StandardScaler)
    assert accel.is_accelerated(Acc) and issubclass(Acc, StandardScaler)
    assert twinlearn.accelerate(Acc) is Acc
    assert twinlearn.accelerate(QuantileTransformer) is QuantileTransformer
    assert "QuantileTransformer: no twinlearn implementation; scikit-learn runs it" in caplog.messages
    mm = QuantileTransformer()
    assert twinlearn.accelerate(mm) is mm


@pytest.mark.parametrize("form", ["bare", "called", "call"])
def test_accelerate_factory(form):
    def make(with_std=True):
        """Make a scaler."""
        return StandardScaler(with_std=with_std)

    if form == "bare":
        factory = twinlearn.accelerate(make)
    elif form == "called":
        factory = twinlearn.accelerate()(make)
    else:
        @twinlearn.accelerate
        def factory(with_std=True):
            """Make a scaler."""
            return StandardScaler(with_std=with_std)

    assert factory.__doc__ == "Make a scaler."
    est = factory(with_std=False)
    assert accel.is_accelerated(est) and est.with_std is False
    est.fit(data())
    assert accel.fitted_on(est) == "twinlearn:cpu"


def test_accelerate_rejects_other_objects():
    with pytest.raises(TypeError, match="expects an estimator"):
        twinlearn.accelerate(42)


def _steps_accelerated(est):
    found = []

    def walk(o):
        if hasattr(o, "get_params") and not isinstance(o, type):
            if isinstance(o, PLAIN):
                found.append(accel.is_accelerated(o))
            for v in o.get_params(deep=False).values():
                walk(v)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v)
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)

    walk(est)
    return found


def test_accelerate_nested_meta_estimators():
    inner = Pipeline([("scale", StandardScaler()), ("pca", PCA(2))])
    union = FeatureUnion([("a", StandardScaler(with_std=False)), ("b", inner)])
    ct = ColumnTransformer([("num", StandardScaler(), [0, 1]), ("rest", union, [2, 3])])
    pipe = Pipeline([("ct", ct), ("ridge", Ridge())])
    acc = twinlearn.accelerate(pipe)
    assert _steps_accelerated(acc) == [True, True, True]
    assert _steps_accelerated(pipe) == [False, False, False]  # the original is untouched
    assert acc.get_params(deep=False).keys() == pipe.get_params(deep=False).keys()
    X, y = data(), data()[:, 0]
    assert_allclose(acc.fit(X, y).predict(X), pipe.fit(X, y).predict(X), rtol=1e-10)
    scaler = acc.named_steps["ct"].named_transformers_["num"]
    assert accel.fitted_on(scaler) == "twinlearn:cpu"


def test_accelerate_grid_search_and_its_grid():
    gs = GridSearchCV(make_pipeline(StandardScaler(), Ridge()),
                      {"standardscaler": [StandardScaler(), StandardScaler(with_std=False)]}, cv=3)
    acc = twinlearn.accelerate(gs)
    assert _steps_accelerated(acc) == [True, True, True]
    acc.fit(data(), data()[:, 0])
    assert accel.fitted_on(acc.best_estimator_[0]) == "twinlearn:cpu"


# -- enabled() ------------------------------------------------------------------------
def test_enabled_patches_modules_and_restores_them():
    with accel.enabled():
        assert accel.is_accelerated(sklearn.preprocessing.StandardScaler)
        assert sklearn.preprocessing._data.StandardScaler is sklearn.preprocessing.StandardScaler
        from sklearn.preprocessing import StandardScaler as Inside

        est = PLAIN()  # a name bound before the block
        assert accel.is_accelerated(est) and accel.is_accelerated(Inside())
        with accel.enabled():  # nested
            pass
        assert accel.is_active()
    assert sklearn.preprocessing.StandardScaler is PLAIN
    assert sklearn.preprocessing._data.StandardScaler is PLAIN
    assert not accel.is_accelerated(PLAIN()) and accel.is_accelerated(est)
    assert type(PLAIN(with_std=False)) is PLAIN  # constructor arguments still accepted


def test_enabled_restores_after_an_exception():
    with pytest.raises(RuntimeError):
        with accel.enabled():
            raise RuntimeError("boom")
    assert not accel.is_active() and sklearn.preprocessing.StandardScaler is PLAIN


def test_enabled_leaves_subclasses_alone():
    class Mine(PLAIN):
        pass

    with accel.enabled():
        assert type(Mine()) is Mine


def test_install_uninstall_in_process():
    accel.install()
    try:
        assert accel.is_installed() and accel.get_config()["installed"]
        from sklearn.preprocessing import StandardScaler as S

        assert accel.is_accelerated(S)
        with accel.enabled():
            pass
        assert accel.is_active()  # the block did not end the installation
    finally:
        accel.uninstall()
    assert not accel.is_active() and sklearn.preprocessing.StandardScaler is PLAIN


def test_install_hooks_modules_imported_later():
    res = run_python(textwrap.dedent("""
        import sys
        import twinlearn.accel
        twinlearn.accel.install()
        assert "sklearn.naive_bayes" not in sys.modules, "imported too early"
        from sklearn.naive_bayes import GaussianNB
        import sklearn.naive_bayes as nb
        assert twinlearn.accel.is_accelerated(GaussianNB) and nb.GaussianNB is GaussianNB
        assert sys.modules["sklearn.naive_bayes"].__spec__.loader.__class__.__name__ != "_PatchingLoader"
        twinlearn.accel.uninstall()
        from sklearn.naive_bayes import GaussianNB as G3
        assert not twinlearn.accel.is_accelerated(G3)
        print("ok")
    """))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


# -- python -m twinlearn.accel ------------------------------------------------------------
SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from sklearn.preprocessing import StandardScaler
    import twinlearn.accel
    print("argv", sys.argv[1:])
    print("name", __name__)
    est = StandardScaler().fit(np.random.default_rng(0).standard_normal((10000, 3)))
    print("accelerated", twinlearn.accel.is_accelerated(est), twinlearn.accel.fitted_on(est))
    if "--fail" in sys.argv:
        sys.exit(3)
""")


def test_cli_runs_a_script_with_its_arguments(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    res = run_python(args=["-m", "twinlearn.accel", "--device", "cpu", str(script), "a", "--b"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "argv ['a', '--b']" in res.stdout
    assert "name __main__" in res.stdout
    assert "accelerated True twinlearn:cpu" in res.stdout
    res = run_python(args=["-m", "twinlearn.accel", str(script), "--fail"], cwd=tmp_path)
    assert res.returncode == 3


def test_cli_runs_a_module_and_profiles(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "job.py").write_text(SCRIPT)
    res = run_python(
        args=["-m", "twinlearn.accel", "--profile", "-v", "--device=cpu", "-m", "mypkg.job", "x"],
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "argv ['x']" in res.stdout and "accelerated True twinlearn:cpu" in res.stdout
    assert "[twinlearn.accel] StandardScaler.fit: twinlearn on cpu (n_samples=10000, n_features=3)" in res.stderr
    assert "twinlearn.accel profile" in res.stderr
    row = [line for line in res.stderr.splitlines() if line.startswith("StandardScaler")]
    assert row and "fit" in row[0] and "twinlearn:cpu" in row[0]


def test_cli_usage_errors(tmp_path):
    res = run_python(args=["-m", "twinlearn.accel"], cwd=tmp_path)
    assert res.returncode != 0 and "nothing to run" in res.stderr
    res = run_python(args=["-m", "twinlearn.accel", "--bogus", "x.py"], cwd=tmp_path)
    assert res.returncode != 0 and "unknown option --bogus" in res.stderr
    res = run_python(args=["-m", "twinlearn.accel", "--help"], cwd=tmp_path)
    assert res.returncode == 0 and "--profile" in res.stdout


def test_cli_support_matrix_is_the_generated_one():
    res = run_python(args=["-m", "twinlearn.accel", "--support-matrix"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == accel.support_matrix()


# -- %load_ext -----------------------------------------------------------------------------
def test_ipython_extension():
    class Shell:  # what IPython passes; the extension needs nothing from it
        pass

    accel.load_ipython_extension(Shell())
    assert accel.is_installed() and accel.is_accelerated(sklearn.preprocessing.StandardScaler)
    accel.unload_ipython_extension(Shell())
    assert not accel.is_active() and sklearn.preprocessing.StandardScaler is PLAIN


# -- TWINLEARN_ACCEL -----------------------------------------------------------------------
CHECK = textwrap.dedent("""
    import sys
    had_twinlearn = "twinlearn" in sys.modules
    from sklearn.preprocessing import StandardScaler
    import twinlearn.accel
    print(had_twinlearn, twinlearn.accel.is_installed(), twinlearn.accel.is_accelerated(StandardScaler))
""")


def test_env_var_on_import_twinlearn():
    res = run_python("import twinlearn, twinlearn.accel as a; print(a.is_installed())",
                     env={"TWINLEARN_ACCEL": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "True"
    res = run_python("import twinlearn, twinlearn.accel as a; print(a.is_installed())",
                     env={"TWINLEARN_ACCEL": "0"})
    assert res.stdout.strip() == "False"


def _site_dir_like_a_wheel(tmp_path):
    """A site directory holding what pyproject.toml force-includes into the wheel's root."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())
    force = cfg["tool"]["scikit-build"]["wheel"]["force-include"]
    site = tmp_path / "site"
    site.mkdir()
    for src, dest in force.items():
        shutil.copy(REPO / src, site / dest)
    assert {p.name for p in site.iterdir()} >= {"twinlearn_accel.pth", "_twinlearn_accel_boot.py"}
    return site


@pytest.mark.parametrize("first", ["sklearn", "twinlearn"])
def test_env_var_at_interpreter_start_through_the_pth_file(tmp_path, first):
    site = _site_dir_like_a_wheel(tmp_path)
    # site.addsitedir processes .pth files exactly as at interpreter start.
    code = f"import site; site.addsitedir({str(site)!r}); import sys; " \
           f"assert 'sklearn' not in sys.modules and 'twinlearn' not in sys.modules; import {first}\n" + CHECK
    res = run_python(code, env={"TWINLEARN_ACCEL": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[1:] == ["True", "True"]
    res = run_python(code.replace(f"import {first}\n", "import sys\n"), env={"TWINLEARN_ACCEL": "1"})
    assert res.stdout.split() == ["False", "True", "True"]
    # Without the variable: nothing is imported or installed.
    code_off = f"import site, sys; site.addsitedir({str(site)!r}); " \
               "print('sklearn' in sys.modules, '_twinlearn_accel_boot' in sys.modules)"
    res = run_python(code_off)
    assert res.stdout.split() == ["False", "False"]
    res = run_python(code.replace(f"import {first}\n", "import sys\n"))
    assert res.stdout.split() == ["False", "False", "False"]


@pytest.mark.skipif(
    "TWINLEARN_TEST_WHEEL_INSTALL" not in __import__("os").environ,
    reason="builds and installs the wheel (minutes); set TWINLEARN_TEST_WHEEL_INSTALL=1",
)
def test_env_var_with_pip_install(tmp_path):
    """pip install . into a venv, then TWINLEARN_ACCEL=1 python -c ... from outside the source tree."""
    import subprocess

    import site

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    # This interpreter's packages (numpy, scikit-learn, the build tools), after the venv's own.
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "outer_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # Build from a copy of the tracked sources (what an sdist or a clone holds).
    src = tmp_path / "src"
    files = subprocess.run(["git", "ls-files"], cwd=REPO, check=True, capture_output=True,
                           text=True).stdout.split()
    for f in files:
        if (REPO / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, src / f)
    if not (src / "README.md").exists():  # pyproject.toml names it
        (src / "README.md").write_text("twinlearn\n")
    env = dict(__import__("os").environ, TWINLEARN_CUDA="OFF")
    env.pop("PYTHONPATH", None)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", str(src)],
                   check=True, env=env, cwd=tmp_path, timeout=3000)
    env["TWINLEARN_ACCEL"] = "1"
    res = subprocess.run([str(py), "-c", CHECK], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True", "True"]
    where = subprocess.run([str(py), "-c", "import twinlearn; print(twinlearn.__file__)"], env=env,
                           cwd=tmp_path, capture_output=True, text=True).stdout
    assert where.startswith(str(venv)), where  # the installed package, not the source tree
    # The measured thresholds ship with the package.
    shipped = Path(where.strip()).parent / "accel" / "thresholds.json"
    assert shipped.read_bytes() == (REPO / "python/twinlearn/accel/thresholds.json").read_bytes()


# -- the conformance plugin (make test-sklearn) -----------------------------------------------
def test_conformance_plugin_known_failures_are_strict(tmp_path):
    (tmp_path / "test_fake_mod.py").write_text(textwrap.dedent("""
        import numpy as np
        import pytest
        from sklearn.preprocessing import StandardScaler
        import twinlearn.accel

        def test_passes():
            est = StandardScaler().fit(np.ones((3, 2)))
            assert twinlearn.accel.fitted_on(est) == "twinlearn:cpu"

        def test_fails():
            assert False

        def test_listed_and_fails():
            assert False

        def test_listed_and_passes():
            pass

        @pytest.mark.xfail(reason="scikit-learn's own mark")
        def test_upstream_xfail_passes():
            pass

        @pytest.mark.xfail(reason="scikit-learn's own mark")
        def test_upstream_xfail_fails():
            assert False
    """))
    known = tmp_path / "known.txt"
    known.write_text("# comment\n"
                     "test_fake_mod::test_listed_and_fails | fails on purpose\n"
                     "test_fake_mod::test_listed_and_passes | no longer fails\n"
                     "test_fake_mod::test_gone | was removed\n")
    plugin_dir = REPO / "tests" / "sklearn_conformance"
    args = ["-m", "pytest", "-c", str(plugin_dir / "pytest.ini"), "--rootdir", str(tmp_path),
            "-p", "accel_plugin", "-p", "no:cacheprovider", "--known-failures", str(known),
            str(tmp_path / "test_fake_mod.py")]
    env = {"PYTHONPATH": f"{PYTHON_DIR}:{plugin_dir}", "TWINLEARN_ACCEL_DEVICE": "cpu"}
    res = run_python(args=args, env=env, cwd=tmp_path)
    out = res.stdout
    assert res.returncode == 1, out
    # Listed failures count against the rate, scikit-learn's own xfails do not
    # (one that passes is a pass): 2 passed of 2 + 1 failed + 1 known + 1 listed-but-passing.
    assert ("test_fake_mod: pass rate 40.0% (2 passed, 1 failed, 0 errors, 1 known failures, "
            "1 known failures passing, 1 xfailed by scikit-learn" in out), out
    assert "XPASS(strict)" in out and "routed StandardScaler calls on twinlearn: 1" in out
    assert "known failures not collected" not in out
    res = run_python(args=args + ["--known-failures-complete"], env=env, cwd=tmp_path)
    assert "test_fake_mod::test_gone" in res.stdout
    bad = tmp_path / "bad.txt"
    bad.write_text("test_fake_mod::test_fails without a reason\n")
    res = run_python(args=args[:-2] + [str(bad), args[-1]], env=env, cwd=tmp_path)
    assert res.returncode != 0 and "expected '<module>::<test> | <reason>'" in res.stdout + res.stderr
