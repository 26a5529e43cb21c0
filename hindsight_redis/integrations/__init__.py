"""Framework adapters: ``langgraph`` (a ``BaseStore``) and ``langchain`` (a retriever, the tools).

Each is a thin layer over the client, imported on its own: ``pip install
"hindsight-redis[langgraph]"`` or ``"hindsight-redis[langchain]"`` brings the
framework it needs; this package imports neither.
"""
