"""Framework adapters: ``langgraph`` (a ``BaseStore``), ``langchain`` (a retriever, the
tools), ``openai_agents`` (a ``Session``, the tools), ``pydantic_ai`` (the tools, their
dependency type), ``llamaindex`` (a memory block, a retriever), ``crewai`` (a storage
backend of its ``Memory``).

Each is a thin layer over the client, imported on its own: ``pip install
"hindsight-redis[langgraph]"`` (or ``[langchain]``, ``[openai-agents]``,
``[pydantic-ai]``, ``[llamaindex]``, ``[crewai]``) brings the framework it needs; this package
imports none, and no adapter imports another.
"""
