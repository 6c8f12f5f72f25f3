#!/usr/bin/env bash
# `axon acp`'s own cost per prompt, as an editor sees it. A small client
# (bench/acp_client.py: plain JSON lines over the agent's stdio) sends
# `initialize`, `session/new`, WARMUP prompts, then PROMPTS prompts one after
# the other in the same session, against a zero-latency scripted model server
# on loopback that answers each request with a short streamed text and no
# tool call (`scripted-model --answers N`). With the model taking no time,
# what a prompt takes is the agent's overhead: the request parsed, the
# model's request built and sent, its stream parsed, every piece sent on as
# an `agent_message_chunk`, the session saved, the answer sent.
# Reported: p50 and p99 of the time from writing `session/prompt` to the
# first `agent_message_chunk`, and to the prompt's response; then VmRSS and
# VmHWM of the agent process (and of its process tree) after the prompts;
# the per-prompt times go to bench/out/acp-*.json. Targets: per-turn
# overhead (the round trip) p50 under 2 ms, RSS under 40 MB.
#
# Peer: @zed-industries/claude-agent-acp (Zed's ACP adapter for Claude Code,
# the agent SDK's bundled Claude Code underneath), pinned, installed with npm
# into bench/out/peers (not committed), run the same way against its own
# scripted model, which serves the Anthropic Messages format on
# /v1/messages (ANTHROPIC_BASE_URL). It is kept off the network: its
# non-essential traffic is disabled and any other HTTPS goes to a proxy on
# a closed loopback port. Tried and not runnable here (printed at the end):
# @zed-industries/codex-acp 0.16.0 refuses `wire_api = "chat"` (Codex speaks
# only the Responses API now, which the scripted model does not serve), and
# goose is on none of the registries this machine reaches. PEER=0 skips the
# peer.
#
# Usage: bench/acp.sh [PROMPTS] [WARMUP]   (default 100, 5)
# Needs: python3; for the peer, node (>= 18) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
prompts=${1:-100}
warmup=${2:-5}

cargo build --release --locked -p axon-cli -p axon-testkit --bins
mkdir -p bench/out
. bench/lib.sh
peer_package=$claude_acp_package
peer_version=$claude_acp_version
mkdir -p "$work/ws"
echo "a small project" > "$work/ws/README.md"

start_model() { # LOG ANSWERS: starts a scripted model, prints "PID URL"
  target/release/scripted-model --answers "$2" > "$1" &
  local pid=$!
  for _ in $(seq 1 100); do grep -q 'listening on' "$1" 2>/dev/null && break; sleep 0.05; done
  echo "$pid $(sed -n 's/^listening on //p' "$1")"
}
model_requests() { python3 -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/stats"))["requests"])' "$1"; }

echo "== axon acp: $warmup warm-up prompts, then $prompts prompts in one session"
read -r pid url < <(start_model "$work/axon-model.out" $((prompts + warmup)))
pids+=("$pid")
[ -n "$url" ] || { echo "the scripted server did not start" >&2; exit 1; }
mkdir -p "$work/axon-home"
if ! python3 bench/acp_client.py "$prompts" "$warmup" "$work/ws" -- \
  env -i PATH="$PATH" HOME="$work" AXON_HOME="$work/axon-home" AXON_PROVIDER=openai \
  AXON_BASE_URL="$url/v1" OPENAI_API_KEY=sk-bench \
  target/release/axon acp > "$work/axon.json" 2> "$work/axon.err"; then
  cat "$work/axon.err" >&2
  exit 1
fi
axon_requests=$(model_requests "$url")

peer_json=""
peer_note=""
peer_requests=0
if [ "${PEER:-1}" != 0 ]; then
  echo "== $peer_package@$peer_version (Claude Code): the same"
  if install_claude_acp; then
    # Claude Code may ask the model for more than the prompts (a title, a
    # quota check): give it answers to spare and count what it used.
    read -r pid url < <(start_model "$work/peer-model.out" $((4 * (prompts + warmup) + 50)))
    pids+=("$pid")
    mkdir -p "$work/peer-home"
    if python3 bench/acp_client.py "$prompts" "$warmup" "$work/ws" -- \
      bench/claude_acp.sh "$url" "$work/peer-home" > "$work/peer.json" 2> "$work/peer.err"; then
      peer_json=$(cat "$work/peer.json")
      peer_requests=$(model_requests "$url")
    else
      peer_note="failed: $(grep -m1 'acp_client:' "$work/peer.err" || tail -n 1 "$work/peer.err") (its stderr: bench/out/acp-peer.err)"
      cp "$work/peer.err" bench/out/acp-peer.err
    fi
  fi
fi
# The raw per-prompt times, for a closer look.
cp "$work/axon.json" bench/out/acp-axon.json
[ -z "$peer_json" ] || cp "$work/peer.json" bench/out/acp-peer.json

python3 - "$(cat "$work/axon.json")" "$axon_requests" "$peer_json" "$peer_requests" "$peer_note" \
  "$prompts" "$warmup" "$peer_package@$peer_version" <<'PY'
import json, sys
axon, axon_requests, peer, peer_requests, peer_note, prompts, warmup, peer_name = sys.argv[1:]
prompts, warmup = int(prompts), int(warmup)
axon = json.loads(axon)
assert int(axon_requests) == prompts + warmup, f"axon made {axon_requests} model calls for {prompts + warmup} prompts"
rows = [("axon acp", axon, int(axon_requests))]
if peer:
    rows.append((peer_name, json.loads(peer), int(peer_requests)))

def pick(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]

print()
print("| agent | first chunk p50 ms | first chunk p99 ms | round trip p50 ms | round trip p99 ms | model calls per prompt | ready ms | RSS MB | peak RSS MB | processes | tree RSS MB |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for name, r, requests in rows:
    print(f"| {name} | {pick(r['first_chunk_ms'], .5):.3f} | {pick(r['first_chunk_ms'], .99):.3f} "
          f"| {pick(r['turn_ms'], .5):.3f} | {pick(r['turn_ms'], .99):.3f} | {requests / (prompts + warmup):.2f} "
          f"| {r['ready_ms']:.0f} | {r['rss_kb'] / 1024:.1f} | {r['hwm_kb'] / 1024:.1f} | {r['processes']} "
          f"| {r['tree_rss_kb'] / 1024:.1f} |")
print("(ready: from starting the agent to the session/new answer; RSS read after the prompts; peak RSS is VmHWM; a peer's tree includes the processes it started)")
if not peer:
    print(f"peer: {peer_note or 'skipped (PEER=0)'}")
print("not compared: @zed-industries/codex-acp 0.16.0 stops at its config: `wire_api = \"chat\"` is no longer supported "
      "(Codex needs the Responses API, /v1/responses, which the scripted model does not serve); "
      "goose (`goose acp`) is not on npm, PyPI, crates.io or Debian (its installer downloads a release binary)")
p50 = pick(axon["turn_ms"], .5)
rss = axon["rss_kb"] / 1024
print(f"targets: per-turn overhead p50 < 2 ms ({p50:.3f} ms, {'met' if p50 < 2 else 'MISSED'}), "
      f"RSS < 40 MB ({rss:.1f} MB, {'met' if rss < 40 else 'MISSED'})")
PY
