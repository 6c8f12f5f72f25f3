"""A stdio MCP server on the official Python SDK, for axon's client tests.

- `add_tool(name)` registers a tool called `name` and sends
  `notifications/tools/list_changed`, as a server whose tools change does.
- `GATE`: a path; the server does not start until that file exists (a slow
  server, held back for exactly as long as a test needs, with no clock).
- `STARTS`: a path; each start appends one line, so a test can count them.
- `FAIL_FIRST`: with `STARTS`, the first start exits at once with a message
  on stderr (a server that fails once, then starts).
"""

import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer

starts = os.environ.get("STARTS")
if starts:
    with open(starts, "a") as f:
        f.write("start\n")
    if os.environ.get("FAIL_FIRST") and len(Path(starts).read_text().splitlines()) == 1:
        print("first start: giving up", file=sys.stderr, flush=True)
        sys.exit(3)

gate = os.environ.get("GATE")
if gate:
    while not Path(gate).exists():
        time.sleep(0.02)

server = MCPServer("changing")


@server.tool()
def ping() -> str:
    """Answers pong."""
    return "pong"


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds a tool called `name` and tells the client its tools changed."""

    def added() -> str:
        return f"{name} works"

    server.add_tool(added, name=name, description="added while running")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


server.run()
