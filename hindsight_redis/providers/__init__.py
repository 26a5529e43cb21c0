"""The models: embedders (static, contextual, through litellm) and the LLM client.

``vectors`` (the ``Embedder`` protocol), ``embedders`` (building them from
settings, caching), ``contextual`` and ``query_graph``/``bert_graph``
(MiniLM on onnxruntime), ``projection`` (stored dimensions),
``litellm_embedder`` and ``llm`` (remote calls, batched, limited, retried).
"""
