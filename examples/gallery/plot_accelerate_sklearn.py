"""
An unchanged scikit-learn script on twinlearn
=============================================

:func:`twinlearn.accelerate` (and :func:`twinlearn.accel.install`, or
``python -m twinlearn.accel script.py``) runs scikit-learn code on twinlearn
where twinlearn serves the estimator and its parameters, and leaves the rest
to scikit-learn. Below, the scikit-learn part is an ordinary function; the
accelerator's ``threshold=0`` sends even this small input to twinlearn (by
default inputs below a measured size stay on scikit-learn, where they are
faster).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import twinlearn.accel


def sklearn_script():
    """Plain scikit-learn: nothing here knows about twinlearn."""
    X, y = make_classification(n_samples=5000, n_features=20, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=200))
    model.fit(X_train, y_train)
    return model, model.predict_proba(X_test)[:, 1], model.score(X_test, y_test)


plain_model, plain_proba, plain_score = sklearn_script()
with twinlearn.accel.accelerate_context(device="cpu", threshold=0):
    model, proba, score = sklearn_script()

for step in model.steps:
    est = step[1]
    print(f"{type(est).__name__:>20}: accelerated={twinlearn.accel.is_accelerated(est)}, "
          f"fitted on {twinlearn.accel.fitted_on(est)}")
print(f"test accuracy: scikit-learn {plain_score:.4f}, accelerated {score:.4f}")
print(f"largest probability difference: {np.max(np.abs(proba - plain_proba)):.2e}")

# %%
# The two fits agree to solver tolerance, not to the bit: they are different
# implementations of the same model.
fig, ax = plt.subplots(figsize=(4.5, 4), layout="constrained")
ax.scatter(plain_proba, proba, s=3)
ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
ax.set_xlabel("scikit-learn predict_proba")
ax.set_ylabel("accelerated predict_proba")
ax.set_title("Same script, two backends")
plt.show()
