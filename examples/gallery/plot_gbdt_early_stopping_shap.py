"""
Boosted trees: early stopping and SHAP values
=============================================

:class:`twinlearn.ensemble.GradientBoostingClassifier` takes
HistGradientBoosting's early-stopping parameters: a validation split held
out of the training rows, a score per round, and a stop once
``n_iter_no_change`` rounds bring no improvement above ``tol``. The fitted
model then explains its predictions with exact TreeSHAP
(:meth:`~twinlearn.ensemble.GradientBoostingClassifier.predict_contributions`).
Every fit delivers ``numeric_mode="identical"``: a GPU would build the same
trees, bit for bit.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

import twinlearn

X, y = make_classification(n_samples=4000, n_features=8, n_informative=4, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

clf = twinlearn.GradientBoostingClassifier(
    n_estimators=300, learning_rate=0.3, early_stopping=True, validation_fraction=0.2,
    n_iter_no_change=10, random_state=0,
).fit(X_train, y_train)
print(f"stopped after {clf.n_iter_} of {clf.n_estimators} rounds; test accuracy {clf.score(X_test, y_test):.3f}")
print("numeric mode delivered:", clf.numeric_mode_used())

# %%
# The scores early stopping watched: entry 0 is before the first tree.
fig, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
ax.plot(clf.train_score_, label="training rows")
ax.plot(clf.validation_score_, label="validation rows")
ax.set_xlabel("boosting round")
ax.set_ylabel("score (negative log loss)")
ax.legend()
ax.set_title("Early stopping")
plt.show()

# %%
# SHAP values: one column per feature plus the expected value, summing to the
# raw margin (``decision_function``) of each row.
contrib = clf.predict_contributions(X_test)
assert np.allclose(contrib.sum(axis=1), clf.decision_function(X_test))
importance = np.abs(contrib[:, :-1]).mean(axis=0)

fig, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
ax.barh([f"x{i}" for i in range(X.shape[1])], importance)
ax.invert_yaxis()
ax.set_xlabel("mean |SHAP value|")
ax.set_title("Which features drive the margin")
plt.show()
