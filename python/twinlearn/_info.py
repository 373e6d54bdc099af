"""What twinlearn can run on here, and the versions it runs with."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

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


def _installed_version(module: str) -> str | None:
    """The version of an optional package without importing it (torch takes
    seconds to import): the loaded module's, else its distribution's."""
    mod = sys.modules.get(module)
    if mod is not None and getattr(mod, "__version__", None):
        return str(mod.__version__)
    for dist in importlib.metadata.packages_distributions().get(module, []):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            continue
    return None


def versions() -> dict:
    """Versions and build facts of this installation (``twinlearn doctor``
    and :func:`show_versions` report them).

    Returns a dict: ``twinlearn`` (the package version), ``core`` (the C++
    library's release), ``python``, ``executable``, ``platform``, ``numpy``,
    ``scipy``, ``scikit-learn``, ``cupy`` and ``torch`` (None where not
    installed), ``cpu_isa`` (the instruction set the CPU backend's dispatched
    loops use), ``cuda_compiled``, ``cuda_arch`` (architectures compiled
    for), ``cuda_runtime`` and ``cuda_driver`` (CUDA's integer versions, e.g.
    13000; the runtime is the toolkit's, linked statically), ``gpus`` (the
    usable GPUs), ``gpu_unusable_reason``, ``install`` (``'wheel'`` or
    ``'source'``: :func:`install_kind`) and ``location`` (the package's folder).
    """
    from . import __version__

    core = _backend.core()
    raw = _backend.cuda_module_raw()
    status = raw.cuda_status() if raw is not None else None
    usable = _backend.cuda_available()
    return {
        "twinlearn": __version__,
        "core": core.version,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "numpy": _installed_version("numpy"),
        "scipy": _installed_version("scipy"),
        "scikit-learn": _installed_version("sklearn"),
        "cupy": _installed_version("cupy"),
        "torch": _installed_version("torch"),
        "cpu_isa": core.cpu_isa(),
        "cuda_compiled": raw is not None,
        "cuda_arch": status["arch"] if status else None,
        "cuda_runtime": status["runtime_version"] if status else None,
        "cuda_driver": status["driver_version"] if status else None,
        "install": install_kind(),
        "location": os.path.dirname(os.path.abspath(__file__)),
        "gpus": _backend.cuda().cuda_devices() if usable else [],
        "gpu_unusable_reason": None if usable else _backend.cuda_unavailable_reason(),
    }


def parse_cuda_arch(arch: str | None) -> tuple[list[int], list[int]]:
    """The architectures a build compiled for, from its ``TWINLEARN_CUDA_ARCH``
    (CMake's ``CMAKE_CUDA_ARCHITECTURES`` syntax: ``90`` is machine code and
    PTX for sm_90, ``90-real`` machine code only, ``90-virtual`` PTX only;
    entries separated by ``;``; a trailing ``a``/``f`` feature suffix is kept
    out of the number).

    Returns ``(cubins, ptx)``: the compute capabilities (as ``major * 10 +
    minor``) with machine code, and those with PTX.

    >>> parse_cuda_arch("75-real;90;120-virtual")
    ([75, 90], [90, 120])
    """
    cubins, ptx = [], []
    for entry in (arch or "").replace(",", ";").split(";"):
        entry = entry.strip()
        if not entry:
            continue
        num, _, kind = entry.partition("-")
        digits = "".join(ch for ch in num if ch.isdigit())
        if not digits:
            continue
        cc = int(digits)
        if kind in ("", "real"):
            cubins.append(cc)
        if kind in ("", "virtual"):
            ptx.append(cc)
    return sorted(set(cubins)), sorted(set(ptx))


def describe_cuda_arch(arch: str | None) -> str:
    """A build's architectures in words.

    >>> describe_cuda_arch("75-real;90;120-virtual")
    'sm_75, sm_90 machine code; compute_90, compute_120 PTX'
    """
    cubins, ptx = parse_cuda_arch(arch)
    parts = []
    if cubins:
        parts.append(", ".join(f"sm_{c}" for c in cubins) + " machine code")
    if ptx:
        parts.append(", ".join(f"compute_{c}" for c in ptx) + " PTX")
    return "; ".join(parts) or "no device code"


def gpu_code_for(compute_capability, arch: str | None) -> str | None:
    """Which of a build's device code runs on a GPU of ``compute_capability``
    (``(major, minor)``), or None when none does.

    Machine code for sm_XY runs on GPUs of the same major version and minor
    version >= Y; PTX for compute_XY is compiled by the driver for any GPU of
    capability >= XY (slower first launch).

    >>> gpu_code_for((9, 0), "90")
    'sm_90 machine code'
    >>> gpu_code_for((8, 6), "80-real;90")
    'sm_80 machine code'
    >>> gpu_code_for((10, 0), "75-real;90")
    'compute_90 PTX (compiled by the driver at first use)'
    >>> gpu_code_for((7, 5), "90") is None
    True
    """
    major, minor = int(compute_capability[0]), int(compute_capability[1])
    cc = major * 10 + minor
    cubins, ptx = parse_cuda_arch(arch)
    native = [c for c in cubins if c // 10 == major and c % 10 <= minor]
    if native:
        return f"sm_{max(native)} machine code"
    jit = [c for c in ptx if c <= cc]
    if jit:
        return f"compute_{max(jit)} PTX (compiled by the driver at first use)"
    return None


def install_kind() -> str:
    """Where this twinlearn was imported from: ``'wheel'`` (an installed
    package: its build wrote ``twinlearn/_build_version.py``) or ``'source'``
    (a checkout or a copied tree)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return "wheel" if os.path.exists(os.path.join(here, "_build_version.py")) else "source"


def _cuda_version(v: int | None) -> str:
    """CUDA's integer version (13000) as text (13.0)."""
    return f"{v // 1000}.{v % 1000 // 10}" if v else "none"


def show_versions(file=None) -> None:
    """Print twinlearn's version, its build, and the versions around it.

    For bug reports: twinlearn's version, the C++ core's release, the build
    (CUDA compiled in, the CUDA architectures and toolkit, the instruction set
    the CPU backend uses here), Python and the platform, NumPy, SciPy,
    scikit-learn, CuPy and PyTorch when installed, and the CUDA driver and
    GPUs when a GPU is usable (else why none is). ``twinlearn doctor`` reports
    the same facts and also self-checks the backends.

    Parameters
    ----------
    file : file-like, default=None
        Where to print; ``sys.stdout`` when None.

    Examples
    --------
    >>> import twinlearn
    >>> twinlearn.show_versions()  # doctest: +ELLIPSIS
    twinlearn:
        version: ...
    """
    out = sys.stdout if file is None else file
    v = versions()
    compiled = v["cuda_compiled"]
    sections = [
        ("twinlearn", [("version", v["twinlearn"]), ("C++ core", v["core"]),
                       ("installed as", f"{v['install']} ({v['location']})")]),
        ("build", [
            ("CUDA backend", "compiled in" if compiled else "not compiled in"),
            ("CUDA architectures", v["cuda_arch"] if compiled else "none"),
            ("CUDA toolkit", _cuda_version(v["cuda_runtime"]) if compiled else "none"),
            ("CPU ISA", v["cpu_isa"]),
        ]),
        ("system", [("python", v["python"]), ("executable", v["executable"]), ("platform", v["platform"])]),
        ("python dependencies", [
            (name, v[name] or "not installed") for name in ("numpy", "scipy", "scikit-learn", "cupy", "torch")
        ]),
    ]
    gpu = [("CUDA driver", _cuda_version(v["cuda_driver"]) if compiled else "none")]
    if v["gpus"]:
        for g in v["gpus"]:
            cc = ".".join(map(str, g["compute_capability"]))
            gpu.append((f"GPU {g['id']}", f"{g['name']}, compute capability {cc}, "
                                          f"{g['total_memory'] / 2**30:.1f} GiB"))
    else:
        gpu.append(("GPU", f"none usable: {v['gpu_unusable_reason']}"))
    sections.append(("gpu", gpu))
    width = max(len(k) for _, rows in sections for k, _ in rows)
    for title, rows in sections:
        print(f"{title}:", file=out)
        for k, val in rows:
            print(f"    {k + ':':<{width + 1}} {val}", file=out)
