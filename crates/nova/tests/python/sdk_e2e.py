"""The official MCP Python SDK as an agent using nova-sync over stdio.

Usage: sdk_e2e.py NOVA_SYNC_BINARY
(TASK_MANAGER_URL and NOVA_EXECUTION_ID come from the environment and are
passed on to the server.) Registers the session, creates a step, completes
it, and prints the step id on the last line.
"""
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def reply(result):
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return json.loads(text)


async def main():
    env = {k: os.environ[k] for k in ("TASK_MANAGER_URL", "NOVA_EXECUTION_ID", "PATH") if k in os.environ}
    params = StdioServerParameters(command=sys.argv[1], args=[], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            assert names == ["update_execution_session", "create_step", "update_step", "health_check"], names
            health = reply(await session.call_tool("health_check", {}))
            assert health["success"] is True, health
            registered = reply(await session.call_tool("update_execution_session", {"session_id": "sdk-session"}))
            assert registered["success"] is True and registered["data"]["session_id"] == "sdk-session", registered
            created = reply(await session.call_tool("create_step", {"step_name": "analyzing", "message": "reading"}))
            assert created["success"] is True and created["data"]["status"] == "running", created
            step_id = created["data"]["step_id"]
            bad = reply(await session.call_tool("update_step", {"step_id": step_id, "status": "dancing"}))
            assert bad == {"success": False, "error": "Invalid status 'dancing'. Must be one of: running, completed, failed, skipped"}, bad
            done = reply(await session.call_tool("update_step", {"step_id": step_id, "status": "completed", "message": "done"}))
            assert done["success"] is True and done["data"]["status"] == "completed", done
            print(step_id, flush=True)


asyncio.run(main())
