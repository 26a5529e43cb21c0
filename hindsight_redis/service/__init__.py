"""What runs as a server: the agents' tools over MCP (stdio or HTTP), tokens, the console.

``tools`` (each tool defined once: name, words, arguments, call), ``mcp``
(the MCP server and the tools' clients), ``http`` (streamable HTTP with
bearer tokens and ``/metrics``), ``run`` (picks the transport), ``workers``
(workers inside the server's process), ``tokens`` (access tokens),
``console`` (the operators' web console).
"""
