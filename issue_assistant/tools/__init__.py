"""The read-only tools every engine and the MCP server use, one definition each.

Importing this package registers every tool (`tools.issues`, `tools.files`); add a tool with one
`@tool(name, InputModel)` function in a module imported here.
"""

from issue_assistant.tools import context, files, issues  # noqa: F401  (registers the tools)
from issue_assistant.tools.base import TOOLS, Tool, Toolbox, ToolFailure, ToolInput, ToolResult
from issue_assistant.tools.checkout import Checkout

__all__ = ["TOOLS", "Checkout", "Tool", "ToolFailure", "ToolInput", "ToolResult", "Toolbox"]
