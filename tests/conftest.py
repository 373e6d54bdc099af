"""Shared pytest setup.

Tests marked ``gpu`` need a usable CUDA GPU. Without one they are skipped,
except under ``TWINLEARN_REQUIRE_GPU=1`` (``make test-gpu``), where they fail:
on the GPU machine no GPU test may skip for want of a GPU.

The ``device`` fixture runs a test body on every backend: 'cpu', and 'cuda:0'
(marked gpu).
"""

import os

import pytest
import threadpoolctl

import twinlearn
from twinlearn import _backend

REQUIRE_GPU = os.environ.get("TWINLEARN_REQUIRE_GPU") == "1"


def _share_cores_among_workers():
    """Under pytest-xdist, give each worker its share of the cores (twinlearn's
    threads and the BLAS/OpenMP pools of NumPy and scikit-learn): N workers
    each spinning up all cores oversubscribe the machine many times over."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= 1:
        return
    share = max(1, (os.cpu_count() or 1) // workers)
    if "TWINLEARN_NUM_THREADS" not in os.environ:
        twinlearn.set_n_threads(share)
    threadpoolctl.threadpool_limits(share)


_share_cores_among_workers()


def pytest_collection_modifyitems(config, items):
    if _backend.cuda_available():
        return
    reason = _backend.cuda_unavailable_reason()
    for item in items:
        if "gpu" in item.keywords:
            if not REQUIRE_GPU:
                item.add_marker(pytest.mark.skip(reason=f"no usable GPU: {reason}"))


def pytest_runtest_setup(item):
    if REQUIRE_GPU and "gpu" in item.keywords and not _backend.cuda_available():
        pytest.fail(f"TWINLEARN_REQUIRE_GPU=1 but no GPU is usable: {_backend.cuda_unavailable_reason()}")


@pytest.fixture(params=["cpu", pytest.param("cuda:0", marks=pytest.mark.gpu)])
def device(request):
    return request.param


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a usable CUDA GPU")
