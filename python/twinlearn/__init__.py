"""twinlearn: GPU machine learning with scikit-learn shapes and a numeric
contract chosen per estimator (fast, deterministic, identical).

The CPU backend is always available; the CUDA backend is loaded on first use.
``twinlearn.accelerate`` (and the rest of :mod:`twinlearn.accel`) runs
unchanged scikit-learn code on twinlearn.
"""

from __future__ import annotations

import os as _os

from ._version import get_version as _get_version

from ._config import (
    config_context,
    get_config,
    get_device,
    get_n_threads,
    get_numeric_mode,
    set_device,
    set_n_threads,
    set_numeric_mode,
)
from ._info import device_info, show_versions, vendor
# Every estimator of every family, at top level: a family's __init__ lists its
# estimators in __all__ and they appear here without a second list.
from . import linalg  # noqa: F401  (twinlearn.linalg.matmul, twinlearn.linalg.gram)
from . import cluster, decomposition, ensemble, linear_model, naive_bayes, neighbors, preprocessing
from .cluster import *  # noqa: F403
from .decomposition import *  # noqa: F403
from .ensemble import *  # noqa: F403
from .linear_model import *  # noqa: F403
from .naive_bayes import *  # noqa: F403
from .neighbors import *  # noqa: F403
from .preprocessing import *  # noqa: F403
from . import gaussian_process
from .gaussian_process import *  # noqa: F403
from . import svm
from .svm import *  # noqa: F403
from . import manifold
from .manifold import *  # noqa: F403
from . import tsa  # noqa: F401,E402  (time-series models)
from .tsa import *  # noqa: F403
from . import nn  # noqa: F401,E402  (optimizers: torch.optim-shaped, not estimators)
from .accel import accelerate  # noqa: E402  (after the estimators it wraps)

# git describe in a checkout, the build's record in a wheel (twinlearn/_version.py)
__version__ = _get_version()

_FAMILIES = (cluster, decomposition, ensemble, linear_model, naive_bayes, neighbors, preprocessing)
_FAMILIES += (gaussian_process,)
_FAMILIES += (svm,)
_FAMILIES += (manifold,)
_FAMILIES += (tsa,)

__all__ = sorted(n for f in _FAMILIES for n in f.__all__ if n[0].isupper()) + [
    "accelerate",
    "config_context",
    "device_info",
    "get_config",
    "get_device",
    "get_n_threads",
    "get_numeric_mode",
    "set_device",
    "set_n_threads",
    "set_numeric_mode",
    "show_versions",
    "vendor",
    "__version__",
]

# TWINLEARN_ACCEL=1: install the scikit-learn accelerator (the .pth file a
# wheel installs does it at interpreter start; this covers importing twinlearn
# from a source tree).
from .accel import _boot

if _boot.wanted(_os.environ):
    from .accel import install as _install_accel

    _install_accel()
del _boot
