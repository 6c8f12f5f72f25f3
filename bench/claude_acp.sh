#!/bin/sh
# Runs the Claude Code peer (installed by bench/lib.sh's install_claude_acp)
# against the Anthropic-format model at URL, with HOME as its home, kept off
# the network: its non-essential traffic is disabled and any other HTTPS
# goes to a proxy on a closed loopback port.
# Usage: bench/claude_acp.sh URL HOME
cd "$(dirname "$0")/.." || exit 1
exec env -i PATH="$PATH" HOME="$2" ANTHROPIC_BASE_URL="$1" ANTHROPIC_API_KEY=sk-bench \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
  DISABLE_AUTOUPDATER=1 HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 \
  NO_PROXY=127.0.0.1,localhost \
  node "$PWD/bench/out/peers/node_modules/@zed-industries/claude-agent-acp/dist/index.js"
