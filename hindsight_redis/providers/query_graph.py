"""The contextual model's query graph: the same MiniLM with int8 matrix products.

The shipped model stores int8 weights but computes in float32 (the weights
are dequantised when the session loads), so embedding one short query reads
some 88 MB of float32 weights: 4-8 ms on one core here, most of a hybrid
search. The query graph is the same model with dynamically quantised matrix
products (onnxruntime's ``quantize_dynamic``: int8 weights per output
channel, int8 activations): a quarter of the bytes and the CPU's int8
kernels, about 2 ms, and a vector within cosine 0.995 of the full graph's
(measured on LoCoMo questions: benchmarks/README.md, search speed). Its
activations are quantised per batch, so it is meant for one text per call,
as a search embeds its query.

Documents keep the full graph (the refiner embeds batches, where compute,
not weight reads, sets the pace), so stored vectors do not change and the
query graph shares the model id. It is built once from the model file
(about 3 s: fold the weights to float32, then quantise) and cached under the
user's cache directory, keyed by the model file and onnxruntime's version;
building needs the ``onnx`` package. Where it cannot be built, queries use
the full graph (one warning).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

_RECIPE = "dynamic-int8-per-channel-first-ffn-out-float-3"
# Feed-forward output products kept float32, from the first layer on: an early
# error travels through every later layer (measured: benchmarks/README.md).
_FLOAT_FEED_FORWARD_LAYERS = 2


def cache_dir() -> Path:
    """Where built graphs are kept: ``$HINDSIGHT_CACHE_DIR``, else under ``$XDG_CACHE_HOME``
    or ~/.cache."""
    configured = os.environ.get("HINDSIGHT_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hindsight-redis"


def _cache_key(model_path: Path) -> str:
    import onnxruntime as ort

    stat = model_path.stat()
    ident = f"{model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{ort.__version__}|{_RECIPE}"
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def query_graph(model_path: Path) -> Path | None:
    """The query graph of ``model_path``: cached, or built now; None where it cannot be built."""
    try:
        target = cache_dir() / f"minilm-query-{_cache_key(model_path)}.onnx"
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        build(model_path, target)
        return target
    except ImportError as e:
        logger.warning(
            "queries use the full contextual graph (~3x slower): building the int8 query "
            "graph needs the onnx package (%s)",
            e,
        )
    except Exception as e:  # onnx/onnxruntime raise plain errors; an unwritable cache
        logger.warning(
            "queries use the full contextual graph (~3x slower): cannot build the int8 "
            "query graph in %s: %s",
            cache_dir(),
            e,
        )
    return None


def build(model_path: Path, target: Path) -> None:
    """Write the query graph of ``model_path`` to ``target`` (atomically: a temp file, renamed)."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        folded = Path(work) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3  # ORT warns that folded graphs are machine-specific
        ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        quantized = Path(work) / "query.onnx"
        advice = _DropAdvice()
        logging.getLogger().addFilter(advice)  # quantize_dynamic logs on the root logger
        try:
            quantize_dynamic(
                folded, quantized, weight_type=QuantType.QInt8, per_channel=True,
                nodes_to_exclude=_feed_forward_outputs(folded)[:_FLOAT_FEED_FORWARD_LAYERS],
            )  # fmt: skip
        finally:
            logging.getLogger().removeFilter(advice)
        os.replace(quantized, target)
    logger.info("built the int8 query graph of %s in %s", model_path.name, target)


def _feed_forward_outputs(model_path: Path) -> list[str]:
    """The matrix products that read a GELU's output (the feed-forward layers' second
    product), in graph order: their inputs have the widest range."""
    import onnx

    graph = onnx.load(str(model_path)).graph
    widths = {i.name: tuple(i.dims) for i in graph.initializer}
    return [
        node.name
        for node in graph.node
        if node.op_type == "MatMul" and len(widths.get(node.input[1], ())) == 2
        and widths[node.input[1]][0] > widths[node.input[1]][1]
    ]  # fmt: skip


class _DropAdvice(logging.Filter):
    """Drops what the quantiser logs on the root logger: its progress, and advice for
    calibrated models ("consider pre-processing")."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "root":
            return True
        advice = str(record.msg).startswith("Please consider to run pre-processing")
        return record.levelno >= logging.WARNING and not advice
