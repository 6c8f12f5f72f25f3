#!/usr/bin/env bash
# The VS Code extension's own costs, in a real VS Code: code-server (pinned
# in editors/vscode/e2e/package-lock.json) serving the workbench on
# 127.0.0.1 with the extension's .vsix installed, driven in headless
# Chromium, axon (`axon acp`) answering from a zero-latency scripted model
# on loopback (editors/vscode/e2e/bench.ts does the measuring):
# - activation: clicking the axon icon → the panel's page drawn, and →
#   axon's session up (the mode switch filled);
# - prompt → first streamed token, measured inside the webview (Send
#   clicked → the first answer text in the DOM), p50/p90/p99 over TURNS
#   turns in one chat, against the same prompts sent to `axon acp` directly
#   with the extension's ACP client code and no editor (session/prompt
#   written → first agent_message_chunk): the difference is what the
#   extension host, VS Code's webview messaging and the panel's rendering
#   add;
# - VmRSS / VmHWM of the extension host and of axon after those turns.
# Results: printed, and bench/out/vscode.json.
#
# Usage: bench/vscode.sh [TURNS]   (default 100)
# AXON_BIN: the axon to measure (default: a release build, built here).
# Needs: scripts/peers done (the extension's and e2e's npm packages,
# Chromium); code-server and the browser are stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
turns=${1:-100}
if [ -z "${AXON_BIN:-}" ]; then
  cargo build --release --locked -p axon-cli
  AXON_BIN=$PWD/target/release/axon
fi
mkdir -p bench/out
out=$PWD/bench/out/vscode.json
cd editors/vscode
e2e/install
npm run --silent package > /dev/null
node build.mjs --bench
AXON_BIN=$AXON_BIN TURNS=$turns node e2e/out/bench.mjs "$out"
