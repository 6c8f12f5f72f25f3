#!/usr/bin/env bash
# `axon web` (the browser panel) in a real browser, measured from inside the
# page, beside the usual way to put a streaming chat in a browser: a Gradio
# ChatInterface (bench/web_peer.py, gradio pinned below) streaming from the
# same scripted model. Both are driven by the same driver
# (crates/testkit/src/bin/web-bench.rs: headless Debian Chromium over
# WebDriver) and the same zero-latency scripted model
# (`scripted-model --clocked`: every piece of an answer is `⟦<epoch ms>⟧ `,
# stamped when the model writes it), each phase with a fresh server and
# model:
# - latency: one warm-up turn, then TURNS turns of PIECES pieces GAP_MS
#   apart; a MutationObserver on document.body, installed before the
#   prompt, records for every marker the time from the model's byte to the
#   text being in the DOM (and to the start of the next frame, which paints
#   it). Target: token to DOM p50 < 20 ms.
# - paint: PAINT_RUNS fresh browsers (new profile, nothing cached) open the
#   page: first-contentful-paint, and when the page was usable (axon:
#   body[data-ready="1"] after its first replay; Gradio: its textbox).
#   Target: first paint < 300 ms.
# - memory: MESSAGES/2 prompts, each answered with 5 pieces, sent one after
#   the other through the page; then the JS heap after a GC
#   (--enable-precise-memory-info), the element count, and scrolling the
#   transcript: 20 scrollTop jumps (frame that jumps to the next frame) and
#   180 frames of a steady scroll (frame intervals; 16.7 ms is smooth).
#   Gradio sends and re-renders the whole history every turn, so its turn
#   time grows with the conversation; it is run to PEER_MESSAGES (and axon
#   too, for a row at the same size), and what MESSAGES would take it is
#   extrapolated from its own turn times.
# - connect: the server's RSS (/proc/PID/status VmRSS) before any browser,
#   with BROWSERS browsers on the page, and after each ran one turn.
# The raw numbers go to bench/out/web-*.json (not committed).
#
# What is built is HEAD (git archive into $BENCH_DIR/src, release build
# there), not the work tree; the peer is installed with pip into a venv
# under $BENCH_DIR. Nothing is written into the repository but bench/out.
#
# Usage: bench/web.sh [MESSAGES] [PEER_MESSAGES]   (default 2000, 400)
# Env: TURNS=5 PIECES=200 GAP_MS=20 PAINT_RUNS=10 BROWSERS=3 PEER=0 (skip
#      the peer) AXON=0 (skip axon) BENCH_DIR=/tmp/axon-bench
# Needs: /usr/bin/chromium and /usr/bin/chromedriver (scripts/peers),
#        python3 with venv, pip reaching PyPI (for the peer).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
messages=${1:-2000}
peer_messages=${2:-400}
turns=${TURNS:-5}
pieces=${PIECES:-200}
gap_ms=${GAP_MS:-20}
paint_runs=${PAINT_RUNS:-10}
browsers=${BROWSERS:-3}
bench=${BENCH_DIR:-/tmp/axon-bench}
peer_version=6.31.0
out=$repo/bench/out
mkdir -p "$bench" "$out"

echo "== building HEAD ($(git -C "$repo" rev-parse --short HEAD)) in $bench/src"
# Unpacked beside, then only changed files copied over, so that cargo
# rebuilds only what changed since the last run (git archive stamps every
# file with the commit's time).
rm -rf "$bench/head"
mkdir -p "$bench/head" "$bench/src"
git -C "$repo" archive HEAD | tar -x -C "$bench/head"
python3 - "$bench/head" "$bench/src" <<'PY'
import filecmp, os, shutil, sys
head, src = sys.argv[1:]
for root, dirs, files in os.walk(head):
    into = os.path.join(src, os.path.relpath(root, head))
    os.makedirs(into, exist_ok=True)
    for name in files:
        new, old = os.path.join(root, name), os.path.join(into, name)
        if not (os.path.isfile(old) and filecmp.cmp(new, old, shallow=False)):
            shutil.copyfile(new, old)
            shutil.copymode(new, old)
for root, dirs, files in os.walk(src, topdown=False):
    for name in files + dirs:
        path = os.path.join(root, name)
        if not os.path.lexists(os.path.join(head, os.path.relpath(path, src))):
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
PY
rm -rf "$bench/head"
(cd "$bench/src" && CARGO_TARGET_DIR="$bench/target" cargo build --release --locked -q \
  -p axon-cli -p axon-testkit --bin axon --bin scripted-model --bin web-bench)
bin=$bench/target/release

peer_note=""
venv=$bench/peer-venv
if [ "${PEER:-1}" != 0 ] && [ "$(cat "$venv/.stamp" 2>/dev/null)" != "gradio==$peer_version" ]; then
  echo "== installing gradio==$peer_version into $venv"
  rm -rf "$venv"
  if python3 -m venv "$venv" && "$venv/bin/pip" install -q "gradio==$peer_version" > "$bench/pip.log" 2>&1; then
    echo "gradio==$peer_version" > "$venv/.stamp"
  else
    peer_note="skipped: pip could not install gradio==$peer_version (see $bench/pip.log)"
  fi
fi

WORK_PARENT="$bench" . "$repo/bench/lib.sh"

first_line() { # FILE PID: waits for the first line of FILE while PID lives
  for _ in $(seq 1 600); do
    [ -s "$1" ] && { head -n 1 "$1"; return; }
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
model_requests() { python3 -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/stats"))["requests"])' "$1"; }

# The settings of each page, for web-bench.
axon_page=()
peer_page=(--ready 'textarea[data-testid="textbox"]' --send 'textarea[data-testid="textbox"]'
  --idle 'button[data-testid="submit-button"]')

model_pid="" model_url="" server_pid="" server_url=""
start() { # SIDE NAME MODEL-ARGS...: a fresh scripted model and server
  local side=$1 name=$2
  shift 2
  "$bin/scripted-model" "$@" > "$work/$name.model" 2>&1 &
  model_pid=$!
  pids+=("$model_pid")
  model_url=$(first_line "$work/$name.model" "$model_pid" | sed -n 's/^listening on //p')
  [ -n "$model_url" ] || { echo "the scripted model did not start" >&2; exit 1; }
  if [ "$side" = axon ]; then
    mkdir -p "$work/$name.home" "$work/$name.ws"
    echo "a small project" > "$work/$name.ws/README.md"
    env -i PATH="$PATH" HOME="$work" AXON_HOME="$work/$name.home" AXON_PROVIDER=openai \
      AXON_BASE_URL="$model_url/v1" OPENAI_API_KEY=sk-bench \
      "$bin/axon" web --listen 127.0.0.1:0 -C "$work/$name.ws" > "$work/$name.server" 2> "$work/$name.err" &
  else
    env -i PATH="$PATH" HOME="$work" GRADIO_ANALYTICS_ENABLED=False \
      "$venv/bin/python" "$repo/bench/web_peer.py" "$model_url" > "$work/$name.server" 2> "$work/$name.err" &
  fi
  server_pid=$!
  pids+=("$server_pid")
  server_url=$(first_line "$work/$name.server" "$server_pid") || {
    echo "the $side server did not start:" >&2
    cat "$work/$name.err" >&2
    exit 1
  }
}
stop() {
  kill "$server_pid" "$model_pid" 2>/dev/null || true
  wait "$server_pid" "$model_pid" 2>/dev/null || true
}
measure() { # SIDE NAME EXPECTED-MODEL-CALLS WEB-BENCH-ARGS...: runs web-bench into bench/out
  local side=$1 name=$2 calls=$3
  shift 3
  local page=("${axon_page[@]}")
  [ "$side" = axon ] || page=("${peer_page[@]}")
  if ! "$bin/web-bench" "$@" "${page[@]}" > "$out/web-$name.json" 2> "$work/$name.bench"; then
    cat "$work/$name.bench" >&2
    echo "(the $side server's stderr:)" >&2
    tail -n 20 "$work/$name.err" >&2
    exit 1
  fi
  local made
  made=$(model_requests "$model_url")
  [ "$made" = "$calls" ] || { echo "$name: $made model calls, expected $calls" >&2; exit 1; }
  stop
}

sides=()
[ "${AXON:-1}" = 0 ] || sides+=(axon)
[ "${PEER:-1}" = 0 ] || [ -n "$peer_note" ] || sides+=(peer)
for side in "${sides[@]}"; do
  echo "== $side: latency ($turns turns of $pieces pieces ${gap_ms} ms apart, after 1 warm-up turn)"
  start "$side" "$side-latency" --clocked $((turns + 1)) --pieces "$pieces" --gap-ms "$gap_ms"
  measure "$side" "$side-latency" $((turns + 1)) latency "$server_url" --turns "$turns" --warmup 1 --pieces "$pieces"

  echo "== $side: first paint ($paint_runs fresh browsers)"
  start "$side" "$side-paint" --answers 1
  measure "$side" "$side-paint" 0 paint "$server_url" --runs "$paint_runs"

  sizes=("$peer_messages")
  [ "$side" = peer ] || [ "$messages" = "$peer_messages" ] || sizes+=("$messages")
  for size in "${sizes[@]}"; do
    echo "== $side: memory and scrolling after $size messages"
    start "$side" "$side-memory-$size" --clocked $((size / 2)) --pieces 5 --gap-ms 0
    measure "$side" "$side-memory-$size" $((size / 2)) memory "$server_url" "$size" --pieces 5
  done

  echo "== $side: server memory with $browsers browsers"
  start "$side" "$side-connect" --clocked "$browsers" --pieces "$pieces" --gap-ms "$gap_ms"
  measure "$side" "$side-connect" "$browsers" connect "$server_url" "$browsers" --pid "$server_pid" --pieces "$pieces"
done

python3 "$repo/bench/web_report.py" "$out" "$messages" "$peer_messages" "gradio $peer_version" "$peer_note"
