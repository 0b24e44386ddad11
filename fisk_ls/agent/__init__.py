"""The agent front end: the `knowledge_search` tool (tool.py) and its MCP server (mcp.py)."""
