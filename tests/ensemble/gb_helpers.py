"""Helpers shared by the gradient-boosting tests: bit-exact comparison of
arrays and fitted models, and the HIGGS-like fixture."""

import numpy as np

MODEL_ATTRS = ("borders_", "border_offsets_", "tree_depth_", "split_feature_", "split_bin_", "split_border_",
               "split_gain_", "leaf_values_", "base_score_")


def bits(a):
    a = np.ascontiguousarray(np.asarray(a))
    return a.dtype.str, a.shape, a.view(np.uint8).tobytes()


def assert_same_model(a, b):
    for attr in MODEL_ATTRS:
        assert bits(getattr(a, attr)) == bits(getattr(b, attr)), attr


def higgs_like(n=6000, d=12, seed=0):
    """A nonlinear label of a few features plus noise; some NaN and ties."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    c = [j % d for j in range(5)]
    X[:, c[3]] = np.round(X[:, c[3]] * 2)
    s = (X[:, c[0]] * X[:, c[1]] + np.sin(2 * X[:, c[2]]) + 0.5 * X[:, c[3]] ** 2 - np.abs(X[:, c[4]])
         + 0.7 * rng.standard_normal(n))
    y = (s > np.median(s)).astype(int)
    X[rng.random((n, d)) < 0.02] = np.nan
    return X, y

