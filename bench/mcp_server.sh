#!/usr/bin/env bash
# `axon mcp serve` against the reference servers, with one client for all:
# the official Python SDK (pinned in tests/peers/requirements.txt) making
# CALLS sequential calls and reporting calls per second and p99 latency.
#  - stdio: the same small file read again and again through axon's
#    `read_file` and through `@modelcontextprotocol/server-filesystem`'s
#    `read_text_file`. Target: axon at least 3x the filesystem server's rate.
#  - streamable HTTP: server-filesystem has no HTTP transport, so axon's
#    `read_file` over HTTP is set beside `server-everything`'s HTTP `echo`
#    (the TypeScript SDK's HTTP server; echo reads no file, so the
#    comparison favours it).
# The Python client spends more time per call than either server, so the
# stdio pair is also run with axon's own Rust client (mcp-bench), which shows
# the servers' difference with less client in the way.
# Each figure is the median of 3 runs.
#
# Then the bounds of `axon mcp serve --http`, with mcp-http-bench (raw
# JSON-RPC over reqwest): the median and p99 latency of calls on one
# kept-alive connection, the seconds 2,000 concurrent calls take, and RSS
# before and after a flood of 5,000 initializes (never closed) and 5,000
# calls, and 40 s later when the flood's sessions have idled out (the flood's
# server runs with --session-idle 20s). Set AXON_BEFORE=/path/to/an/older/axon to run the same against that
# build too (a before/after table); BOUNDS_ONLY=1 runs only this part.
#
# Usage: bench/mcp_server.sh [CALLS]   (default 2000)
# Needs: node (>= 20.15), python3; installs the test peers (scripts/peers).
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-2000}
python=tests/peers/.venv/bin/python
peers=$PWD/tests/peers/node_modules

scripts/peers >/dev/null
cargo build --release --locked -p axon-cli -p axon-testkit --bins
. bench/lib.sh
mkdir -p "$work/ws" "$work/home"
for i in $(seq 1 40); do echo "line $i of a small file that a host reads over and over"; done > "$work/ws/small.txt"
export AXON_HOME=$work/home

rate() { for _ in 1 2 3; do "$@"; done | sort -n | sed -n 2p; }

# The bounds of one build: keep-alive latency, concurrency, RSS under a flood.
concurrent=2000
flood=5000
rss_mb() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
hwm_mb() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
start_http() { # BINARY LOG [FLAGS]: starts a server, prints "PID URL"
  "$1" mcp serve --no-agent -C "$work/ws" --http 127.0.0.1:0 "${@:3}" 2> "$2" &
  local pid=$!
  for _ in $(seq 1 200); do grep -q 'over MCP at' "$2" && break; sleep 0.05; done
  echo "$pid $(grep -o 'http://[^ ]*/mcp' "$2")"
}
bounds() { # LABEL BINARY [FLAGS for the flood's server]: prints one table row
  local label=$1 bin=$2 pid url tag
  tag=$(echo "$label" | tr -c 'a-zA-Z0-9' '_')
  read -r pid url < <(start_http "$bin" "$work/$tag-1.err")
  pids+=("$pid")
  read -r p50 p99 < <(target/release/mcp-http-bench keepalive 500 "$url")
  conc=$(target/release/mcp-http-bench concurrent "$concurrent" "$url")
  kill "$pid"
  read -r pid url < <(start_http "$bin" "$work/$tag-2.err" "${@:3}")
  pids+=("$pid")
  sleep 1
  local before; before=$(rss_mb "$pid")
  target/release/mcp-http-bench flood "$flood" "$url" > /dev/null
  sleep 2
  local after peak; after=$(rss_mb "$pid"); peak=$(hwm_mb "$pid")
  # The flood's sessions idle out (20 s here) and the sweep after them frees
  # their memory.
  sleep 40
  local settled; settled=$(rss_mb "$pid")
  kill "$pid"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$p50" "$p99" "$conc" "$before" "$after" "$settled" "$peak"
}
bounds_table() {
  ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true
  echo "== axon mcp serve --http: keep-alive calls, $concurrent concurrent calls, a flood of $flood sessions and calls"
  local rows
  rows=$(bounds "this build" target/release/axon --session-idle 20s)
  if [ -n "${AXON_BEFORE:-}" ]; then rows=$(printf '%s\n%s' "$(bounds "before ($AXON_BEFORE)" "$AXON_BEFORE")" "$rows"); fi
  echo
  printf '| build | keep-alive p50 ms | keep-alive p99 ms | %s concurrent calls, s | RSS start MB | RSS after flood MB | RSS 40 s later MB | peak RSS MB |\n|---|---|---|---|---|---|---|---|\n' "$concurrent"
  echo "$rows"
  echo "(after the flood, at most 256 sessions live (the default cap); 40 s later they have idled out (--session-idle 20s) and their memory is released: target within 20 MB of the start)"
}
if [ -n "${BOUNDS_ONLY:-}" ]; then bounds_table; exit 0; fi
py() { "$python" bench/mcp_py_client.py "$calls" "$@"; }

echo "== $calls calls over stdio (calls/s, p99 ms; median of 3 runs by rate)"
read -r axon_rate axon_p99 < <(rate py read_file '{"path": "small.txt"}' \
  stdio target/release/axon mcp serve --no-agent -C "$work/ws")
read -r fs_rate fs_p99 < <(rate py read_text_file "{\"path\": \"$work/ws/small.txt\"}" \
  stdio node "$peers/@modelcontextprotocol/server-filesystem/dist/index.js" "$work/ws")

echo "== the same over stdio with axon's Rust client"
# The client offers its working folder as the MCP root; server-filesystem
# then serves that folder rather than its arguments, so run it in the files'.
rs_bench() { (cd "$work/ws" && "$OLDPWD/target/release/mcp-bench" "$@"); }
read -r axon_rs_rate axon_rs_p99 < <(MCP_BENCH_TOOL=read_file MCP_BENCH_ARGS='{"path": "small.txt"}' \
  rate rs_bench calls "$calls" -- "$PWD/target/release/axon" mcp serve --no-agent -C "$work/ws")
read -r fs_rs_rate fs_rs_p99 < <(MCP_BENCH_TOOL=read_text_file MCP_BENCH_ARGS="{\"path\": \"$work/ws/small.txt\"}" \
  rate rs_bench calls "$calls" -- node "$peers/@modelcontextprotocol/server-filesystem/dist/index.js" "$work/ws")

echo "== $calls calls over streamable HTTP"
target/release/axon mcp serve --no-agent -C "$work/ws" --http 127.0.0.1:0 2> "$work/axon.err" &
pids+=($!)
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
PORT=$port node -r "$PWD/tests/peers/loopback-only.cjs" \
  "$peers/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp \
  > /dev/null 2> "$work/everything.err" &
pids+=($!)
for _ in $(seq 1 100); do
  grep -q 'over MCP at' "$work/axon.err" && grep -q 'listening on port' "$work/everything.err" && break
  sleep 0.1
done
axon_url=$(grep -o 'http://[^ ]*/mcp' "$work/axon.err")
read -r axon_http_rate axon_http_p99 < <(rate py read_file '{"path": "small.txt"}' http "$axon_url")
read -r ev_http_rate ev_http_p99 < <(rate py echo '{"message": "m"}' http "http://127.0.0.1:$port/mcp")

echo
printf '| server | transport | tool | calls/s | p99 ms |\n|---|---|---|---|---|\n'
printf '| axon mcp serve | stdio | read_file | %s | %s |\n' "$axon_rate" "$axon_p99"
printf '| server-filesystem | stdio | read_text_file | %s | %s |\n' "$fs_rate" "$fs_p99"
printf '| axon mcp serve (Rust client) | stdio | read_file | %s | %s |\n' "$axon_rs_rate" "$axon_rs_p99"
printf '| server-filesystem (Rust client) | stdio | read_text_file | %s | %s |\n' "$fs_rs_rate" "$fs_rs_p99"
printf '| axon mcp serve | HTTP | read_file | %s | %s |\n' "$axon_http_rate" "$axon_http_p99"
printf '| server-everything | HTTP | echo | %s | %s |\n' "$ev_http_rate" "$ev_http_p99"
python3 - "$axon_rate" "$fs_rate" "$axon_http_rate" "$ev_http_rate" "$axon_rs_rate" "$fs_rs_rate" <<'PY'
import sys
axon, fs, axon_http, ev_http, axon_rs, fs_rs = map(float, sys.argv[1:])
print(f"stdio: axon / server-filesystem = {axon / fs:.2f}x (target >= 3) {'met' if axon >= 3 * fs else 'MISSED'}")
print(f"stdio, Rust client: axon / server-filesystem = {axon_rs / fs_rs:.2f}x")
print(f"HTTP:  axon read_file / server-everything echo = {axon_http / ev_http:.2f}x")
PY

echo
bounds_table
