"""Classification metrics: scikit-learn's results, errors and warnings.

Host input outside identical mode is scikit-learn's computation (the same
objects). In identical mode the label metrics come from exact cell counts
replayed through scikit-learn's arithmetic: unweighted results are
scikit-learn's bits, weighted ones close to them (canonical cell sums), and
a GPU gives the CPU's bits (gpu-marked tests).
"""

import numpy as np
import pytest
import sklearn.metrics as sk
from sklearn.utils._param_validation import InvalidParameterError

import twinlearn.metrics as tm
from twinlearn.metrics import _classification
from twinlearn.testing import assert_separates, bits, to_device

from _metric_helpers import assert_same_outcome, outcome

# (name, keyword arguments): the label metrics and their options
COUNTING = [
    ("accuracy_score", {}),
    ("accuracy_score", {"normalize": False}),
    ("balanced_accuracy_score", {}),
    ("balanced_accuracy_score", {"adjusted": True}),
    ("confusion_matrix", {}),
    ("confusion_matrix", {"normalize": "true"}),
    ("confusion_matrix", {"normalize": "all", "labels": [3, 1, 0]}),
    ("multilabel_confusion_matrix", {}),
    ("multilabel_confusion_matrix", {"labels": [2, 0]}),
    ("precision_recall_fscore_support", {}),
    ("precision_recall_fscore_support", {"average": "macro", "beta": 0.5}),
    ("precision_recall_fscore_support", {"average": "weighted", "zero_division": 0.0}),
    ("precision_score", {"average": "micro"}),
    ("recall_score", {"average": None, "labels": [0, 1, 5]}),
    ("f1_score", {"average": "macro", "zero_division": np.nan}),
    ("f1_score", {"average": "binary", "pos_label": 1}),
    ("fbeta_score", {"beta": 2.0, "average": "weighted"}),
    ("matthews_corrcoef", {}),
    ("cohen_kappa_score", {}),
    ("cohen_kappa_score", {"weights": "quadratic"}),
    ("cohen_kappa_score", {"weights": "linear", "labels": [0, 1, 2, 3]}),
]


def labels_case(seed, n_classes, n=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90)) if n is None else n
    y_true = rng.integers(0, n_classes, n)
    # mostly right, so every kind of cell occurs
    y_pred = np.where(rng.random(n) < 0.6, y_true, rng.integers(0, n_classes, n))
    return y_true, y_pred, rng


def call(name, *args, **kw):
    return getattr(tm, name), getattr(sk, name), args, kw


@pytest.mark.parametrize("name,kw", COUNTING)
@pytest.mark.parametrize("seed", range(12))
def test_identical_mode_unweighted_is_scikit_learns_bits(name, kw, seed):
    y_true, y_pred, _ = labels_case(seed, n_classes=2 + seed % 3)
    ref = outcome(getattr(sk, name), y_true, y_pred, **kw)
    got = outcome(getattr(tm, name), y_true, y_pred, numeric_mode="identical", **kw)
    assert_same_outcome(ref, got, exact=True)


@pytest.mark.parametrize("name,kw", COUNTING)
@pytest.mark.parametrize("seed", range(6))
def test_identical_mode_weighted_is_close(name, kw, seed):
    y_true, y_pred, rng = labels_case(100 + seed, n_classes=2 + seed % 3)
    w = rng.random(y_true.shape[0]) * 3
    ref = outcome(getattr(sk, name), y_true, y_pred, sample_weight=w, **kw)
    got = outcome(getattr(tm, name), y_true, y_pred, sample_weight=w, numeric_mode="identical", **kw)
    assert_same_outcome(ref, got, exact=False, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,kw", COUNTING[:10])
@pytest.mark.parametrize("wdtype", [np.int32, np.int64, np.bool_])
def test_integer_weights_are_exact_and_stay_integers(name, kw, wdtype):
    y_true, y_pred, rng = labels_case(7, n_classes=3, n=60)
    w = rng.integers(0, 4, y_true.shape[0]).astype(wdtype)
    ref = outcome(getattr(sk, name), y_true, y_pred, sample_weight=w, **kw)
    got = outcome(getattr(tm, name), y_true, y_pred, sample_weight=w, numeric_mode="identical", **kw)
    assert_same_outcome(ref, got, exact=True)


@pytest.mark.parametrize("name,kw", COUNTING)
def test_default_mode_is_scikit_learns_computation(name, kw):
    y_true, y_pred, rng = labels_case(3, n_classes=4, n=50)
    w = rng.random(50)
    for sw in (None, w):
        ref = outcome(getattr(sk, name), y_true, y_pred, sample_weight=sw, **kw)
        got = outcome(getattr(tm, name), y_true, y_pred, sample_weight=sw, **kw)
        assert_same_outcome(ref, got, exact=True)


@pytest.mark.parametrize("labels", [["a", "b"], ["cat", "dog", "emu"], [-1.0, 2.5], [True, False]])
def test_string_float_and_bool_labels(labels):
    rng = np.random.default_rng(1)
    lab = np.array(labels)
    y_true, y_pred = lab[rng.integers(0, len(lab), 40)], lab[rng.integers(0, len(lab), 40)]
    for name, kw in [("confusion_matrix", {}), ("f1_score", {"average": "macro"}), ("accuracy_score", {}),
                     ("matthews_corrcoef", {}), ("precision_recall_fscore_support", {})]:
        ref = outcome(getattr(sk, name), y_true, y_pred, **kw)
        got = outcome(getattr(tm, name), y_true, y_pred, numeric_mode="identical", **kw)
        assert_same_outcome(ref, got, exact=True)


def test_no_right_prediction_keeps_scikit_learns_float_tables():
    # scikit-learn's true-positive sums start as float zeros when no sample is
    # predicted right; the replay (int64 cell counts) must not turn them into
    # integers there, and must keep them integers otherwise.
    for y_true, y_pred in (([3, 1], [2, 2]), ([1, 0, 0], [0, 1, 1]), ([0, 1, 1], [0, 1, 0])):
        for name in ("multilabel_confusion_matrix", "precision_recall_fscore_support"):
            assert_same_outcome(outcome(getattr(sk, name), y_true, y_pred),
                                outcome(getattr(tm, name), y_true, y_pred, numeric_mode="identical"))


def test_cell_weights_are_canonical_sums_in_sample_order():
    from twinlearn import _backend

    rng = np.random.default_rng(5)
    y_true, y_pred = rng.integers(0, 3, 5000), rng.integers(0, 3, 5000)
    w = rng.standard_normal(5000) * np.where(rng.random(5000) < 0.2, 1e6, 1.0)
    mod = _backend.core()
    ctx = mod.Context("cpu", 1, "identical")
    run = _classification.Run(None, "identical", (y_true, y_pred, w))
    labels, counts, wsum = _classification.cell_table(run, y_true, y_pred, w)

    def check(cell_sum):
        for i in range(3):
            for j in range(3):
                sel = w[(y_true == labels[i]) & (y_pred == labels[j])]
                assert bits(wsum[i, j]) == bits(cell_sum(sel)), (i, j)

    assert np.array_equal(counts, sk.confusion_matrix(y_true, y_pred))
    assert_separates(check, right=lambda v: mod.reduce_sum(ctx, v), wrong=np.sum, what="cell weight sums")


@pytest.mark.parametrize("fn,args,kw", [
    ("accuracy_score", ([0, 1, np.nan], [0, 1, 1]), {}),
    ("accuracy_score", ([0, 1, 1], [0, 1]), {}),
    ("accuracy_score", ([], []), {}),
    ("confusion_matrix", ([0, 1], [0, 1]), {"labels": []}),
    ("confusion_matrix", ([0, 1], [0, 1]), {"labels": [5, 6]}),
    ("confusion_matrix", ([0, 1], [0, 1]), {"normalize": "rows"}),
    ("f1_score", ([0, 1, 2], [0, 1, 2]), {}),
    ("f1_score", ([0, 1, 1], [0, 1, 1]), {"average": "bogus"}),
    ("f1_score", ([0, 1, 1], [0, 1, 1]), {"pos_label": 7}),
    ("precision_score", ([0.5, 1.5], [0, 1]), {}),
    ("recall_score", ([0, 1], [[0, 1], [1, 0]]), {}),
    ("matthews_corrcoef", ([0, 1, 1], [0, 1, 1]), {"sample_weight": [1.0, 2.0]}),
    ("cohen_kappa_score", ([0, 1, 1], [0, 1, 1]), {"weights": "cubic"}),
    ("balanced_accuracy_score", ([0, 1, 1], [0, 2, 1]), {}),
])
def test_errors_and_warnings_are_scikit_learns(fn, args, kw):
    for mode in ("identical", None):
        assert_same_outcome(outcome(getattr(sk, fn), *args, **kw),
                            outcome(getattr(tm, fn), *args, numeric_mode=mode, **kw))


def test_bad_device_and_numeric_mode_are_named():
    with pytest.raises(ValueError, match="numeric_mode"):
        tm.accuracy_score([0, 1], [0, 1], numeric_mode="exact")
    with pytest.raises(ValueError, match="device"):
        tm.f1_score([0, 1], [0, 1], device="tpu")
    with pytest.raises(InvalidParameterError, match="'normalize' parameter of confusion_matrix"):
        tm.confusion_matrix([0, 1], [0, 1], normalize="rows", numeric_mode="identical")


@pytest.mark.parametrize("name", ["classification_report", "log_loss", "brier_score_loss", "hinge_loss"])
def test_host_functions_are_scikit_learns(name):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 30)
    p = rng.random(30)
    for mode in (None, "identical"):
        args = (y, y[::-1]) if name == "classification_report" else (y, p)
        assert_same_outcome(outcome(getattr(sk, name), *args), outcome(getattr(tm, name), *args, numeric_mode=mode))


def test_multilabel_indicator_input():
    rng = np.random.default_rng(2)
    Y, P = rng.integers(0, 2, (30, 4)), rng.integers(0, 2, (30, 4))
    for name, kw in [("accuracy_score", {}), ("f1_score", {"average": "samples"}),
                     ("multilabel_confusion_matrix", {}), ("precision_recall_fscore_support", {})]:
        assert_same_outcome(outcome(getattr(sk, name), Y, P, **kw),
                            outcome(getattr(tm, name), Y, P, numeric_mode="identical", **kw))


# -- GPU: the CPU's identical-mode bits, device arrays in ------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("name,kw", COUNTING)
@pytest.mark.parametrize("weighted", [False, True])
def test_gpu_gives_the_cpus_identical_bits(lib, name, kw, weighted):
    y_true, y_pred, rng = labels_case(11, n_classes=4, n=20_000)
    w = rng.random(y_true.shape[0]) if weighted else None
    cpu = outcome(getattr(tm, name), y_true, y_pred, sample_weight=w, numeric_mode="identical", **kw)
    dw = None if w is None else to_device(lib, w)
    gpu = outcome(getattr(tm, name), to_device(lib, y_true), to_device(lib, y_pred), sample_weight=dw,
                  numeric_mode="identical", **kw)
    assert_same_outcome(cpu, gpu, exact=True)
    if not weighted:
        assert_same_outcome(outcome(getattr(sk, name), y_true, y_pred, **kw), gpu, exact=True)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_gpu_score_of_an_estimator_is_computed_on_the_device(lib):
    from twinlearn.naive_bayes import GaussianNB

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((500, 4)), rng.integers(0, 3, 500)
    est = GaussianNB(device="cuda").fit(to_device(lib, X), to_device(lib, y))
    host_score = GaussianNB(device="cuda").fit(to_device(lib, X), to_device(lib, y)).score(X, y)
    assert est.score(to_device(lib, X), to_device(lib, y)) == host_score


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_gpu_host_labels_beside_device_predictions(lib):
    # y_true on the host, predictions on the device (a predict's output): y_true goes to the device
    y_true, y_pred, rng = labels_case(12, n_classes=3, n=5_000)
    w = rng.random(5_000)
    for name, kw in [("accuracy_score", {}), ("f1_score", {"average": "macro"}), ("confusion_matrix", {})]:
        cpu = outcome(getattr(tm, name), y_true, y_pred, sample_weight=w, numeric_mode="identical", **kw)
        gpu = outcome(getattr(tm, name), y_true, to_device(lib, y_pred), sample_weight=w, numeric_mode="identical",
                      **kw)
        assert_same_outcome(cpu, gpu, exact=True)
