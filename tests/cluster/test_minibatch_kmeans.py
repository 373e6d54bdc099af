import warnings

import numpy as np
import pytest
from sklearn.cluster import MiniBatchKMeans as SkMiniBatchKMeans
from sklearn.datasets import make_blobs
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn.cluster import KMeans, MiniBatchKMeans
from twinlearn.testing import bits


def blobs(n=20000, d=8, centers=10, dtype=np.float64, seed=0):
    return make_blobs(n_samples=n, n_features=d, centers=centers, random_state=seed)[0].astype(dtype)


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(
            MiniBatchKMeans(n_clusters=2, n_init=2, max_iter=5, batch_size=10, device="cpu"),
            expected_failed_checks={
                # Waived for scikit-learn's own MiniBatchKMeans too: batches are
                # drawn by weight, which is not the same as repeating samples.
                "check_sample_weight_equivalence_on_dense_data": (
                    "sample_weight is not equivalent to removing/repeating samples."
                ),
            },
        )


def test_quality_like_scikit_learn(device):
    X = blobs()
    ours = MiniBatchKMeans(10, random_state=0, device=device).fit(X)
    ref = SkMiniBatchKMeans(10, random_state=0).fit(X)
    full = KMeans(10, random_state=0, device=device).fit(X)
    assert ours.inertia_ <= 1.1 * max(ref.inertia_, full.inertia_)
    np.testing.assert_array_equal(ours.labels_, ours.predict(X))
    assert ours.n_iter_ == int(np.ceil(ours.n_steps_ * 1024 / X.shape[0]))
    assert ours.numeric_mode_used() == "identical"


def test_random_init_quality_like_scikit_learn():
    # Random init often lands in poor local minima, for scikit-learn too:
    # compare medians over seeds.
    X = blobs()
    ours = np.median([MiniBatchKMeans(10, init="random", random_state=s, device="cpu").fit(X).inertia_
                      for s in range(5)])
    ref = np.median([SkMiniBatchKMeans(10, init="random", random_state=s).fit(X).inertia_ for s in range(5)])
    assert ours <= 1.5 * ref


def test_same_bits_run_to_run_and_any_thread_count():
    X = blobs(dtype=np.float32)
    w = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    with twinlearn.config_context(n_threads=1):
        a = MiniBatchKMeans(10, random_state=3, device="cpu").fit(X, sample_weight=w)
    with twinlearn.config_context(n_threads=4):
        b = MiniBatchKMeans(10, random_state=3, device="cpu").fit(X, sample_weight=w)
    assert bits(a.cluster_centers_) == bits(b.cluster_centers_) and a.n_steps_ == b.n_steps_
    c = MiniBatchKMeans(10, random_state=4, device="cpu").fit(X, sample_weight=w)
    assert bits(c.cluster_centers_) != bits(a.cluster_centers_)  # the seed matters


def test_partial_fit(device):
    X = blobs()
    est = MiniBatchKMeans(10, random_state=0, device=device)
    for chunk in np.array_split(X, 20):
        est.partial_fit(chunk)
    assert est.n_steps_ == 20
    ref = SkMiniBatchKMeans(10, random_state=0).fit(X)
    assert -est.score(X) <= 1.2 * ref.inertia_
    with pytest.raises(ValueError, match="X has 3 features"):
        est.partial_fit(np.ones((5, 3)))


def test_partial_fit_after_fit_reassigns(device):
    # partial_fit continuing a fit reassigns low-count centers with the fit's seed.
    X = blobs(n=3000, centers=4)
    est = MiniBatchKMeans(4, random_state=0, reassignment_ratio=0.9, device=device).fit(X)
    for chunk in np.array_split(X, 30):
        est.partial_fit(chunk)
    assert est.cluster_centers_.shape == (4, X.shape[1]) and np.all(np.isfinite(est.cluster_centers_))


def test_reassignment_of_low_count_centers(device):
    X = blobs(n=5000, centers=4)
    init = np.vstack([X[:4], np.full((2, X.shape[1]), 1e4)])  # two centers nobody picks
    est = MiniBatchKMeans(6, init=init, n_init=1, random_state=0, reassignment_ratio=0.1, device=device).fit(X)
    assert np.all(np.abs(est.cluster_centers_) < 1e3)  # the far centers were moved onto data


def test_bad_input(device):
    with pytest.raises(ValueError, match="should be >= n_clusters"):
        MiniBatchKMeans(5, device=device).fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        MiniBatchKMeans(2, device=device).fit(np.array([[np.nan, 1.0]] * 4))
    with pytest.raises(ValueError, match="batch_size"):
        MiniBatchKMeans(2, batch_size=0, device=device).fit(np.ones((4, 2)))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_cpu_and_gpu_give_identical_bits(dtype, weighted):
    X = blobs(n=30000, d=12, centers=20, dtype=dtype)
    w = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    c = MiniBatchKMeans(20, random_state=0, device="cpu", numeric_mode="identical").fit(X, sample_weight=w)
    g = MiniBatchKMeans(20, random_state=0, device="cuda", numeric_mode="identical").fit(X, sample_weight=w)
    assert bits(c.cluster_centers_) == bits(g.cluster_centers_)
    assert bits(c.labels_) == bits(g.labels_)
    assert c.inertia_ == g.inertia_ and c.n_steps_ == g.n_steps_


def test_unit_weights_are_no_weights(device):
    # Batches are drawn in proportion to the weights; with unit weights that
    # is the uniform draw, and the fit equals the unweighted one bit for bit.
    X = blobs(n=3000, dtype=np.float32)
    a = MiniBatchKMeans(10, random_state=5, device=device).fit(X)
    b = MiniBatchKMeans(10, random_state=5, device=device).fit(X, sample_weight=np.ones(X.shape[0]))
    assert bits(a.cluster_centers_) == bits(b.cluster_centers_)
    assert a.inertia_ == b.inertia_ and a.n_steps_ == b.n_steps_
