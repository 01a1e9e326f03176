"""legalrag where people already work: the tools an agent host calls over the Model Context Protocol.

``tools.LegalTools`` is the transport-free part: eight typed operations (search the statutes, fetch an article by
its citation, check the citations of any text, predict the provisions and the verdict for a case's facts,
answer a question with checked citations, list a law's versions and show an article across them), each returning a pydantic model. Its collaborators (the index, the
answer model, the citation and structure models) arrive as zero-argument factories from the composition root
and are built on the first call that needs them, so a host can start ``legalrag mcp`` in well under a second.

``mcp_server.create_mcp_server(tools)`` wraps them in the official ``mcp`` SDK's ``MCPServer`` (typed input
and output schemas, descriptions in Chinese and English, argument errors that say how to call the tool);
``legalrag mcp`` runs it over stdio and ``legalrag serve`` mounts it over streamable HTTP at ``/mcp``.
"""
