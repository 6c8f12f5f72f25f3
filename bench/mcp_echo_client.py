"""The official Python SDK's client doing what mcp-bench does: N sequential
`echo` calls to one stdio server. Prints `calls_per_second P99_MS`.
Usage: python mcp_echo_client.py N COMMAND ARGS..."""
import asyncio
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    n, command, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            latencies = []
            started = time.perf_counter()
            for i in range(n):
                one = time.perf_counter()
                await session.call_tool("echo", {"message": f"m{i}"})
                latencies.append(time.perf_counter() - one)
            total = time.perf_counter() - started
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)]
    print(f"{n / total:.0f} {p99 * 1000:.3f}")


asyncio.run(main())
