import os
import subprocess
import sys

import pytest

import twinlearn
from twinlearn import _config

PYTHONPATH = os.pathsep.join([os.path.join(os.path.dirname(__file__), "..", "python")] + sys.path)


def run_py(code, **env):
    e = dict(os.environ, PYTHONPATH=PYTHONPATH)
    for k in list(e):
        if k.startswith("TWINLEARN_") and k not in env:
            del e[k]
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e)


@pytest.fixture(autouse=True)
def restore_config():
    before = dict(_config._global_config)
    yield
    twinlearn.set_device(before["device"])
    twinlearn.set_numeric_mode(before["numeric_mode"])
    twinlearn.set_n_threads(before["n_threads"])


def test_defaults_in_clean_process():
    r = run_py("import twinlearn as t; print(t.get_device(), t.get_numeric_mode(), t.get_n_threads())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["auto", "deterministic", "0"]


@pytest.mark.parametrize(
    "device,expected",
    [("auto", "auto"), ("cpu", "cpu"), ("cuda", "cuda:0"), ("cuda:0", "cuda:0"), ("cuda:12", "cuda:12"),
     ("gpu", "cuda:0"), ("gpu:3", "cuda:3")],
)
def test_set_device_valid(device, expected):
    twinlearn.set_device(device)
    assert twinlearn.get_device() == expected


@pytest.mark.parametrize("device", ["GPU", "gpu:", "cuda:", "cuda:-1", "CUDA", "", None, 0, "cuda:x"])
def test_set_device_invalid(device):
    with pytest.raises(ValueError, match="device must be"):
        twinlearn.set_device(device)


@pytest.mark.parametrize("mode", ["fast", "deterministic", "identical"])
def test_set_numeric_mode(mode):
    twinlearn.set_numeric_mode(mode)
    assert twinlearn.get_numeric_mode() == mode


@pytest.mark.parametrize("mode", ["exact", "Fast", "", None])
def test_set_numeric_mode_invalid(mode):
    with pytest.raises(ValueError, match="numeric_mode must be one of"):
        twinlearn.set_numeric_mode(mode)


@pytest.mark.parametrize("n", [-1, 1.5, "2", True, 2**31, _config.MAX_THREADS + 1])
def test_set_n_threads_invalid(n):
    with pytest.raises(ValueError, match="n_threads"):
        twinlearn.set_n_threads(n)
    with pytest.raises(ValueError, match="n_threads"):
        with twinlearn.config_context(n_threads=n):
            pass


def test_n_threads_up_to_the_limit_is_accepted():
    with twinlearn.config_context(n_threads=_config.MAX_THREADS):
        assert twinlearn.get_n_threads() == _config.MAX_THREADS


def test_config_context_restores():
    twinlearn.set_numeric_mode("fast")
    with twinlearn.config_context(numeric_mode="identical", device="cpu", n_threads=2):
        assert twinlearn.get_numeric_mode() == "identical"
        assert twinlearn.get_device() == "cpu"
        assert twinlearn.get_n_threads() == 2
        assert twinlearn.get_config() == {"device": "cpu", "numeric_mode": "identical", "n_threads": 2}
    assert twinlearn.get_numeric_mode() == "fast"
    assert twinlearn.get_device() == "auto"


def test_config_context_restores_on_error():
    with pytest.raises(KeyError):
        with twinlearn.config_context(numeric_mode="identical"):
            raise KeyError
    assert twinlearn.get_numeric_mode() == "deterministic"


def test_config_context_rejects_bad_values():
    with pytest.raises(ValueError):
        with twinlearn.config_context(numeric_mode="nope"):
            pass


def test_env_vars_read_at_import():
    r = run_py(
        "import twinlearn as t; print(t.get_device(), t.get_numeric_mode(), t.get_n_threads())",
        TWINLEARN_DEVICE="cpu", TWINLEARN_NUMERIC_MODE="identical", TWINLEARN_NUM_THREADS="3",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu", "identical", "3"]


@pytest.mark.parametrize(
    "var,value",
    [("TWINLEARN_NUMERIC_MODE", "exact"), ("TWINLEARN_DEVICE", "tpu"), ("TWINLEARN_NUM_THREADS", "many"),
     ("TWINLEARN_NUM_THREADS", "abc"), ("TWINLEARN_NUM_THREADS", "99999999999"), ("TWINLEARN_CPU_ISA", "avx3")],
)
def test_bad_env_var_is_a_clear_error(var, value):
    r = run_py("import twinlearn", **{var: value})
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    # One clear line naming the variable and what was written (not a placeholder such as -1).
    assert last.startswith("ValueError") and var in last and repr(value) in last, last


@pytest.mark.parametrize("isa", ["baseline", "avx2", "avx512"])
def test_cpu_isa_values_are_accepted(isa):
    r = run_py("import twinlearn", TWINLEARN_CPU_ISA=isa)
    assert r.returncode == 0, r.stderr


def test_device_info_and_vendor():
    info = twinlearn.device_info()
    assert info["cpu"] is True
    assert set(info) >= {"cuda_compiled", "cuda_available", "cuda_reason", "gpus"}
    if info["cuda_available"]:
        assert twinlearn.vendor() == "cuda"
        assert info["gpus"] and info["cuda_reason"] is None
    else:
        assert twinlearn.vendor() == "cpu"
        assert info["cuda_reason"]


def test_cuda_request_without_gpu_names_the_reason():
    if twinlearn.device_info()["cuda_available"]:
        pytest.skip("a GPU is usable here")
    X = [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="cannot run on a GPU"):
        twinlearn.StandardScaler(device="cuda").fit(X)


def test_cpu_only_build_says_how_to_get_the_cuda_backend():
    # A build without twinlearn._cuda: the reason names the missing backend and how to build it.
    code = (
        "import sys, importlib.abc\n"
        "class NoCuda(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'twinlearn._cuda':\n"
        "            raise ModuleNotFoundError('No module named twinlearn._cuda', name=name)\n"
        "sys.meta_path.insert(0, NoCuda())\n"
        "import twinlearn\n"
        "print(twinlearn.device_info()['cuda_reason'])\n"
    )
    r = run_py(code)
    assert r.returncode == 0, r.stderr
    assert "built without its CUDA backend" in r.stdout and "nvcc" in r.stdout


def test_auto_falls_back_to_cpu_without_gpu():
    if twinlearn.device_info()["cuda_available"]:
        pytest.skip("a GPU is usable here")
    s = twinlearn.StandardScaler().fit([[1.0], [2.0]])
    assert s.device_used() == "cpu"


@pytest.mark.gpu
def test_auto_picks_the_gpu():
    s = twinlearn.StandardScaler().fit([[1.0], [2.0]])
    assert s.device_used() == "cuda:0"


@pytest.mark.gpu
def test_missing_gpu_ordinal_is_a_clear_error():
    with pytest.raises(ValueError, match="does not exist"):
        twinlearn.StandardScaler(device="cuda:99").fit([[1.0], [2.0]])
