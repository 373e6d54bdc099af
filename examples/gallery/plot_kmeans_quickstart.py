"""
KMeans in a few lines
=====================

Fit :class:`twinlearn.cluster.KMeans` on blobs, predict, and check that the
result is scikit-learn's shape: the same attributes, the same methods.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

import twinlearn

X, _ = make_blobs(n_samples=3000, centers=5, cluster_std=1.2, random_state=0)
km = twinlearn.KMeans(n_clusters=5, random_state=0).fit(X)
labels = km.predict(X)
print("device:", km.device_used(), "| numeric mode:", km.numeric_mode_used())
print("inertia:", km.inertia_, "| iterations:", km.n_iter_)

fig, ax = plt.subplots(figsize=(5, 4), layout="constrained")
ax.scatter(X[:, 0], X[:, 1], c=labels, s=4, cmap="tab10")
ax.scatter(*km.cluster_centers_.T, c="black", marker="x", s=80)
ax.set_title("twinlearn.KMeans, 5 clusters")
plt.show()
