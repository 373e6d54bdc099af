"""What twinlearn can run on here."""

from __future__ import annotations

from . import _backend


def device_info() -> dict:
    """Backends and GPUs visible to twinlearn.

    Returns a dict with ``cpu`` (always True), ``cuda_compiled`` (the CUDA
    backend module imports), ``cuda_available`` (a GPU is usable),
    ``cuda_reason`` (why not, when it is not), ``cuda`` (runtime status) and
    ``gpus`` (name, compute capability, memory of each visible GPU).
    """
    raw = _backend.cuda_module_raw()
    info = {
        "cpu": True,
        "cuda_compiled": raw is not None,
        "cuda_available": _backend.cuda_available(),
        "cuda_reason": _backend.cuda_unavailable_reason(),
        "cuda": raw.cuda_status() if raw is not None else None,
        "gpus": raw.cuda_devices() if _backend.cuda_available() else [],
    }
    return info


def vendor() -> str:
    """'cuda' when a GPU is usable, else 'cpu'."""
    return "cuda" if _backend.cuda_available() else "cpu"
