"""The contextual model's query graph: latency of one query and closeness to the full graph.

Builds the variants of ``providers.query_graph`` into a temporary directory
(the full graph as shipped: int8 weights, float32 compute; dynamic int8 per
tensor; per output channel; per channel with every feed-forward output
product kept float32; per channel with the first two layers' feed-forward
output products float32, on the exported ops and on the fused graph of
``providers.bert_graph``, the default) and embeds LoCoMo questions one at a
time with each, on 1 thread, in turn (same run, same machine state).
Printed: p50/p90 ms per query and the cosine of each vector with the full
graph's (mean, min).

Run:  python benchmarks/query_graph.py [--questions 300]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hindsight_redis.providers import query_graph
from hindsight_redis.providers.contextual import MiniLMEmbedder, _default_model_path

from common import locomo_path, percentile


def _variants(work: Path) -> dict[str, Path]:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source = _default_model_path()
    folded = work / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    out = {"full graph (shipped)": source}
    outputs = query_graph._feed_forward_outputs(folded)
    for name, per_channel, excluded in (
        ("dynamic int8, per tensor", False, []),
        ("per channel", True, []),
        ("per channel, all 6 feed-forward outputs float32", True, outputs),
        ("per channel, first 2 feed-forward outputs float32 (exported ops)", True, outputs[:2]),
    ):
        target = work / f"{len(out)}.onnx"
        quantize_dynamic(
            folded, target, weight_type=QuantType.QInt8, per_channel=per_channel,
            nodes_to_exclude=excluded,
        )  # fmt: skip
        out[name] = target
    default = work / "default.onnx"
    query_graph.build(source, default)
    out["the same, fused operators (default: bert_graph)"] = default
    return out


def main() -> None:
    """Build the variants, time them on LoCoMo questions, print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--questions", type=int, default=300)
    args = parser.parse_args()
    data: list[dict[str, Any]] = json.loads(locomo_path().read_text())
    questions = [qa["question"] for conv in data for qa in conv["qa"]][: args.questions]
    with tempfile.TemporaryDirectory() as tmp:
        variants = _variants(Path(tmp))
        reference: np.ndarray | None = None
        print("| query graph | p50 ms | p90 ms | cosine to full, mean / min |")
        print("|---|---:|---:|---:|")
        for name, path in variants.items():
            embedder = MiniLMEmbedder(model_path=path)
            embedder.embed_sync(questions[:10])
            times, rows = [], []
            for question in questions:
                t0 = time.perf_counter()
                rows.append(embedder.embed_sync([question])[0])
                times.append((time.perf_counter() - t0) * 1000)
            vectors = np.stack(rows)
            if reference is None:
                reference = vectors
            cos = (vectors * reference).sum(axis=1)
            print(
                f"| {name} | {percentile(times, 50):.2f} | {percentile(times, 90):.2f} "
                f"| {cos.mean():.4f} / {cos.min():.4f} |"
            )


if __name__ == "__main__":
    main()
