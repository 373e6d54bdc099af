"""Bit-identity checks of whole estimators, and the separating-arm helper.

Each check takes a `factory`: a callable that returns a new, unfitted
estimator (``lambda: KMeans(n_clusters=3, random_state=0)``). The check sets
``device`` and ``numeric_mode`` on it, fits it on ``X`` (and ``y``), and
compares the fitted attributes and the outputs on ``X`` bit for bit
(:func:`twinlearn.testing.snapshot`).
"""

from __future__ import annotations

from .._config import config_context
from ._arrays import skip_without_gpu
from ._fitted import assert_same_snapshot, snapshot


def fit_snapshot(factory, X, y=None, *, device="cpu", numeric_mode=None, n_threads=None, X_eval=None,
                 **fit_params):
    """Fit ``factory()`` on `device` in `numeric_mode` with `n_threads` threads
    (None: leave each as it is) and return its snapshot on `X_eval` (default `X`)."""
    est = factory()
    params = {"device": device}
    if numeric_mode is not None:
        params["numeric_mode"] = numeric_mode
    est.set_params(**params)
    with config_context(n_threads=n_threads):
        if y is None:
            est.fit(X, **fit_params)
        else:
            est.fit(X, y, **fit_params)
        return snapshot(est, X if X_eval is None else X_eval)


def assert_deterministic(factory, X, y=None, *, numeric_mode="deterministic", device="cpu", repeats=2,
                         **fit_params):
    """Fitting ``factory()`` `repeats` times on one device gives the same bits."""
    first = fit_snapshot(factory, X, y, device=device, numeric_mode=numeric_mode, **fit_params)
    for i in range(1, repeats):
        again = fit_snapshot(factory, X, y, device=device, numeric_mode=numeric_mode, **fit_params)
        assert_same_snapshot(first, again, f"{numeric_mode} mode on {device}, run 1 vs run {i + 1}")


def assert_identical_across_threads(factory, X, y=None, *, threads=(1, 2, 3), numeric_mode="identical",
                                    device="cpu", **fit_params):
    """Every thread count in `threads` gives the same bits as the first."""
    ref = fit_snapshot(factory, X, y, device=device, numeric_mode=numeric_mode, n_threads=threads[0],
                       **fit_params)
    for n in threads[1:]:
        got = fit_snapshot(factory, X, y, device=device, numeric_mode=numeric_mode, n_threads=n, **fit_params)
        assert_same_snapshot(ref, got, f"{numeric_mode} mode on {device}, {threads[0]} vs {n} threads")


def assert_identical_across_devices(factory, X, y=None, *, devices=("cpu", "cuda"), numeric_mode="identical",
                                    **fit_params):
    """The CPU and the GPU give the same bits (identical mode). Skips without a
    usable GPU, or fails under ``TWINLEARN_REQUIRE_GPU=1``."""
    if any(d.startswith("cuda") for d in devices):
        skip_without_gpu()
    ref = fit_snapshot(factory, X, y, device=devices[0], numeric_mode=numeric_mode, **fit_params)
    for d in devices[1:]:
        got = fit_snapshot(factory, X, y, device=d, numeric_mode=numeric_mode, **fit_params)
        assert_same_snapshot(ref, got, f"{numeric_mode} mode, {devices[0]} vs {d}")


def assert_separates(check, right, wrong, what: str = "") -> None:
    """A check counts as evidence for a numeric rule only if it tells the rule's
    right spelling from a broken one (docs/NUMERICS.md, "separating tests").

    `check(arm)` raises AssertionError when `arm` breaks the rule. This runs
    it on `right`, where it must pass, and on `wrong`, where it must fail;
    a check that passes on both arms shows nothing about the rule.

    >>> import numpy as np
    >>> x = np.float32([1e8, 1.0, -1e8, 1.0])
    >>> def check(total):  # the documented order: pairs, then their sum
    ...     assert total(x) == np.float32(2.0)
    >>> assert_separates(check, right=lambda v: (v[0] + v[2]) + (v[1] + v[3]),
    ...                  wrong=lambda v: ((v[0] + v[1]) + v[2]) + v[3])
    """
    label = f"{what}: " if what else ""
    try:
        check(right)
    except AssertionError as e:
        raise AssertionError(f"{label}the check fails on the right arm: {e}") from e
    try:
        check(wrong)
    except AssertionError:
        return
    raise AssertionError(f"{label}the check also passes on the broken arm, so it does not separate them")
