"""Workloads of the classification and regression metrics (twinlearn.metrics
beside sklearn.metrics): each times one metric call on labels and scores
made once per size.

A metric is a function, not an estimator: :class:`MetricCall` holds one
and its keyword arguments, and its ``score(a, b)`` is the timed step. The
twinlearn contenders get ``device`` and ``numeric_mode`` as its keywords
(device data in and the result out, nothing else copied); the quality
column shows the metric's value, so the contenders' results sit side by
side.
"""

from __future__ import annotations

import numpy as np

from .datasets import Dataset
from .registry import Quality, Scale, Step, Workload, register

#: Like the other workloads beyond the issue's speed targets: the full suite
#: (and the smoke tests), so that the quick suite keeps its time budget.
SUITES = frozenset({"smoke", "full"})


class MetricCall:
    """``score(a, b)`` calls ``fn(a, b, **kwargs)``."""

    def __init__(self, fn, **kwargs):
        self.fn, self.kwargs = fn, kwargs
        self._device = "cpu"

    def score(self, a, b):
        from twinlearn import _io

        self._device = _io.device_of(a) if _io.is_device_array(a) else "cpu"
        return self.fn(a, b, **self.kwargs)

    # what the harness records of a twinlearn contender
    def numeric_mode_used(self):
        import twinlearn

        return self.kwargs.get("numeric_mode") or twinlearn.get_numeric_mode()

    def device_used(self):
        return self._device


def metric_factory(module: str, name: str):
    """The workload's estimator for the metric ``module.name``: a factory of MetricCall."""
    def build(**params):
        import importlib

        return MetricCall(getattr(importlib.import_module(module), name), **params)

    build.__qualname__ = f"{module}.{name}"
    return build


def binary_scores(scale: Scale, seed: int, dtype) -> Dataset:
    """Binary labels (int32) and scores that rank them imperfectly, rounded
    to 1e-4 so that ties occur."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, scale.rows, dtype=np.int32)
    s = np.round(rng.random(scale.rows) + 0.5 * y, 4).astype(dtype)
    return Dataset({"y": y, "y_score": s})


def multiclass_labels(scale: Scale, seed: int, dtype) -> Dataset:
    """Labels of ``extra['classes']`` classes (int32) and predictions right 70% of the time."""
    rng = np.random.default_rng(seed)
    k = int(scale.extra.get("classes", 10))
    y = rng.integers(0, k, scale.rows, dtype=np.int32)
    p = np.where(rng.random(scale.rows) < 0.7, y, rng.integers(0, k, scale.rows, dtype=np.int32))
    return Dataset({"y": y, "y_pred": p.astype(np.int32)})


def regression_targets(scale: Scale, seed: int, dtype) -> Dataset:
    """Targets (n, cols) and predictions with unit noise."""
    rng = np.random.default_rng(seed)
    shape = (scale.rows,) if scale.cols == 1 else (scale.rows, scale.cols)
    y = (rng.standard_normal(shape) * 3).astype(dtype)
    return Dataset({"y": y, "y_pred": (y + rng.standard_normal(shape)).astype(dtype)})


def _value(ev):
    v = np.asarray(ev.outputs["score"], dtype=np.float64)
    return {"value": float(v) if v.ndim == 0 else float(np.trace(v) / v.sum())}


VALUE = Quality(_value, "value", True,
                "the metric's value (accuracy for a confusion matrix); the same for every contender, to rounding")

SCORE_BINARY = (Step("score", ("y", "y_score")),)
SCORE_LABELS = (Step("score", ("y", "y_pred")),)


def _metric_workload(name, fn, title, data, scales, steps, mem_factor):
    return register(Workload(
        name=name, title=title, data=data, scales=scales,
        estimator=metric_factory("twinlearn.metrics", fn),
        sklearn=metric_factory("sklearn.metrics", fn),
        steps=steps, quality=VALUE, sweep=False, mem_factor=mem_factor, dtype="float64", suites=SUITES,
    ))


ROC_AUC = _metric_workload(
    "roc_auc_score", "roc_auc_score", "roc_auc_score {rows} scores {dtype}", binary_scores,
    {"smoke": Scale(2_000, 1), "cpu": Scale(1_000_000, 1), "cuda": Scale(100_000_000, 1)}, SCORE_BINARY, 6.0)

CONFUSION = _metric_workload(
    "confusion_matrix", "confusion_matrix", "confusion_matrix {rows} labels, {classes} classes",
    multiclass_labels,
    {"smoke": Scale(2_000, 1, {"classes": 5}), "cpu": Scale(1_000_000, 1, {"classes": 10}),
     "cuda": Scale(100_000_000, 1, {"classes": 10})}, SCORE_LABELS, 4.0)

_REG_SCALES = {"smoke": Scale(2_000, 1), "cpu": Scale(1_000_000, 4), "cuda": Scale(50_000_000, 4)}
R2 = _metric_workload("r2_score", "r2_score", "r2_score {rows} x {cols} {dtype}", regression_targets,
                      _REG_SCALES, SCORE_LABELS, 4.0)
MSE = _metric_workload("mean_squared_error", "mean_squared_error", "mean_squared_error {rows} x {cols} {dtype}",
                       regression_targets, _REG_SCALES, SCORE_LABELS, 4.0)
