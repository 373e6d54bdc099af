"""Shared setup of the gradient-boosting tests."""

import pytest
from threadpoolctl import threadpool_limits

import twinlearn


@pytest.fixture(autouse=True)
def _one_thread():
    """One CPU thread for twinlearn and scikit-learn unless a test asks for
    more: results do not depend on it (the thread-count tests ask for more),
    and small fits run faster without parallel regions."""
    with twinlearn.config_context(n_threads=1), threadpool_limits(1):
        yield
