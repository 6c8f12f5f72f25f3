#!/usr/bin/env bash
# Time to the answer of a session's first prompt when one of its MCP
# servers is slow to start: through ACP, `axon acp` and, as the peer,
# Claude Code's ACP adapter (bench/lib.sh), each on a zero-latency scripted
# model, with 5 MCP servers (bench/mcp_sh_server.sh) all quick, or 4 quick
# and 1 that takes 5 s to start (`sleep 5` first). The prompt names no
# server. Measured from starting the agent to the prompt's response
# (`session/new` answered, then the whole turn), median of 3 runs.
# Target: the slow server adds under 1.5 s to axon's answer (its start-up
# grace is 1 s), not its 5 s.
#
# Usage: bench/mcp_startup.sh      PEER=0 skips the peer.
# Needs: python3; for the peer, node (>= 18) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p axon-cli -p axon-testkit --bins
median() { sort -n | sed -n 2p; }
. bench/lib.sh
mkdir -p "$work/ws" bench/out
echo "a small project" > "$work/ws/README.md"
quick() { printf '{"name": "quick%s", "command": "%s/bench/mcp_sh_server.sh", "args": [], "env": []}' "$1" "$PWD"; }
slow=$(printf '{"name": "slow", "command": "sh", "args": ["-c", "sleep 5; exec %s/bench/mcp_sh_server.sh"], "env": []}' "$PWD")
all_quick="[$(quick 1), $(quick 2), $(quick 3), $(quick 4), $(quick 5)]"
one_slow="[$(quick 1), $(quick 2), $(quick 3), $(quick 4), $slow]"
start_model() { # LOG: starts a scripted model with answers to spare, prints "PID URL"
  target/release/scripted-model --answers 200 > "$1" &
  local pid=$!
  for _ in $(seq 1 100); do grep -q 'listening on' "$1" 2>/dev/null && break; sleep 0.05; done
  echo "$pid $(sed -n 's/^listening on //p' "$1")"
}
# Seconds from starting the agent to the response of a prompt sent as soon
# as its session is open (the model answers at once: the rest is waiting).
first_answer() { # SERVERS COMMAND...
  local servers=$1
  shift
  ACP_MCP_SERVERS="$servers" python3 bench/acp_client.py 1 0 "$work/ws" -- "$@" 2> "$work/first.err" |
    python3 -c 'import json, sys; r = json.load(sys.stdin); print("%.2f" % ((r["ready_ms"] + r["turn_ms"][0]) / 1000))' ||
    { cat "$work/first.err" >&2; echo "failed"; }
}
read -r pid url < <(start_model "$work/axon-model.out")
pids+=("$pid")
mkdir -p "$work/axon-home"
printf '#!/bin/sh\nexec env -i PATH="%s" HOME="%s" AXON_HOME="%s/axon-home" AXON_PROVIDER=openai AXON_BASE_URL="%s/v1" OPENAI_API_KEY=sk-bench "%s/target/release/axon" acp\n' \
  "$PATH" "$work" "$work" "$url" "$PWD" > "$work/axon-acp"
chmod +x "$work/axon-acp"
axon_quick=$(for _ in 1 2 3; do first_answer "$all_quick" "$work/axon-acp"; done | median)
axon_slow=$(for _ in 1 2 3; do first_answer "$one_slow" "$work/axon-acp"; done | median)
peer_quick=skipped
peer_slow=skipped
peer_note=""
if [ "${PEER:-1}" != 0 ] && install_claude_acp; then
  read -r pid peer_url < <(start_model "$work/peer-model.out")
  pids+=("$pid")
  mkdir -p "$work/peer-home"
  peer_quick=$(for _ in 1 2 3; do first_answer "$all_quick" bench/claude_acp.sh "$peer_url" "$work/peer-home"; done | median)
  peer_slow=$(for _ in 1 2 3; do first_answer "$one_slow" bench/claude_acp.sh "$peer_url" "$work/peer-home"; done | median)
fi
echo
echo "== first prompt answered through ACP with 5 MCP servers (s, from starting the agent; median of 3)"
printf '| agent | 5 quick servers | 4 quick + 1 taking 5 s |\n|---|---|---|\n'
printf '| axon acp | %s | %s |\n| %s@%s (Claude Code) | %s | %s |\n' \
  "$axon_quick" "$axon_slow" "$claude_acp_package" "$claude_acp_version" "$peer_quick" "$peer_slow"
[ -z "$peer_note" ] || echo "peer: $peer_note"
python3 - "$axon_quick" "$axon_slow" <<'PY'
import sys
try:
    quick, slow = map(float, sys.argv[1:])
except ValueError:
    sys.exit("axon's first answer could not be timed")
added = slow - quick
print(f"the slow server adds {added:.2f} s to axon's first answer (target < 1.5) {'met' if added < 1.5 else 'MISSED'}")
PY
