"""twinlearn's benchmark harness.

Run ``python -m bench`` (with ``PYTHONPATH=python:.``) or ``make bench``; see
``python -m bench --help`` and docs/BENCHMARKS.md. The pieces:

- registry: Workload / Scale / Step / Quality / Peer, and the registry itself
- workloads: the registered workloads (add new ones there)
- datasets, metrics, peers: data generators, quality metrics, other libraries
- contenders, runner: who runs, and how runs are timed
- environment, report, plots: where it ran, the JSON and Markdown, the PNGs
"""
