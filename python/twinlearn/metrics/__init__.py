"""Metrics: pairwise distances on the CPU and CUDA backends."""

from ._pairwise import pairwise_distances, pairwise_distances_argmin, pairwise_distances_argmin_min

__all__ = ["pairwise_distances", "pairwise_distances_argmin", "pairwise_distances_argmin_min"]

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
