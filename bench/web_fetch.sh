#!/usr/bin/env bash
# web_fetch's speed and the share of a page's main text it keeps, against
# the Python trafilatura package, on real pages saved as fixtures
# (bench/fixtures/web: the Rust Book, the Cargo book, the rustc book, std's
# rustdoc and a Wikipedia article; see its README for sources and licences).
#
# Both sides fetch the same pages from one loopback server started here
# (python3 -m http.server on 127.0.0.1), ROUNDS times each, and convert them
# to Markdown: axon through the web_fetch tool itself
# (crates/webtools/examples/web_fetch_bench.rs: the registry, the guarded
# client, readability, Markdown; its cache off), the peer with urllib and
# trafilatura.extract(output_format="markdown"), pinned, in a venv under
# bench/out. Reported: pages/s for each, then for each page the share of
# its reference main text (the words of the page's main element, chosen by
# hand in web_fetch_peer.py) found in each tool's Markdown ("kept") and the
# share of each output that is not in it ("extra": boilerplate).
#
# Usage: bench/web_fetch.sh [ROUNDS]   (default 20)
# Needs: python3 with venv, pip reaching PyPI (for the peer; PEER=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
trafilatura_version=2.3.1
# trafilatura's justext needs lxml's HTML cleaner, a package of its own now.
html_clean_version=0.4.6
fixtures=bench/fixtures/web
pages=(rust-book-ownership.html cargo-manifest.html rustc-lint-levels.html
  rustdoc-std-option.html wikipedia-elon-musk.html)

cargo build --release --locked -p axon-webtools --example web_fetch_bench
mkdir -p bench/out
. bench/lib.sh

venv=bench/out/web-fetch-venv
if [ "${PEER:-1}" != 0 ] && [ "$(cat "$venv/.stamp" 2>/dev/null)" != "trafilatura==$trafilatura_version lxml_html_clean==$html_clean_version" ]; then
  echo "== installing trafilatura==$trafilatura_version into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "trafilatura==$trafilatura_version" \
    "lxml_html_clean==$html_clean_version" > "$work/pip.log" 2>&1 ||
    { cat "$work/pip.log" >&2; exit 1; }
  echo "trafilatura==$trafilatura_version lxml_html_clean==$html_clean_version" > "$venv/.stamp"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$fixtures" > "$work/server.log" 2>&1 &
pids+=($!)
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' "$base/" 2> /dev/null && break
  sleep 0.05
done

mkdir -p "$work/axon" "$work/peer"
echo "== axon web_fetch: ${#pages[@]} pages × $rounds rounds"
read -r axon_pages axon_seconds < <(target/release/examples/web_fetch_bench "$base" "$work/axon" "$rounds" "${pages[@]}")
python3 -c "import sys; print(f'axon web_fetch: {int(sys.argv[1])/float(sys.argv[2]):.1f} pages/s ({sys.argv[1]} pages in {sys.argv[2]} s)')" "$axon_pages" "$axon_seconds"

if [ "${PEER:-1}" != 0 ]; then
  echo "== trafilatura $trafilatura_version: ${#pages[@]} pages × $rounds rounds"
  read -r peer_pages peer_seconds < <("$venv/bin/python" bench/web_fetch_peer.py peer "$base" "$work/peer" "$rounds" "${pages[@]}")
  python3 -c "import sys; print(f'trafilatura: {int(sys.argv[1])/float(sys.argv[2]):.1f} pages/s ({sys.argv[1]} pages in {sys.argv[2]} s)')" "$peer_pages" "$peer_seconds"
  echo "== main text kept"
  "$venv/bin/python" bench/web_fetch_peer.py score "$fixtures" "$work/axon" "$work/peer" "${pages[@]}"
fi
rm -rf bench/out/web_fetch && cp -r "$work" bench/out/web_fetch
echo "(the Markdown of each side is in bench/out/web_fetch/axon and bench/out/web_fetch/peer)"
