#!/usr/bin/env bash
# axon's MCP client against the official SDK clients, over stdio, against
# the reference server `server-everything`:
#  - CALLS sequential `echo` calls: calls per second and p99 latency, for
#    axon (crates/testkit's mcp-bench, driving axon_mcp::McpManager), the
#    TypeScript SDK client and the Python SDK client (`mcp` from PyPI);
#  - start-up of 5 servers at once against one alone (median of 3 runs).
# Targets: at least the TypeScript client's rate; 5 servers ready within
# 1.2x the single start. (A slow server and the first answer: mcp_startup.sh.)
#
# Usage: bench/mcp_client.sh [CALLS]   (default 2000)
# Needs: node (>= 20.15), python3; installs the test peers (scripts/peers),
# which include the Python SDK pinned in tests/peers/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-2000}
python=tests/peers/.venv/bin/python
python_sdk=$(grep '^mcp==' tests/peers/requirements.txt)

scripts/peers >/dev/null
cargo build --release --locked -p axon-testkit --bins
server=(node "$PWD/tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js" stdio)

median() { sort -n | sed -n 2p; }
# Each figure is the median of 3 runs: single runs vary by ±25 % here.
rate() { for _ in 1 2 3; do "$@"; done | sort -n | sed -n 2p; }
echo "== $calls echo calls over stdio (calls/s, p99 ms; median of 3 runs by rate)"
read -r axon_rate axon_p99 < <(rate target/release/mcp-bench calls "$calls" -- "${server[@]}")
read -r ts_rate ts_p99 < <(rate node bench/mcp_echo_client.mjs "$PWD/tests/peers" "$calls" "${server[@]}")
read -r py_rate py_p99 < <(rate "$python" bench/mcp_py_client.py "$calls" echo '{"message": "m"}' stdio "${server[@]}")
printf '| client | calls/s | p99 ms |\n|---|---|---|\n'
printf '| axon (rmcp) | %s | %s |\n| TypeScript SDK | %s | %s |\n| Python SDK (%s) | %s | %s |\n' \
  "$axon_rate" "$axon_p99" "$ts_rate" "$ts_p99" "$python_sdk" "$py_rate" "$py_p99"

one=$(for _ in 1 2 3; do target/release/mcp-bench startup 1 -- "${server[@]}"; done | median)
five=$(for _ in 1 2 3; do target/release/mcp-bench startup 5 -- "${server[@]}"; done | median)
light_one=$(for _ in 1 2 3; do target/release/mcp-bench startup 1 -- bench/mcp_sh_server.sh; done | median)
light_five=$(for _ in 1 2 3; do target/release/mcp-bench startup 5 -- bench/mcp_sh_server.sh; done | median)
echo
echo "== start-up (median of 3)"
echo "server-everything (node): 1 server ${one}s, 5 at once ${five}s"
echo "minimal sh server:        1 server ${light_one}s, 5 at once ${light_five}s"
python3 - "$axon_rate" "$ts_rate" "$one" "$five" "$light_one" "$light_five" "$(nproc)" <<'PY'
import sys
axon, ts, one, five, l1, l5, cores = map(float, sys.argv[1:])
print(f"axon / TypeScript rate: {axon / ts:.2f}x (target >= 1) {'met' if axon >= ts else 'MISSED'}")
print(f"5 servers / 1 server (node): {five / one:.2f}x (target <= 1.2) {'met' if five <= 1.2 * one else 'MISSED'}")
print(f"5 servers / 1 server (sh):   {l5 / l1:.2f}x: the client starts them concurrently; node's own")
print(f"  start-up is CPU-bound, so on {cores:.0f} cores five node servers cannot start in one's time")
PY

