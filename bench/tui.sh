#!/usr/bin/env bash
# The terminal UI with a long session: frames drawn through ratatui's
# crossterm backend (escape sequences encoded, then discarded), in process,
# with a transcript of LINES lines (answers with lists and highlighted Rust,
# and a 12-line tool card each).
#  - idle_frame: a redraw with nothing new (the spinner tick);
#  - token_to_screen: one streamed token applied and drawn;
#  - key_to_screen: one key typed (or erased) and drawn;
#  - page_scroll: PageUp / PageDown and the frame after;
#  - resize_frame: the width changes, so every entry is wrapped again (the
#    worst case; highlighted code blocks are cached across widths).
# Target: every frame under 16 ms (60 per second). Median, p99 and worst
# of 1,000 samples (200 for scrolling, 20 for resizes).
#
# Usage: bench/tui.sh [LINES] [WIDTH] [HEIGHT]   (defaults 5000 120 40)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p axon-testkit --bin tui-bench
target/release/tui-bench "${1:-5000}" "${2:-120}" "${3:-40}" | awk '
  /^#/ { print; print ""; printf "| case | median | p99 | worst |\n|---|---|---|---|\n"; next }
  { printf "| %s | %.2f ms | %.2f ms | %.2f ms |\n", $1, $2/1000, $3/1000, $4/1000 }'
