"""The official Python SDK's client making N sequential calls of one tool.
Prints `calls_per_second P99_MS`.

Usage:
  python mcp_py_client.py N TOOL ARGS_JSON stdio COMMAND ARGS...
  python mcp_py_client.py N TOOL ARGS_JSON http URL
"""
import asyncio
import json
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


async def measure(session, n, tool, args):
    await session.initialize()
    latencies = []
    started = time.perf_counter()
    for _ in range(n):
        one = time.perf_counter()
        result = await session.call_tool(tool, args)
        latencies.append(time.perf_counter() - one)
        if result.is_error:
            sys.exit(f"{tool} failed: {result.content}")
    total = time.perf_counter() - started
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)]
    print(f"{n / total:.0f} {p99 * 1000:.3f}")


async def main() -> None:
    n, tool, args, transport = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
    if transport == "stdio":
        params = StdioServerParameters(command=sys.argv[5], args=sys.argv[6:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await measure(session, n, tool, args)
    else:
        async with streamable_http_client(sys.argv[5]) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await measure(session, n, tool, args)


asyncio.run(main())
