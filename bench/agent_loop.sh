#!/usr/bin/env bash
# The agent loop's own cost: `axon run` does TURNS tool-calling turns
# (read_file of a small file) against a zero-latency scripted model server on
# loopback, then gets its answer. The server measures, for every turn, the
# time from the last byte of its response to the arrival of axon's next
# request: parsing the stream, running the tool, rendering, building and
# sending the next request. Reported: p50, p99 and max of that per-turn
# overhead, and axon's peak RSS. Targets: p50 under 1 ms, RSS under 30 MB.
#
# Usage: bench/agent_loop.sh [TURNS]   (default 200)
# Needs: GNU time (Debian package `time`), python3; installs `time` with
# apt-get when run as root and it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
turns=${1:-200}

if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time
  else
    echo "bench/agent_loop.sh needs GNU time (apt-get install time)" >&2
    exit 1
  fi
fi

cargo build --release --locked -p axon-cli -p axon-testkit --bins
work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

printf 'hello from the benchmark\n' > "$work/bench.txt"
target/release/scripted-model --turns "$turns" --file bench.txt > "$work/server.out" &
server=$!
for _ in $(seq 100); do
  grep -q "listening on" "$work/server.out" 2>/dev/null && break
  sleep 0.05
done
url=$(sed -n 's/^listening on //p' "$work/server.out")
[ -n "$url" ] || { echo "the scripted server did not start" >&2; exit 1; }

start=$(date +%s.%N)
env -i PATH="$PATH" HOME="$work" AXON_HOME="$work/home" AXON_PROVIDER=openai \
  AXON_BASE_URL="$url/v1" OPENAI_API_KEY=bench-key \
  /usr/bin/time -f '%M' -o "$work/rss" \
  target/release/axon run --yes --max-iterations $((turns + 1)) -C "$work" "benchmark" \
  > "$work/answer" 2> "$work/axon.err"
end=$(date +%s.%N)
[ "$(cat "$work/answer")" = "done" ] || { echo "unexpected answer:"; cat "$work/answer" "$work/axon.err"; exit 1; } >&2

python3 - "$url" "$(cat "$work/rss")" "$start" "$end" "$turns" <<'PY'
import json, sys, urllib.request
url, rss_kb, start, end, turns = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
stats = json.load(urllib.request.urlopen(url + "/stats"))
gaps = sorted(stats["client_gaps_us"])
assert stats["requests"] == turns + 1, stats["requests"]
pick = lambda q: gaps[min(len(gaps) - 1, int(q * len(gaps)))] / 1000
print(f"turns: {turns} tool-calling turns + 1 answer ({stats['requests']} model calls)")
print(f"per-turn overhead outside the model: p50 {pick(0.50):.3f} ms, p99 {pick(0.99):.3f} ms, max {gaps[-1]/1000:.3f} ms")
print(f"whole run: {end - start:.3f} s wall, including process start")
print(f"peak RSS: {rss_kb / 1024:.1f} MB")
print(f"targets: p50 < 1 ms ({'met' if pick(0.5) < 1 else 'MISSED'}), RSS < 30 MB ({'met' if rss_kb < 30 * 1024 else 'MISSED'})")
PY
