#!/usr/bin/env bash
# Sessions and context at scale:
#  - load and resume a 10,000-message session (2,500 turns of a request, a
#    tool call, its result and an answer; ~3.4 MB of JSONL): the file parsed,
#    compactions applied, and the history with its token counts ready for
#    the first model call (what `axon run --resume` does before it);
#  - trim a 200,000-token history to 80 % of a 128k window (token counts
#    cached per message, as the agent keeps them), and count it from scratch.
# Targets: load under 100 ms; trim under 5 ms. Median of 5 runs each.
# `axon sessions show` on the same file is timed too, as a user meets it
# (process start, load, Markdown rendering), with hyperfine when installed.
#
# Usage: bench/sessions.sh [MESSAGES] [TOKENS]   (defaults 10000 200000)
set -euo pipefail
cd "$(dirname "$0")/.."
messages=${1:-10000}
tokens=${2:-200000}

cargo build --release --locked -p axon-cli -p axon-testkit --bins
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
id=$(target/release/sessions-bench generate "$work" "$messages")
size=$(du -h "$work/data/sessions/$id.jsonl" | cut -f1)

median() { sort -n | sed -n 3p; }
load_ms=$(for _ in 1 2 3 4 5; do target/release/sessions-bench resume "$work" "$id" 2>/dev/null; done | awk '{print $1}' | median)
resume_ms=$(for _ in 1 2 3 4 5; do target/release/sessions-bench resume "$work" "$id" 2>/dev/null; done | awk '{print $2}' | median)
runs=$(for _ in 1 2 3 4 5; do target/release/sessions-bench trim "$tokens" 2>/dev/null; done)
count_ms=$(echo "$runs" | awk '{print $1}' | median)
trim_ms=$(echo "$runs" | awk '{print $2}' | median)

echo "| what | median |"
echo "|---|---|"
echo "| load a $messages-message session ($size) | $load_ms ms |"
echo "| load and prepare its history to resume | $resume_ms ms |"
echo "| trim a $tokens-token history (counts cached) | $trim_ms ms |"
echo "| count the same history from scratch (tiktoken) | $count_ms ms |"
if command -v hyperfine >/dev/null; then
  AXON_HOME=$work hyperfine --warmup 2 --runs 10 --style basic \
    "target/release/axon sessions show $id" --output=null 2>/dev/null | grep -E "Time|Range" || true
fi
python3 - "$load_ms" "$trim_ms" <<'PY'
import sys
load, trim = map(float, sys.argv[1:])
print(f"load {load:.1f} ms (target < 100) {'met' if load < 100 else 'MISSED'}")
print(f"trim {trim:.3f} ms (target < 5) {'met' if trim < 5 else 'MISSED'}")
PY
