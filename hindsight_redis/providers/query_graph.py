"""The contextual model's query graph: the same MiniLM with int8 matrix products.

The shipped model stores int8 weights but computes in float32 (the weights
are dequantised when the session loads), so embedding one short query reads
some 88 MB of float32 weights: 4-8 ms on one core here, most of a hybrid
search. The query graph is the same model rebuilt from onnxruntime's fused
transformer operators (``bert_graph``: 116 nodes instead of 442, so less
time dispatching them) with dynamically quantised matrix products
(``quantize_dynamic``: int8 weights per output channel, int8 activations):
a quarter of the bytes and the CPU's int8 kernels, about 1.8 ms, and a
vector within cosine 0.995 of the full graph's (measured on LoCoMo
questions: docs/decisions.md, "An int8 query graph"). Its activations are
quantised per batch, so it is meant for one text per call, as a search
embeds its query.

Documents keep the full graph (the refiner embeds batches, where compute,
not weight reads, sets the pace), so stored vectors do not change and the
query graph shares the model id. It is built once from the model file
(about 5 s: fold the weights to float32, fuse, check, quantise) and cached under the
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

import numpy as np

from hindsight_redis.providers import bert_graph
from hindsight_redis.providers.vectors import mean_pooled, normalize_rows

logger = logging.getLogger(__name__)

_RECIPE = "fused-dynamic-int8-per-channel-first-ffn-out-float-4"
# Feed-forward output products kept float32, from the first layer on: an early
# error travels through every later layer (measured: docs/decisions.md, "An int8 query graph").
_FLOAT_FEED_FORWARD_LAYERS = 2
_NUM_HEADS = 12  # all-MiniLM-L6-v2's attention heads
# Token ids of two sentences ("When did Caroline go to the LGBTQ support group?" and
# "Yes! Last week, with my kids."): the built graph must embed them as the source does.
_PROBES = (
    [101, 2043, 2106, 7981, 2175, 2000, 1996, 12010, 4160, 2490, 2177, 1029, 102],
    [101, 2748, 999, 2197, 2733, 1010, 2007, 2026, 4268, 1012, 102],
)
_MIN_COSINE = 0.98


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


def cached_path(model_path: Path) -> Path:
    """Where the query graph of ``model_path`` is cached (built or not)."""
    return cache_dir() / f"minilm-query-{_cache_key(model_path)}.onnx"


def query_graph(model_path: Path) -> Path | None:
    """The query graph of ``model_path``: cached, or built now; None where it cannot be built."""
    try:
        target = cached_path(model_path)
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
    """Write the query graph of ``model_path`` to ``target`` (atomically: a temp file, renamed).

    The fused graph (``bert_graph``) is quantised where it can be built and its
    vectors match the source's on ``_PROBES``; otherwise the folded graph as
    exported is (slower, same closeness).
    """
    import onnxruntime as ort

    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        folded = Path(work) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3  # ORT warns that folded graphs are machine-specific
        ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        quantized = Path(work) / "query.onnx"
        try:
            fused = Path(work) / "fused.onnx"
            bert_graph.fuse(folded, fused, num_heads=_NUM_HEADS)
            excluded = [
                bert_graph.feed_forward_output(i) for i in range(_FLOAT_FEED_FORWARD_LAYERS)
            ]
            _quantize(fused, quantized, excluded)
            _check_close(model_path, quantized)
        except Exception as e:  # a graph of another shape: the exported ops, quantised
            logger.warning(
                "query graph: the fused graph is not usable (%s); quantising the exported graph", e
            )
            _quantize(folded, quantized, _feed_forward_outputs(folded)[:_FLOAT_FEED_FORWARD_LAYERS])
        os.replace(quantized, target)
    logger.info("built the int8 query graph of %s in %s", model_path.name, target)


def _quantize(source: Path, target: Path, float_products: list[str]) -> None:
    """``quantize_dynamic``: int8 weights per output channel, but ``float_products``."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    advice = _DropAdvice()
    logging.getLogger().addFilter(advice)  # quantize_dynamic logs on the root logger
    try:
        quantize_dynamic(
            source,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            nodes_to_exclude=float_products,
            # the fused operators' outputs have no inferred type: they are float32
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.getLogger().removeFilter(advice)


def _check_close(source: Path, built: Path) -> None:
    """Raise ``ValueError`` unless ``built`` embeds ``_PROBES`` (one text alone, and the
    two padded in one batch) within cosine ``_MIN_COSINE`` of ``source``."""
    import onnxruntime as ort

    lengths = [len(ids) for ids in _PROBES]
    width = max(lengths)
    ids = np.zeros((len(_PROBES), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, probe in enumerate(_PROBES):
        ids[row, : len(probe)] = probe
        mask[row, : len(probe)] = 1
    feeds = [
        {"input_ids": ids[:1, : lengths[0]], "attention_mask": mask[:1, : lengths[0]]},
        {"input_ids": ids, "attention_mask": mask},
    ]
    sessions = [
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        for path in (source, built)
    ]
    for graph_feeds in feeds:
        graph_feeds["token_type_ids"] = np.zeros_like(graph_feeds["input_ids"])
        vectors = [
            normalize_rows(mean_pooled(s.run(None, graph_feeds)[0], graph_feeds["attention_mask"]))
            for s in sessions
        ]
        cosine = float((vectors[0] * vectors[1]).sum(axis=1).min())
        if cosine < _MIN_COSINE:
            raise ValueError(f"its vectors differ from the source graph's (cosine {cosine:.3f})")


def _feed_forward_outputs(model_path: Path) -> list[str]:
    """The matrix products that read a GELU's output (the feed-forward layers' second
    product), in graph order: their inputs have the widest range."""
    import onnx

    graph = onnx.load(str(model_path)).graph
    widths = {i.name: tuple(i.dims) for i in graph.initializer}
    return [
        node.name
        for node in graph.node
        if node.op_type == "MatMul"
        and len(widths.get(node.input[1], ())) == 2
        and widths[node.input[1]][0] > widths[node.input[1]][1]
    ]


class _DropAdvice(logging.Filter):
    """Drops what the quantiser logs on the root logger: its progress, and advice for
    calibrated models ("consider pre-processing")."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "root":
            return True
        advice = str(record.msg).startswith("Please consider to run pre-processing")
        return record.levelno >= logging.WARNING and not advice
