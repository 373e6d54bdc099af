"""Label-comparison clustering metrics: exact counts, scikit-learn's bits."""

import numpy as np
import pytest
import sklearn.metrics.cluster as skc
from scipy import sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

import twinlearn.metrics as tm
from twinlearn.metrics import _cluster
from twinlearn.testing import assert_separates, bits, to_device

SCORES = ["adjusted_rand_score", "rand_score", "mutual_info_score", "homogeneity_score", "completeness_score",
          "v_measure_score", "homogeneity_completeness_v_measure", "fowlkes_mallows_score", "pair_confusion_matrix",
          "adjusted_mutual_info_score", "normalized_mutual_info_score"]
AVERAGED = ["adjusted_mutual_info_score", "normalized_mutual_info_score"]


def labelings(seed, n=None, ka=None, kb=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000)) if n is None else n
    ka = int(rng.integers(1, 60)) if ka is None else ka
    kb = int(rng.integers(1, 60)) if kb is None else kb
    return rng.integers(0, ka, n) * 3 - 7, rng.integers(0, kb, n)


def same(a, b):
    return type(a) is type(b) and bits(np.asarray(a)) == bits(np.asarray(b))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("name", SCORES)
def test_same_bits_as_scikit_learn(name, seed):
    a, b = labelings(seed)
    if seed % 3 == 0:
        a = a.astype(str)  # string labels: np.unique's order, as scikit-learn
    assert same(getattr(tm, name)(a, b), getattr(skc, name)(a, b))


@pytest.mark.parametrize("name", AVERAGED)
@pytest.mark.parametrize("method", ["min", "geometric", "arithmetic", "max"])
def test_average_methods_same_bits(name, method):
    for seed in range(6):
        a, b = labelings(100 + seed)
        ours = getattr(tm, name)(a, b, average_method=method)
        assert same(ours, getattr(skc, name)(a, b, average_method=method))


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 3.0])
def test_v_measure_beta(beta):
    a, b = labelings(7)
    assert same(tm.v_measure_score(a, b, beta=beta), skc.v_measure_score(a, b, beta=beta))


@pytest.mark.parametrize("sparse", [False, True])
def test_contingency_is_exact_and_shaped_like_scikit_learn(sparse):
    a, b = labelings(3, n=5000)
    ours = tm.contingency_matrix(a, b, sparse=sparse)
    ref = skc.contingency_matrix(a, b, sparse=sparse)
    assert type(ours) is type(ref)
    if sparse:
        assert ours.dtype == ref.dtype and (ours != ref).nnz == 0
        ours = ours.toarray()
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours, np.histogram2d(a, b, bins=(np.unique(a).size, np.unique(b).size))[0])
    dense_eps = tm.contingency_matrix(a, b, eps=0.5)
    np.testing.assert_array_equal(dense_eps, skc.contingency_matrix(a, b, eps=0.5))
    assert tm.contingency_matrix(a, b, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("form", ["dense", "csr", "coo"])
def test_mutual_info_of_a_given_contingency(form):
    a, b = labelings(11)
    C = skc.contingency_matrix(a, b)
    C = {"dense": C, "csr": sp.csr_matrix(C), "coo": sp.coo_matrix(C)}[form]
    assert same(tm.mutual_info_score(None, None, contingency=C), skc.mutual_info_score(None, None, contingency=C))


def test_mutual_info_sums_in_scikit_learns_cell_order():
    """Separating: the MI of the same cells summed in column-major order
    (another valid order) differs in bits from scikit-learn on these data,
    while the row-major order used here matches it."""
    cases = [labelings(s, n=3000, ka=40, kb=40) for s in range(5)]
    refs = [skc.mutual_info_score(a, b) for a, b in cases]

    def check(order):
        for (a, b), ref in zip(cases, refs):
            t = _cluster._host_table(a, b)
            o = order(t)
            mi = _cluster._mi_of_cells(t.rows[o], t.cols[o], t.counts[o], t.counts.sum(), t.row_sums, t.col_sums)
            assert bits(np.float64(mi)) == bits(np.float64(ref))

    assert_separates(check, right=lambda t: np.arange(t.counts.size),
                     wrong=lambda t: np.lexsort((t.rows, t.cols)), what="MI cell order")


def test_integer_overflow_cases_stay_finite():
    x = np.repeat([1, 2, 3, 4, 5], [55161, 15453, 3475, 853, 336])
    y = np.concatenate([np.repeat([0, 1], c) for c in [(52632, 2529), (14660, 793), (3271, 204), (814, 39),
                                                       (316, 20)]])
    assert np.isfinite(tm.mutual_info_score(x, y)) and np.isfinite(tm.fowlkes_mallows_score(x, y))
    assert same(tm.fowlkes_mallows_score(x, y), skc.fowlkes_mallows_score(x, y))
    rng = np.random.RandomState(0)
    a, b = rng.randint(0, 2, 100_000, dtype=np.int8), rng.randint(0, 2, 100_000, dtype=np.int8)
    assert same(tm.adjusted_rand_score(a, b), skc.adjusted_rand_score(a, b))


@pytest.mark.parametrize("a,b", [([], []), ([0], [0]), ([1, 1, 1], [0, 0, 0]), ([0, 1, 2], [0, 0, 0]),
                                 ([0, 1, 2, 3], [0, 1, 2, 3])])
def test_edge_cases_match(a, b):
    for name in SCORES:
        with np.errstate(all="ignore"):
            try:
                ref = getattr(skc, name)(a, b)
            except ValueError as e:  # scikit-learn's own error (e.g. log(0) of empty labels): the same here
                with pytest.raises(type(e)):
                    getattr(tm, name)(a, b)
                continue
            assert same(getattr(tm, name)(a, b), ref), name


@pytest.mark.parametrize("name", SCORES)
def test_bad_input(name):
    f = getattr(tm, name)
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[2, 3\]"):
        f([0, 1], [1, 1, 1])
    with pytest.raises(ValueError, match=r"labels_true must be 1D: shape is \(2"):
        f([[0, 1], [1, 0]], [1, 1, 1])
    with pytest.raises(ValueError, match=r"labels_pred must be 1D: shape is \(2"):
        f([0, 1, 0], [[1, 1], [0, 0]])


def test_bad_parameters():
    with pytest.raises(ValueError, match="Cannot set 'eps' when sparse=True"):
        tm.contingency_matrix([0, 1], [0, 1], eps=1e-10, sparse=True)
    with pytest.raises(InvalidParameterError, match="beta"):
        tm.v_measure_score([0, 1], [0, 1], beta=-1)
    with pytest.raises(InvalidParameterError, match="average_method"):
        tm.normalized_mutual_info_score([0, 1], [0, 1], average_method="median")
    with pytest.warns(UserWarning, match="Clustering metrics expects discrete values"):
        tm.adjusted_rand_score([0.5, 1.5], [0, 1])


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("name", SCORES)
def test_device_labels_give_the_host_bits(lib, name):
    a, b = labelings(5, n=4000)
    da, db = to_device(lib, a), to_device(lib, b)
    assert same(getattr(tm, name)(da, db), getattr(skc, name)(a, b))
    sparse = tm.contingency_matrix(da, db, sparse=True)
    assert (sparse != skc.contingency_matrix(a, b, sparse=True)).nnz == 0
