"""
Numeric modes: what is asked, what is delivered
===============================================

Every estimator takes a ``numeric_mode``: ``identical`` promises the same
bits on the CPU backend and on any supported GPU, whatever the thread count;
``deterministic`` the same bits run to run on one device and build; ``fast``
nothing beyond accuracy. :meth:`numeric_mode_used` reports what a fit
delivered: a stronger mode may serve a weaker request, never the reverse.
On the CPU backend the estimators below deliver ``identical`` whatever is
asked (on a GPU ``fast`` may use atomics and vendor BLAS instead).

Below, a :class:`~twinlearn.preprocessing.StandardScaler` and a
:class:`~twinlearn.cluster.KMeans` are fitted in each mode with 1 and 2
threads, and the scaler's means are compared with the exactly rounded means
(:func:`math.fsum`), in units in the last place, beside NumPy's.
"""

import math

import matplotlib.pyplot as plt
import numpy as np

import twinlearn
from twinlearn.testing import same_bits, ulp_distance

rng = np.random.default_rng(0)
X = (rng.standard_normal((200_000, 16)) * np.logspace(-3, 3, 16) + 10.0).astype(np.float32)
X64 = X.astype(np.float64)
exact = np.array([math.fsum(col) / len(col) for col in X64.T])

for mode in ("fast", "deterministic", "identical"):
    fits = []
    for n_threads in (1, 2):
        with twinlearn.config_context(device="cpu", n_threads=n_threads):
            sc = twinlearn.StandardScaler(numeric_mode=mode).fit(X)
            km = twinlearn.KMeans(n_clusters=8, random_state=0, numeric_mode=mode).fit(X[:20_000])
        fits.append((sc.mean_, km.cluster_centers_))
    same = all(same_bits(a, b) for a, b in zip(*fits))
    print(f"asked {mode:>13}: StandardScaler delivered {sc.numeric_mode_used()}, "
          f"KMeans {km.numeric_mode_used()}; 1 and 2 threads give the same bits: {same}")

# %%
# Accuracy is a separate matter from identity: the canonical reductions sum
# in a fixed order, and the result stays within a few ulp of the exactly
# rounded mean, as NumPy's pairwise sum does.
tl_ulp = ulp_distance(sc.mean_, exact)
np_ulp = ulp_distance(X64.mean(axis=0), exact)
fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
cols = np.arange(X.shape[1])
ax.bar(cols - 0.2, tl_ulp, 0.4, label="twinlearn StandardScaler.mean_")
ax.bar(cols + 0.2, np_ulp, 0.4, label="NumPy mean (float64)")
ax.set_xlabel("column")
ax.set_ylabel("ulp from the exact mean")
ax.set_ylim(0, max(tl_ulp.max(), np_ulp.max()) + 1.5)
ax.set_yticks(range(int(ax.get_ylim()[1]) + 1))
ax.legend(loc="upper left")
ax.set_title("Column means of float32 data, 200k rows")
plt.show()
