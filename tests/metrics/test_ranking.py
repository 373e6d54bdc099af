"""Ranking metrics: curves with scikit-learn's bits, areas by canonical sums.

In identical mode the curves are scikit-learn's bits (a stable descending
sort, ties grouped at their last sample, exact or sequential cumulative
sums); the areas are canonical sums of the same terms, close to
scikit-learn's; a GPU gives the CPU's bits (gpu-marked tests).
"""

import numpy as np
import pytest
import sklearn.metrics as sk

import twinlearn.metrics as tm
from twinlearn.metrics import _common
from twinlearn.testing import assert_separates, to_device

from _metric_helpers import assert_same_outcome, outcome


def scores_case(seed, n=None, decimals=1):
    """Binary labels and rounded scores (many ties)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 200)) if n is None else n
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n) + 0.3 * y, decimals)
    return y, s, rng


WEIGHTS = ["none", "float", "integer"]


def weights(kind, rng, n):
    if kind == "none":
        return None
    if kind == "integer":
        return rng.integers(0, 4, n).astype(np.float64)
    return rng.random(n) * 3


@pytest.mark.parametrize("name,kw", [("roc_curve", {}), ("roc_curve", {"drop_intermediate": False}),
                                     ("precision_recall_curve", {}),
                                     ("precision_recall_curve", {"drop_intermediate": True}),
                                     ("roc_curve", {"pos_label": 0})])
@pytest.mark.parametrize("wkind", WEIGHTS)
@pytest.mark.parametrize("seed", range(10))
def test_curves_are_scikit_learns_bits(name, kw, wkind, seed):
    y, s, rng = scores_case(seed, decimals=1 + seed % 3)
    w = weights(wkind, rng, y.shape[0])
    ref = outcome(getattr(sk, name), y, s, sample_weight=w, **kw)
    got = outcome(getattr(tm, name), y, s, sample_weight=w, numeric_mode="identical", **kw)
    assert_same_outcome(ref, got, exact=True)


@pytest.mark.parametrize("name,kw", [("roc_auc_score", {}), ("roc_auc_score", {"max_fpr": 0.25}),
                                     ("roc_auc_score", {"max_fpr": 1.0}), ("average_precision_score", {})])
@pytest.mark.parametrize("wkind", WEIGHTS)
@pytest.mark.parametrize("seed", range(10))
def test_areas_are_close_to_scikit_learns(name, kw, wkind, seed):
    y, s, rng = scores_case(50 + seed, decimals=1 + seed % 3)
    w = weights(wkind, rng, y.shape[0])
    ref = outcome(getattr(sk, name), y, s, sample_weight=w, **kw)
    got = outcome(getattr(tm, name), y, s, sample_weight=w, numeric_mode="identical", **kw)
    assert_same_outcome(ref, got, exact=False, rtol=1e-13, atol=1e-15)
    # default mode: scikit-learn's computation
    assert_same_outcome(ref, outcome(getattr(tm, name), y, s, sample_weight=w, **kw), exact=True)


def test_ties_keep_sample_order():
    # Non-integer weights are accumulated in sample order within a tie group
    # (a stable descending sort), as scikit-learn does; reversing the ties
    # (scikit-learn's older mergesort[::-1] order) changes the bits.
    rng = np.random.default_rng(3)
    n = 400
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 1)
    w = rng.random(n) * 10.0 ** rng.integers(-3, 4, n)
    ref = sk.roc_curve(y, s, sample_weight=w, drop_intermediate=False)

    def reversed_ties(self, x):
        return np.argsort(x, kind="stable")[::-1]

    def check(argsort_desc):
        orig = _common._NumpyLike.argsort_desc
        _common._NumpyLike.argsort_desc = argsort_desc
        try:
            got = tm.roc_curve(y, s, sample_weight=w, drop_intermediate=False, numeric_mode="identical")
        finally:
            _common._NumpyLike.argsort_desc = orig
        for a, b in zip(ref, got):
            assert a.tobytes() == b.tobytes()

    assert_separates(check, right=_common._NumpyLike.argsort_desc, wrong=reversed_ties, what="tie order")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_accuracy_ties_as_scikit_learn(seed, k):
    rng = np.random.default_rng(seed)
    n, c = 300, 5
    y = rng.integers(0, c, n)
    S = np.round(rng.random((n, c)), 1)  # many ties between classes
    w = rng.random(n) if seed % 2 else None
    for normalize in (True, False):
        ref = outcome(sk.top_k_accuracy_score, y, S, k=k, normalize=normalize, sample_weight=w)
        got = outcome(tm.top_k_accuracy_score, y, S, k=k, normalize=normalize, sample_weight=w,
                      numeric_mode="identical")
        assert_same_outcome(ref, got, exact=w is None, rtol=1e-13)


def test_top_k_tie_rule_separates():
    # The true class ranks after the classes with a higher score and after
    # the tied classes of a higher index (scikit-learn's reversed stable sort);
    # a lowest-index-first rule gives other scores on this fixture.
    from twinlearn.metrics import _ranking

    y = np.array([1, 1, 2, 0, 2])
    S = np.array([[0.5, 0.5, 0.1], [0.2, 0.5, 0.5], [0.3, 0.3, 0.3], [0.4, 0.4, 0.4], [0.1, 0.9, 0.9]])

    def lowest_first(S, s_true, col, true_col):
        return (S > s_true) | ((S == s_true) & (col < true_col))

    def check(rule):
        orig = _ranking._ranks_before
        _ranking._ranks_before = rule
        try:
            for k in (1, 2):
                assert tm.top_k_accuracy_score(y, S, k=k, numeric_mode="identical") == \
                    sk.top_k_accuracy_score(y, S, k=k)
        finally:
            _ranking._ranks_before = orig

    assert_separates(check, right=_ranking._ranks_before, wrong=lowest_first, what="top-k ties")


@pytest.mark.parametrize("fn,args,kw", [
    ("roc_auc_score", ([0, 0, 0], [0.1, 0.2, 0.3]), {}),
    ("roc_auc_score", ([0, 1, 1], [0.1, np.nan, 0.3]), {}),
    ("roc_auc_score", ([0, 1, 1], [0.1, 0.2]), {}),
    ("roc_auc_score", ([0, 1, 1], [0.1, 0.2, 0.3]), {"max_fpr": 0.0}),
    ("roc_auc_score", ([0, 1, 2], [0.1, 0.2, 0.3]), {}),
    ("roc_curve", ([0, 1, 2], [0.1, 0.2, 0.3]), {}),
    ("roc_curve", ([0, 1, 1], [0.1, 0.2, np.inf]), {}),
    ("roc_curve", ([1, 1, 1], [0.1, 0.2, 0.3]), {}),
    ("roc_curve", ([0, 2, 2], [0.1, 0.2, 0.3]), {}),
    ("precision_recall_curve", ([0, 0, 0], [0.1, 0.2, 0.3]), {}),
    ("average_precision_score", ([0, 2, 2], [0.1, 0.2, 0.3]), {}),
    ("average_precision_score", ([0, 1, 1], [0.1, 0.2, 0.3]), {"pos_label": 3}),
    ("top_k_accuracy_score", ([0, 1, 2], [[0.1, 0.2, 0.3]] * 3), {"k": 3}),
    ("top_k_accuracy_score", ([0, 1, 2], [[0.1, 0.2, 0.3, 0.4]] * 3), {}),
    ("top_k_accuracy_score", ([0, 1, 2], [[0.1, 0.2, 0.3]] * 3), {"labels": [2, 1, 0]}),
])
def test_errors_and_warnings_are_scikit_learns(fn, args, kw):
    for mode in ("identical", None):
        assert_same_outcome(outcome(getattr(sk, fn), *args, **kw),
                            outcome(getattr(tm, fn), *args, numeric_mode=mode, **kw), exact=False)


MULTICLASS = [{"multi_class": "ovr"}, {"multi_class": "ovr", "average": "weighted"},
              {"multi_class": "ovr", "average": None}, {"multi_class": "ovr", "average": "micro"},
              {"multi_class": "ovo"}, {"multi_class": "ovo", "average": "weighted"},
              {"multi_class": "ovr", "labels": [0, 1, 2, 3]}]


def probabilities(seed, n, c, absent=None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    if absent is not None:
        y[y == absent] = (absent + 1) % c
    P = np.round(rng.random((n, c)), 1) + 1e-3  # ties within each column
    return y, P / P.sum(axis=1, keepdims=True), rng


@pytest.mark.parametrize("kw", MULTICLASS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_multiclass_areas_are_close_to_scikit_learns(kw, weighted, seed):
    y, P, rng = probabilities(seed, 150, 4, absent=1 if seed == 3 and "labels" in kw else None)
    w = rng.random(150) if weighted else None
    ref = outcome(sk.roc_auc_score, y, P, sample_weight=w, **kw)
    got = outcome(tm.roc_auc_score, y, P, sample_weight=w, numeric_mode="identical", **kw)
    assert_same_outcome(ref, got, exact=False, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("args,kw", [
    ((np.array([0, 1, 2]), np.full((3, 3), 0.5)), {"multi_class": "ovr"}),
    ((np.array([0, 1, 2]), np.full((3, 3), 1 / 3)), {"multi_class": "raise"}),
    ((np.array([0, 1, 2]), np.full((3, 3), 1 / 3)), {"multi_class": "ovo", "average": None}),
    ((np.array([0, 1, 2]), np.full((3, 4), 1 / 4)), {"multi_class": "ovr"}),
    ((np.array([0, 1, 2]), np.full((3, 3), 1 / 3)), {"multi_class": "ovr", "max_fpr": 0.5}),
    ((np.array([0, 1, 2]), np.full((3, 3), 1 / 3)), {"multi_class": "ovo", "sample_weight": [1.0, 1.0, 1.0]}),
    ((np.array([0, 1, 2]), np.full((3, 3), 1 / 3)), {"multi_class": "ovr", "labels": [0, 2, 1]}),
    ((np.array([0, 1, 2]), np.full((3, 3), 1 / 3)), {"multi_class": "ovo", "sample_weight": []}),
])
def test_multiclass_errors_are_scikit_learns(args, kw):
    assert_same_outcome(outcome(sk.roc_auc_score, *args, **kw),
                        outcome(tm.roc_auc_score, *args, numeric_mode="identical", **kw), exact=False)


def test_multilabel_areas_are_scikit_learns():
    rng = np.random.default_rng(0)
    Y, P = rng.integers(0, 2, (60, 3)), rng.random((60, 3))
    for name in ("average_precision_score", "roc_auc_score"):
        assert_same_outcome(outcome(getattr(sk, name), Y, P),
                            outcome(getattr(tm, name), Y, P, numeric_mode="identical"))


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("wkind", WEIGHTS)
@pytest.mark.parametrize("name,kw", [("roc_curve", {}), ("precision_recall_curve", {}), ("roc_auc_score", {}),
                                     ("roc_auc_score", {"max_fpr": 0.3}), ("average_precision_score", {})])
def test_gpu_gives_the_cpus_identical_bits(lib, wkind, name, kw):
    y, s, rng = scores_case(9, n=100_000, decimals=3)
    w = weights(wkind, rng, y.shape[0])
    cpu = outcome(getattr(tm, name), y, s, sample_weight=w, numeric_mode="identical", **kw)
    gpu = outcome(getattr(tm, name), to_device(lib, y), to_device(lib, s),
                  sample_weight=None if w is None else to_device(lib, w), numeric_mode="identical", **kw)
    assert_same_outcome(cpu, gpu, exact=True)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("kw", MULTICLASS)
def test_gpu_multiclass_areas_give_the_cpus_bits(lib, kw):
    y, P, rng = probabilities(6, 30_000, 4)
    for w in (None, rng.random(30_000)):
        if w is not None and kw["multi_class"] == "ovo":
            continue
        cpu = outcome(tm.roc_auc_score, y, P, sample_weight=w, numeric_mode="identical", **kw)
        gpu = outcome(tm.roc_auc_score, to_device(lib, y), to_device(lib, P),
                      sample_weight=None if w is None else to_device(lib, w), numeric_mode="identical", **kw)
        assert_same_outcome(cpu, gpu, exact=True)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_gpu_top_k_gives_the_cpus_bits(lib):
    rng = np.random.default_rng(4)
    y, S = rng.integers(0, 6, 50_000), np.round(rng.random((50_000, 6)), 2)
    w = rng.random(50_000)
    for sw in (None, w):
        cpu = tm.top_k_accuracy_score(y, S, k=2, sample_weight=sw, numeric_mode="identical")
        gpu = tm.top_k_accuracy_score(to_device(lib, y), to_device(lib, S), k=2,
                                      sample_weight=None if sw is None else to_device(lib, sw),
                                      numeric_mode="identical")
        assert np.float64(cpu).tobytes() == np.float64(gpu).tobytes()
