#!/usr/bin/env bash
# The `search` tool (through `axon tool call`) against ripgrep on the same
# corpus: the sources of this project's own dependencies. Three queries: a
# literal, a regex and a case-insensitive literal. Target: axon at most 1.2x
# rg's wall time.
#
# Both sides do the same job: walk the tree with .gitignore rules, include
# hidden files but not .git, skip binary files, and find every matching line.
# axon prints the first 50 matches with context and counts the rest; rg is
# timed twice, printing every match (what a user runs) and only counting
# (`--count`, the least work rg can do for the same answer). Before timing,
# the script checks that axon and rg agree on the number of matching lines.
#
# Usage: bench/search.sh [CORPUS_DIR]   (default: $CARGO_HOME/registry/src)
# Needs: rg and hyperfine (Debian packages ripgrep, hyperfine); installs them
# with apt-get when run as root and they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

corpus=${1:-${CARGO_HOME:-$HOME/.cargo}/registry/src}
out=bench/out
mkdir -p "$out"

for tool in rg hyperfine; do
  if ! command -v "$tool" >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep hyperfine
    else
      echo "bench/search.sh needs $tool (apt-get install ripgrep hyperfine)" >&2
      exit 1
    fi
  fi
done

cargo fetch --locked >/dev/null
cargo build --release --locked -p axon-cli
axon=$PWD/target/release/axon

files=$(rg --files --hidden -g '!.git/' "$corpus" | wc -l)
size=$(du -sh "$corpus" | cut -f1)
echo "corpus: $corpus ($files files, $size)"
echo "machine: $(nproc) cores; $(rg --version | head -1); $(hyperfine --version)"

# name | axon arguments (JSON) | rg flags | pattern
queries=(
  'literal|{"query":"Result<"}||Result<'
  'regex|{"query":"fn [a-z_]+_with\\(","regex":true}||fn [a-z_]+_with\('
  'ignore-case|{"query":"deprecated","case_sensitive":false}|-i|deprecated'
)

summary=()
for q in "${queries[@]}"; do
  IFS='|' read -r name args rgflags pattern <<<"$q"
  rg_fixed=""
  [ "$name" = regex ] || rg_fixed="-F"
  rg_base="rg --hidden -g '!.git/' $rg_fixed $rgflags"

  axon_total=$("$axon" tool call search "$args" -C "$corpus" | head -1 | awk '{print $1}')
  rg_total=$(eval "$rg_base --count -- '$pattern' '$corpus'" | awk -F: '{s += $NF} END {print s + 0}')
  if [ "$axon_total" != "$rg_total" ]; then
    echo "$name: axon found $axon_total matching lines, rg $rg_total; not comparable" >&2
    exit 1
  fi
  echo "== $name: $axon_total matching lines in both"

  hyperfine --warmup 2 --runs 10 --style basic --export-json "$out/search-$name.json" \
    -n "axon $name" "'$axon' tool call search '$args' -C '$corpus' > /dev/null" \
    -n "rg $name" "$rg_base -n --column -C2 -- '$pattern' '$corpus' > /dev/null" \
    -n "rg --count $name" "$rg_base --count -- '$pattern' '$corpus' > /dev/null"
  summary+=("$out/search-$name.json")
done

python3 - "${summary[@]}" <<'PY'
import json, sys
print("\n| query | axon (ms) | rg (ms) | rg --count (ms) | axon / rg | axon / rg --count |")
print("|---|---|---|---|---|---|")
worst = 0.0
for path in sys.argv[1:]:
    results = {r["command"].split(" ", 1)[0] + (" --count" if "--count" in r["command"] else ""): r
               for r in json.load(open(path))["results"]}
    axon, rg, count = results["axon"], results["rg"], results["rg --count"]
    name = path.rsplit("search-", 1)[1][:-5]
    r1, r2 = axon["median"] / rg["median"], axon["median"] / count["median"]
    worst = max(worst, r1)
    print(f"| {name} | {axon['median']*1e3:.1f} | {rg['median']*1e3:.1f} | {count['median']*1e3:.1f} | {r1:.2f}x | {r2:.2f}x |")
print(f"\nworst axon / rg (printing) ratio: {worst:.2f}x (target <= 1.2x)")
PY
