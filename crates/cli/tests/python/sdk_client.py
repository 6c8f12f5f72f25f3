"""The official MCP Python SDK as a host of `axon mcp serve`.

Usage:
  sdk_client.py stdio WORKSPACE AXON_BINARY [EXTRA_ARGS...]
  sdk_client.py http WORKSPACE URL

WORKSPACE holds `a.txt` with the line `hello`. The script lists the tools,
calls each one, checks results and error results, progress and ping, and
prints `ok: ...` per check; it exits 1 with the reason on the first failure.
"""
import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

CODE_TOOLS = ["read_file", "write_file", "edit_file", "multi_edit", "apply_patch", "list_dir", "search", "glob", "shell",
              "shell_output", "shell_kill"]


class CheckFailed(Exception):
    pass


def check(condition, what, detail=""):
    if not condition:
        raise CheckFailed(f"{what}: {detail}")
    print(f"ok: {what}", flush=True)


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def call(session, name, args, expect_error=False, **kw):
    result = await session.call_tool(name, args, **kw)
    body = text_of(result)
    check(bool(result.is_error) == expect_error, f"{name} {'fails' if expect_error else 'succeeds'}", body)
    return body


async def exercise(session, workspace):
    init = session.initialize_result
    check(init is not None and init.server_info.name == "axon", "server is axon", repr(init))

    tools = (await session.list_tools()).tools
    names = [t.name for t in tools]
    check(names[: len(CODE_TOOLS)] == CODE_TOOLS, "the code profile's tools are listed", names)
    by_name = {t.name: t for t in tools}
    for tool in tools:
        check(tool.input_schema.get("type") == "object", f"{tool.name} has an object schema")
        check(bool(tool.description), f"{tool.name} has a description")
    check(by_name["read_file"].annotations.read_only_hint is True, "read_file is read-only")
    check(by_name["shell"].annotations.destructive_hint is True, "shell is destructive")
    check(by_name["write_file"].annotations.read_only_hint is False, "write_file is not read-only")

    body = await call(session, "read_file", {"path": "a.txt"})
    check("1 | hello" in body, "read_file shows numbered lines", body)
    await call(session, "write_file", {"path": "new/b.txt", "content": "bee\n"})
    with open(os.path.join(workspace, "new", "b.txt")) as f:
        check(f.read() == "bee\n", "write_file wrote the file")
    await call(session, "edit_file", {"path": "a.txt", "old_str": "hello", "new_str": "world"})
    with open(os.path.join(workspace, "a.txt")) as f:
        check(f.read() == "world\n", "edit_file changed the file")
    await call(session, "multi_edit", {"path": "new/b.txt", "edits": [
        {"old_str": "bee", "new_str": "wasp"}, {"old_str": "wasp\n", "new_str": "wasp\nant\n"}]})
    with open(os.path.join(workspace, "new", "b.txt")) as f:
        check(f.read() == "wasp\nant\n", "multi_edit made both edits")
    await call(session, "apply_patch", {"input": "*** Begin Patch\n*** Update File: new/b.txt\n"
               "@@\n wasp\n-ant\n+bee\n*** Add File: new/c.txt\n+sea\n*** End Patch"})
    with open(os.path.join(workspace, "new", "b.txt")) as f:
        check(f.read() == "wasp\nbee\n", "apply_patch changed the file")
    with open(os.path.join(workspace, "new", "c.txt")) as f:
        check(f.read() == "sea\n", "apply_patch added a file in the same patch")
    body = await call(session, "list_dir", {})
    check("a.txt" in body and "new" in body, "list_dir lists the folder", body)
    body = await call(session, "search", {"query": "world"})
    check("a.txt" in body, "search finds the edited line", body)
    body = await call(session, "glob", {"pattern": "*.txt"})
    check("new/b.txt" in body, "glob finds nested files", body)
    body = await call(session, "shell", {"command": "echo from-shell; pwd"})
    check("from-shell" in body and os.path.realpath(workspace) in body, "shell runs in the workspace", body)

    # Errors are results the model can read, naming what was wrong.
    body = await call(session, "read_file", {"path": "../outside.txt"}, expect_error=True)
    check("outside" in body.lower() or "workspace" in body.lower(), "escaping the workspace is refused", body)
    body = await call(session, "read_file", {}, expect_error=True)
    check("path" in body, "a missing argument is named", body)
    body = await call(session, "read_file", {"path": 7}, expect_error=True)
    check("path" in body, "a mistyped argument is named", body)
    body = await call(session, "edit_file", {"path": "a.txt", "old_str": "absent", "new_str": "x"}, expect_error=True)
    check("absent" in body or "not found" in body.lower() or "no match" in body.lower(), "edit_file says what it missed", body)
    try:
        await session.call_tool("no_such_tool", {})
        check(False, "an unknown tool is a protocol error", "the call succeeded")
    except MCPError as e:
        check("no_such_tool" in str(e), "an unknown tool is a protocol error naming it", str(e))

    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, message))

    # Heartbeats come every second; 3.5 s leaves room for two of them even
    # when a busy machine delays each one.
    body = await call(session, "shell", {"command": "sleep 3.5; echo done"}, progress_callback=on_progress)
    check("done" in body, "a slow shell command finishes", body)
    check(len(updates) >= 2, "a slow call reports progress", updates)
    check(all(a[0] < b[0] for a, b in zip(updates, updates[1:])), "progress increases", updates)

    await session.send_ping()
    check(True, "ping answers")


async def main():
    mode, workspace = sys.argv[1], sys.argv[2]
    try:
        if mode == "stdio":
            params = StdioServerParameters(
                command=sys.argv[3], args=["mcp", "serve", "-C", workspace, "--no-agent", *sys.argv[4:]]
            )
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await exercise(session, workspace)
        else:
            async with streamable_http_client(sys.argv[3]) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await exercise(session, workspace)
    except CheckFailed as e:
        print(f"FAILED: {e}", flush=True)
        sys.exit(1)
    print("all checks passed", flush=True)


asyncio.run(main())
