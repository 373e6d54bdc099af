"""What a benchmark is made of, and the registry that holds them.

A :class:`Workload` names the data (a generator and its size per suite), the
estimator with its parameters, the operations timed, the quality metric and the
peers that run beside twinlearn. Adding a workload is one ``register(Workload(...))``
call in :mod:`bench.workloads`; a workload whose twinlearn estimator does not
exist yet is reported as "not implemented" while its peers still run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

#: Suites, smallest first. "smoke" is for the harness's own tests; "quick" uses
#: the "cpu" or "cuda" scale depending on the device; "full" adds the workloads
#: beyond the speed targets and scaling sweeps.
SUITES = ("smoke", "quick", "full")


@dataclass(frozen=True)
class Scale:
    """The size of a workload: rows x cols, plus workload-specific sizes
    (``extra``: number of clusters, queries, boosting rounds...)."""

    rows: int
    cols: int
    extra: Mapping[str, Any] = field(default_factory=dict)

    def with_rows(self, rows: int) -> "Scale":
        return replace(self, rows=int(rows))

    def key(self) -> tuple:
        return (self.rows, self.cols, tuple(sorted(self.extra.items())))

    def as_dict(self) -> dict:
        return {"rows": self.rows, "cols": self.cols, **self.extra}


@dataclass(frozen=True)
class Step:
    """One timed call: ``estimator.<method>(*data[args])``."""

    method: str
    args: tuple[str, ...] = ("X",)


FIT = Step("fit")
FIT_XY = Step("fit", ("X", "y"))
FIT_TRANSFORM = Step("fit_transform")


@dataclass(frozen=True)
class Quality:
    """A quality metric: ``fn(evaluation) -> {name: value}``; ``primary`` is the
    value shown in tables."""

    fn: Callable[[Any], dict]
    primary: str
    higher_is_better: bool
    description: str


@dataclass(frozen=True)
class PeerArgs:
    """What a peer's builder gets: the resolved shared parameters, the scale,
    the host data and where the benchmark runs."""

    params: Mapping[str, Any]
    scale: Scale
    data: Any
    device: str  # 'cpu' or 'cuda:0'

    @property
    def gpu(self) -> bool:
        return self.device != "cpu"


@dataclass(frozen=True)
class Peer:
    """A contender from another library.

    module: the import name whose absence makes the peer "absent".
    build: ``build(PeerArgs) -> estimator`` with the workload's step methods.
    input: 'numpy', 'device' (CuPy or PyTorch array on the GPU) or 'torch'
        (a torch tensor on the benchmark's device, CPU or GPU).
    gpu_only: not run on a CPU-only benchmark.
    note: ``note(PeerArgs) -> str`` shown beside the result (e.g. 'GPU').
    """

    name: str
    module: str
    build: Callable[[PeerArgs], Any]
    input: str = "numpy"
    gpu_only: bool = False
    note: Callable[[PeerArgs], str] | None = None


ParamSpec = Mapping[str, Any] | Callable[[Scale, Any], Mapping[str, Any]]


@dataclass(frozen=True)
class Workload:
    """One benchmark.

    name: identifier for ``--only`` (snake_case).
    title: format string for tables; fields: rows (as '2M'), cols, dtype, and
        the keys of the scale's ``extra``.
    data: ``data(scale, seed, dtype) -> Dataset`` (see bench.datasets).
    scales: the size per suite: 'smoke', 'cpu' (quick suite on the CPU) and
        'cuda' (quick suite on a GPU); the full suite sweeps rows from there.
    estimator: twinlearn class path under the package ('cluster.KMeans'),
        or a factory ``f(**params, device=, numeric_mode=)`` of an object with
        the step methods (a function workload: :class:`bench.metric_workloads.MetricCall`);
        None when twinlearn has no counterpart.
    sklearn: 'sklearn.<module>.<Class>' or a factory ``f(**params)``; None for none.
    params: parameters given to twinlearn and scikit-learn (a dict, or
        ``f(scale, data) -> dict`` when they depend on the size or the data).
    twinlearn_params / sklearn_params: added for that library only (same forms).
    sklearn_variants: further scikit-learn contenders, label -> extra params.
    baseline: the library the ``sklearn`` slot runs, as records and tables
        name it (its distribution name: 'statsmodels', 'umap-learn'); the
        speedup column is against it.
    variants_suites: the suites that run the variants (all by default).
    steps: the calls timed, in order, on a fresh estimator for every run.
    quality: the metric, computed on the last run's outputs.
    peers: contenders from other libraries.
    kind: 'estimator', or 'accel' (plain scikit-learn against the same code
        under twinlearn.accelerate).
    suites: the suites that include the workload.
    sweep: whether the full suite sweeps its rows.
    mem_factor: memory needed per byte of X, to size the sweep.
    """

    name: str
    title: str
    data: Callable[..., Any]
    scales: Mapping[str, Scale]
    estimator: str | None
    sklearn: str | Callable[..., Any] | None
    steps: tuple[Step, ...]
    quality: Quality | None
    params: ParamSpec = field(default_factory=dict)
    twinlearn_params: ParamSpec = field(default_factory=dict)
    sklearn_params: ParamSpec = field(default_factory=dict)
    sklearn_variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    variants_suites: frozenset = frozenset(SUITES)
    baseline: str = "scikit-learn"
    peers: tuple[Peer, ...] = ()
    kind: str = "estimator"
    suites: frozenset = frozenset(SUITES)
    sweep: bool = True
    mem_factor: float = 4.0
    dtype: str = "float32"
    seed: int = 0

    def scale_for(self, suite: str, device: str) -> Scale:
        if suite == "smoke":
            return self.scales["smoke"]
        return self.scales["cpu" if device == "cpu" else "cuda"]

    def resolve_params(self, scale: Scale, data, library: str | None = None) -> dict:
        """The shared parameters, plus those of `library` ('twinlearn' or 'sklearn')."""
        out = dict(_resolve(self.params, scale, data))
        if library is not None:
            out.update(_resolve(getattr(self, f"{library}_params"), scale, data))
        return out

    def format_title(self, scale: Scale, rows: str | None = None) -> str:
        """The title at `scale`; `rows` replaces the row count (e.g. 'N')."""
        extra = {k: human_rows(v) if type(v) is int else v for k, v in scale.extra.items()}
        rows = human_rows(scale.rows) if rows is None else rows
        return self.title.format(rows=rows, cols=scale.cols, dtype=self.dtype, **extra)


def _resolve(spec: ParamSpec, scale: Scale, data) -> Mapping[str, Any]:
    return spec(scale, data) if callable(spec) else spec


def human_rows(n: int) -> str:
    """2000000 -> '2M', 200000 -> '200k', 1048576 -> '1,048,576', 64 -> '64'."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return f"{n:,}"


REGISTRY: dict[str, Workload] = {}


def register(workload: Workload) -> Workload:
    if workload.name in REGISTRY:
        raise ValueError(f"workload {workload.name!r} is registered twice")
    for suite in ("smoke", "cpu", "cuda"):
        if suite not in workload.scales:
            raise ValueError(f"workload {workload.name!r} has no {suite!r} scale")
    REGISTRY[workload.name] = workload
    return workload


def accelerated(base: Workload, name: str | None = None, **changes) -> Workload:
    """The accelerated-scikit-learn twin of `base`: its scikit-learn code run
    plain and under ``twinlearn.accelerate``. `changes` replace fields."""
    fields = {
        "name": name or f"accel_{base.name}",
        "title": f"{base.title} (scikit-learn code, accelerated)",
        "kind": "accel",
        "estimator": None,
        "peers": (),
        "sklearn_variants": {},
        "sweep": False,
    }
    fields.update(changes)
    return replace(base, **fields)


def select(names: list[str] | None, suite: str) -> list[Workload]:
    """The registered workloads of `suite`, or those named (in registry order)."""
    if not names:
        return [w for w in REGISTRY.values() if suite in w.suites]
    wanted = [n.strip().lower() for n in names if n.strip()]
    unknown = [n for n in wanted if n not in REGISTRY]
    if unknown:
        raise KeyError(
            f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(REGISTRY)}"
        )
    return [w for n, w in REGISTRY.items() if n in wanted]
