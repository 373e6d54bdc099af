"""twinlearn quick start: gradient-boosted trees on HIGGS-shaped data.

Trains twinlearn's GradientBoosting on the best device here, prints its fit
time beside scikit-learn's HistGradientBoostingClassifier (same trees, depth
and learning rate), the test accuracy of both, and checks that the CPU and
GPU backends build the same model, to the bit, in identical mode.
"""

import os
import sys
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import accuracy_score, roc_auc_score

import twinlearn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from gbdt_quick import higgs_like  # noqa: E402  (the benchmark's data generator)

on_gpu = twinlearn.vendor() == "cuda"
info = twinlearn.device_info()
print(f"twinlearn {twinlearn.__version__} on "
      + (info["gpus"][0]["name"] if on_gpu else f"the CPU backend ({info['cuda_reason']})"))

# Full HIGGS shape on a GPU; a smaller set on a CPU so the demo stays short.
n_rows, n_trees = (2_000_000, 200) if on_gpu else (200_000, 100)
X, y = higgs_like(n_rows + 200_000, seed=0)
X_train, y_train, X_test, y_test = X[:n_rows], y[:n_rows], X[n_rows:], y[n_rows:]
print(f"data: {n_rows:,} x {X.shape[1]} float32, {n_trees} trees of depth 6")

model = twinlearn.GradientBoosting(loss="Logloss", n_estimators=n_trees, max_depth=6, learning_rate=0.1)
t = time.perf_counter()
model.fit(X_train, y_train)
t_ours = time.perf_counter() - t
p_ours = model.predict_proba(X_test)[:, 1]

ref = HistGradientBoostingClassifier(max_iter=n_trees, max_depth=6, learning_rate=0.1, early_stopping=False)
t = time.perf_counter()
ref.fit(X_train, y_train)
t_ref = time.perf_counter() - t
p_ref = ref.predict_proba(X_test)[:, 1]

print(f"fit time:  twinlearn {t_ours:.2f} s ({model.device_used()}, {model.numeric_mode_used()}), "
      f"scikit-learn HistGradientBoosting {t_ref:.2f} s")
for name, p in (("twinlearn", p_ours), ("scikit-learn", p_ref)):
    print(f"{name:>12}: test accuracy {accuracy_score(y_test, p > 0.5):.4f}, AUC {roc_auc_score(y_test, p):.4f}")

# Identity: the same model from the CPU backend and the GPU, in identical mode.
if on_gpu:
    Xs, ys = X_train[:100_000], y_train[:100_000]
    models = [twinlearn.GradientBoosting(n_estimators=50, learning_rate=0.1, device=d, numeric_mode="identical")
              .fit(Xs, ys) for d in ("cpu", "cuda")]
    same = models[0].predict_proba(X_test).tobytes() == models[1].predict_proba(X_test).tobytes()
    print("CPU and GPU models bit-identical (identical mode, 50 trees, 100k rows):", same)
else:
    print("CPU-versus-GPU identity check: skipped (no GPU here)")
