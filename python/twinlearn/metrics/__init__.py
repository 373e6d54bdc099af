"""Metrics with scikit-learn's signatures on the CPU and CUDA backends: pairwise
distances, classification, regression, ranking and clustering scores, and
pairwise kernels."""

from ._pairwise import pairwise_distances, pairwise_distances_argmin, pairwise_distances_argmin_min

__all__ = ["pairwise_distances", "pairwise_distances_argmin", "pairwise_distances_argmin_min"]

# -- classification, regression and ranking (scikit-learn's names and signatures) --
from ._classification import (  # noqa: E402
    accuracy_score,
    balanced_accuracy_score,
    brier_score_loss,
    classification_report,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    fbeta_score,
    hinge_loss,
    log_loss,
    matthews_corrcoef,
    multilabel_confusion_matrix,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
)
from ._ranking import (  # noqa: E402
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
    top_k_accuracy_score,
)
from ._regression import (  # noqa: E402
    d2_absolute_error_score,
    d2_pinball_score,
    d2_tweedie_score,
    explained_variance_score,
    max_error,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_gamma_deviance,
    mean_pinball_loss,
    mean_poisson_deviance,
    mean_squared_error,
    mean_tweedie_deviance,
    median_absolute_error,
    r2_score,
    root_mean_squared_error,
)

__all__ += [
    "accuracy_score", "balanced_accuracy_score", "brier_score_loss", "classification_report", "cohen_kappa_score",
    "confusion_matrix", "f1_score", "fbeta_score", "hinge_loss", "log_loss", "matthews_corrcoef",
    "multilabel_confusion_matrix", "precision_recall_fscore_support", "precision_score", "recall_score",
    "average_precision_score", "precision_recall_curve", "roc_auc_score", "roc_curve", "top_k_accuracy_score",
    "d2_absolute_error_score", "d2_pinball_score", "d2_tweedie_score", "explained_variance_score", "max_error",
    "mean_absolute_error", "mean_absolute_percentage_error", "mean_gamma_deviance", "mean_pinball_loss",
    "mean_poisson_deviance", "mean_squared_error", "mean_tweedie_deviance", "median_absolute_error", "r2_score",
    "root_mean_squared_error",
]
from . import _classification as _cls, _ranking as _rank, _regression as _reg  # noqa: E402

#: docs/SUPPORT_MATRIX.md's rows of these functions (twinlearn.accel._matrix reads every SUPPORT_* here).
SUPPORT_CLASSIFICATION_REGRESSION_RANKING = {**_cls.SUPPORT, **_rank.SUPPORT, **_reg.SUPPORT}
# -- end classification, regression and ranking --
# -- clustering metrics, trustworthiness and pairwise kernels ----------------------
from ._cluster import (  # noqa: E402
    adjusted_mutual_info_score,
    adjusted_rand_score,
    completeness_score,
    contingency_matrix,
    fowlkes_mallows_score,
    homogeneity_completeness_v_measure,
    homogeneity_score,
    mutual_info_score,
    normalized_mutual_info_score,
    pair_confusion_matrix,
    rand_score,
    v_measure_score,
)
from ._kernels import (  # noqa: E402
    cosine_similarity,
    laplacian_kernel,
    linear_kernel,
    pairwise_kernels,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)
from ._unsupervised import (  # noqa: E402
    calinski_harabasz_score,
    davies_bouldin_score,
    silhouette_samples,
    silhouette_score,
    trustworthiness,
)

__all__ += [
    "adjusted_mutual_info_score", "adjusted_rand_score", "completeness_score", "contingency_matrix",
    "fowlkes_mallows_score", "homogeneity_completeness_v_measure", "homogeneity_score", "mutual_info_score",
    "normalized_mutual_info_score", "pair_confusion_matrix", "rand_score", "v_measure_score",
    "calinski_harabasz_score", "davies_bouldin_score", "silhouette_samples", "silhouette_score", "trustworthiness",
    "cosine_similarity", "laplacian_kernel", "linear_kernel", "pairwise_kernels", "polynomial_kernel",
    "rbf_kernel", "sigmoid_kernel",
]
