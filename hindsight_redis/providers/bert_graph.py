"""A BERT encoder's ONNX graph rebuilt from onnxruntime's fused transformer operators.

The shipped MiniLM graph was exported op by op: some 440 nodes once
quantised (reshapes, transposes, masks, each matrix product and bias apart),
and on one short query onnxruntime spends about as long dispatching them as
multiplying. This module reads the weights out of the folded graph (float32
weights as constants: ``query_graph.build`` folds it first) and writes the
same network as 46 nodes of onnxruntime's ``com.microsoft`` operators, per
layer: ``Attention`` (the three projections in one product, the softmax, the
heads), the output product, ``SkipLayerNormalization`` (residual, bias and
norm), the feed-forward products around ``BiasGelu``, and another
``SkipLayerNormalization``; embeddings and their norm are one
``EmbedLayerNormalization``. Quantised, a query is a fifth to a third faster
(docs/decisions.md, "The query graph from fused operators").

Only the weights are taken from the source: the layer structure is BERT's,
so ``query_graph.build`` checks the result against the source graph before
using it. Names follow the Hugging Face export (``inner.encoder.layer.N.
attention.self.query.bias`` and so on); a graph without them raises
``ValueError``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

_MS = "com.microsoft"
_BIAS = re.compile(r"(?:.*\.)?encoder\.layer\.(\d+)\.(.+)\.bias$")
_PROJECTIONS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
_EPSILON = 1e-12  # BERT's layer-norm epsilon


def feed_forward_output(layer: int) -> str:
    """The name of ``layer``'s second feed-forward product (the widest inputs)."""
    return f"layer{layer}_feed_forward_output"


def fuse(folded: Path, target: Path, *, num_heads: int) -> None:
    """Write the fused graph of the folded BERT graph ``folded`` to ``target``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    source = onnx.load(str(folded))
    weights = {i.name: numpy_helper.to_array(i) for i in source.graph.initializer}
    projections = _projections(source.graph, weights)
    layers = 1 + max(layer for layer, _ in projections)
    if any((layer, name) not in projections for layer in range(layers) for name in _PROJECTIONS):
        raise ValueError(f"{folded.name}: not every layer has BERT's six projections")
    embeddings = {
        name.split("embeddings.", 1)[1]: value
        for name, value in weights.items()
        if "embeddings." in name and "encoder." not in name
    }
    initializers: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def matmul(x: str, weight: np.ndarray, out: str, node: str | None = None) -> Any:
        """``out = x @ weight`` (the node named ``node``, else ``out``: quantiser exclusions)."""
        return helper.make_node(
            "MatMul", [x, const(f"{out}_weight", weight)], [out], name=node or out
        )

    def skip_norm(x: str, skip: str, layer: int, which: str, bias: np.ndarray, out: str) -> Any:
        """``out = LayerNorm(x + bias + skip)`` with ``layer``'s norm ``which``."""
        prefix = _layer_prefix(weights, layer) + which + ".LayerNorm."
        inputs = [
            x,
            skip,
            const(f"{out}_norm_weight", weights[prefix + "weight"]),
            const(f"{out}_norm_bias", weights[prefix + "bias"]),
            const(f"{out}_bias", bias),
        ]
        return helper.make_node(
            "SkipLayerNormalization", inputs, [out], domain=_MS, epsilon=_EPSILON
        )

    nodes = [
        helper.make_node("Cast", [name], [f"{name}_int32"], to=TensorProto.INT32)
        for name in ("input_ids", "token_type_ids", "attention_mask")
    ]
    nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            [
                "input_ids_int32",
                "token_type_ids_int32",
                const("word_embeddings", embeddings["word_embeddings.weight"]),
                const("position_embeddings", embeddings["position_embeddings.weight"]),
                const("token_type_embeddings", embeddings["token_type_embeddings.weight"]),
                const("embeddings_norm_weight", embeddings["LayerNorm.weight"]),
                const("embeddings_norm_bias", embeddings["LayerNorm.bias"]),
            ],
            ["hidden0", "mask_index"],  # mask_index unused: Attention reads the mask
            domain=_MS,
            epsilon=_EPSILON,
        )
    )
    hidden = "hidden0"
    for layer in range(layers):
        (wq, bq), (wk, bk), (wv, bv), (wo, bo), (wi, bi), (wf, bf) = (
            projections[(layer, name)] for name in _PROJECTIONS
        )
        name = f"layer{layer}"
        out = "last_hidden_state" if layer == layers - 1 else f"{name}_out"
        nodes += [
            helper.make_node(
                "Attention",
                [
                    hidden,
                    const(f"{name}_qkv_weight", np.concatenate([wq, wk, wv], axis=1)),
                    const(f"{name}_qkv_bias", np.concatenate([bq, bk, bv])),
                    "attention_mask_int32",  # (batch, sequence): padding is masked
                ],
                [f"{name}_attention"],
                name=f"{name}_attention",
                domain=_MS,
                num_heads=num_heads,
            ),
            matmul(f"{name}_attention", wo, f"{name}_attention_output"),
            skip_norm(
                f"{name}_attention_output",
                hidden,
                layer,
                "attention.output",
                bo,
                f"{name}_attended",
            ),
            matmul(f"{name}_attended", wi, f"{name}_intermediate"),
            helper.make_node(
                "BiasGelu",
                [f"{name}_intermediate", const(f"{name}_intermediate_bias", bi)],
                [f"{name}_gelu"],
                domain=_MS,
            ),
            matmul(f"{name}_gelu", wf, f"{name}_output", node=feed_forward_output(layer)),
            skip_norm(f"{name}_output", f"{name}_attended", layer, "output", bf, out),
        ]
        hidden = out
    width = int(embeddings["word_embeddings.weight"].shape[1])
    graph = helper.make_graph(
        nodes,
        "bert_fused",
        [
            helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", width]
            )
        ],
        initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)]
    )
    model.ir_version = 8
    onnx.save(model, str(target))


def _projections(graph: Any, weights: dict[str, np.ndarray]) -> dict[tuple[int, str], Any]:
    """(layer, projection name) -> (weight matrix, bias): each ``Add`` of a named bias to
    a ``MatMul`` by a constant matrix."""
    producers = {output: node for node in graph.node for output in node.output}
    found: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
    for node in graph.node:
        if node.op_type != "Add" or len(node.input) != 2:
            continue
        for product, bias in (node.input, reversed(node.input)):
            match = _BIAS.match(bias)
            matmul = producers.get(product)
            if match is None or matmul is None or matmul.op_type != "MatMul":
                continue
            matrix = weights.get(matmul.input[1])
            if matrix is not None and bias in weights:
                found[(int(match.group(1)), match.group(2))] = (matrix, weights[bias])
    if not found:
        raise ValueError("no BERT layer found (biases named encoder.layer.N...)")
    return found


def _layer_prefix(weights: dict[str, np.ndarray], layer: int) -> str:
    """The name prefix of ``layer``'s weights (``inner.encoder.layer.0.``, say)."""
    marker = f"encoder.layer.{layer}."
    for name in weights:
        if marker in name:
            return name[: name.index(marker) + len(marker)]
    raise ValueError(f"no weights of layer {layer}")
