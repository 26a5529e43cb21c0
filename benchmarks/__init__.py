"""The benchmark suite: ``python -m benchmarks --list``, ``python -m benchmarks NAME [--quick]``.

Each member is a module (``SUITE`` maps its name to it) with ``SUMMARY`` (one line: what it
measures), ``add_arguments(parser)`` (its own options) and ``run(args)``, which prints its
tables and returns its figures; ``__main__`` runs one and writes them to
``benchmarks/results/NAME.json`` (``measure.write_result``). Shared by all: ``harness`` (a
Redis for the run, worker processes, memories indexed without the worker), ``locomo`` (the
LoCoMo dev file and the corpora made from it) and ``measure`` (percentiles, results).

This file imports nothing, and ``locomo`` and ``measure`` only the standard library: the peers'
adapters use those two from their own venvs.
"""

SUITE: dict[str, str] = {
    "ingest": "benchmarks.ingest",
    "search": "benchmarks.search",
    "recall": "benchmarks.recall",
    "fresh": "benchmarks.fresh",
    "assistant_log": "benchmarks.assistant_log.run",
    "filters": "benchmarks.filters",
    "contradictions": "benchmarks.contradictions",
    "secrets": "benchmarks.secrets",
    "crosslang": "benchmarks.crosslang",
    "chinese": "benchmarks.chinese",
    "poisoning": "benchmarks.poisoning",
    "load": "benchmarks.load.run",
    "soak": "benchmarks.soak.run",
    "memory": "benchmarks.memory",
    "sweep": "benchmarks.sweep",
    "tenants": "benchmarks.tenants",
    "cluster": "benchmarks.cluster",
    "failover": "benchmarks.failover",
    "peers": "benchmarks.peers.run",
}
