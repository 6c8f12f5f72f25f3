#!/usr/bin/env bash
# What a user downloads and installs, and how long until the first answer
# of `--version`, in one run:
# - the size of each artefact scripts/dist makes for this machine's
#   architecture (archive, wheel, npm front and platform packages) and of
#   the tree each leaves installed;
# - the time from the wheel to the first `axon --version` (pip install into
#   a fresh venv, offline, then the command), from the npm tarballs (npm
#   install -g into a fresh prefix, offline) and from the archive
#   (install.sh into a fresh folder);
# - the same npm figures for the peers' npm packages, @openai/codex and
#   @anthropic-ai/claude-code (pinned below), installed from the npm cache
#   into a fresh prefix (offline; the cache is filled once beforehand, not
#   timed), so both sides install from local files.
# Times are medians of RUNS (default 3); each run starts from an empty
# venv / prefix / folder. The peers need the npm registry once; without it
# their rows say skipped.
#
# Usage: bench/install.sh [RUNS]    (NO_BUILD=1 uses dist/ as it is;
#                                    PEER=0 skips the peers)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

runs=${1:-3}
codex=@openai/codex@0.171.0
claude=@anthropic-ai/claude-code@2.1.332
out=bench/out
mkdir -p "$out"
arch=$(uname -m)
case "$arch" in x86_64) npm_arch=x64 ;; aarch64) npm_arch=arm64 ;; *) echo "bench/install.sh: no artefacts for $arch" >&2; exit 2 ;; esac
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)

# The artefacts: built (or found fresh) by scripts/dist.
[ "${NO_BUILD:-0}" = 1 ] || scripts/dist "$arch" > "$work/dist.log" 2>&1 || { tail -5 "$work/dist.log" >&2; exit 1; }
dist=$PWD/dist
archive=$dist/axon-$version-$arch-unknown-linux-gnu.tar.gz
wheel=$(ls "$dist"/axon_agent-"$version"-py3-none-*_"$arch".whl)
front=$dist/axon-agent-$version.tgz
plat=$dist/axon-agent-linux-$npm_arch-gnu-$version.tgz
for f in "$archive" "$wheel" "$front" "$plat"; do
  [ -f "$f" ] || { echo "bench/install.sh: no $f; run scripts/dist $arch" >&2; exit 2; }
done

export HOME=$work/home npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export PIP_DISABLE_PIP_VERSION_CHECK=1
mkdir -p "$HOME"
cache=$PWD/$out/npm-cache

now() { date +%s.%N; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
du_b() { du -sb "$@" | awk '{ s += $1 } END { print s }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.2f s", a[int((NR + 1) / 2)] }'; }

# time_runs NAME SETUP INSTALL RUN: RUNS times, SETUP (untimed) then INSTALL
# and RUN timed together in a fresh folder $dest ($work/NAME-i); prints the
# median. The last run's folder stays for the size of the installed tree.
time_runs() {
  local name=$1 setup=$2 install=$3 run=$4 i t0 t1
  for i in $(seq "$runs"); do
    dest=$work/$name-$i
    mkdir -p "$dest"
    eval "$setup"
    t0=$(now)
    eval "$install" > /dev/null 2>&1 || { echo "failed: $install" >&2; return 1; }
    eval "$run" > /dev/null 2>&1 || { echo "failed: $run" >&2; return 1; }
    t1=$(now)
    echo "$t0 $t1" | awk '{ print $2 - $1 }'
  done | median
}

rows=()
row() { rows+=("$(printf '| %s | %s | %s | %s |' "$1" "$2" "$3" "$4")"); }

# --- axon ---------------------------------------------------------------------
t=$(time_runs archive 'cp "$archive" "$archive.sha256" "$dist/install.sh" "$dest/"' \
  'bash "$dest/install.sh" "" "$dest/bin"' '"$dest/bin/axon" --version')
dest=$work/archive-$runs
installed=$(du_b "$dest/bin")
row "axon archive ($(basename "$archive"))" "$(mb "$(stat -c %s "$archive")")" "$(mb "$installed")" "$t"

t=$(time_runs wheel 'python3 -m venv "$dest/venv"' \
  '"$dest/venv/bin/pip" install --no-index --no-deps "$wheel"' '"$dest/venv/bin/axon" --version')
dest=$work/wheel-$runs
installed=$(du_b "$dest"/venv/bin/axon "$dest"/venv/bin/axon-agent "$dest"/venv/lib/python3*/site-packages/axon_agent-*.dist-info)
row "axon wheel ($(basename "$wheel"))" "$(mb "$(stat -c %s "$wheel")")" "$(mb "$installed")" "$t"

t=$(time_runs npm ':' \
  'npm install --global --offline --loglevel=error --cache "$work/axon-npm-cache" --prefix "$dest/npm" "$front" "$plat"' \
  '"$dest/npm/bin/axon" --version')
dest=$work/npm-$runs
installed=$(du_b "$dest/npm")
row "axon npm (axon-agent + axon-agent-linux-$npm_arch-gnu)" \
  "$(mb $(($(stat -c %s "$front") + $(stat -c %s "$plat"))))" "$(mb "$installed")" "$t"

# --- the peers ------------------------------------------------------------------
peer_row() { # SPEC BIN
  local spec=$1 bin=$2 tgz
  if ! npm install --global --loglevel=error --cache "$cache" --prefix "$work/warm-$bin" "$spec" > /dev/null 2>&1; then
    row "$spec" "skipped: npm could not install it here" "" ""
    return
  fi
  t=$(time_runs "$bin" ':' \
    'npm install --global --offline --loglevel=error --cache "$cache" --prefix "$dest/npm" "$spec"' \
    '"$dest/npm/bin/$bin" --version') || { row "$spec" "skipped: offline install failed" "" ""; return; }
  dest=$work/$bin-$runs
  installed=$(du_b "$dest/npm")
  # The tarballs npm unpacked: every installed package, packed from the cache.
  mkdir -p "$work/tgz-$bin"
  node -e '
    const fs = require("fs"), path = require("path"), seen = new Set();
    const visit = (d) => {
      try { const p = JSON.parse(fs.readFileSync(path.join(d, "package.json"), "utf8")); if (p.name && p.version) seen.add(`${p.name}@${p.version}`); } catch {}
      walk(path.join(d, "node_modules"));
    };
    const walk = (nm) => {
      if (!fs.existsSync(nm)) return;
      for (const e of fs.readdirSync(nm)) {
        if (e.startsWith(".")) continue;
        if (e.startsWith("@")) for (const s of fs.readdirSync(path.join(nm, e))) visit(path.join(nm, e, s));
        else visit(path.join(nm, e));
      }
    };
    walk(process.argv[1]);
    console.log([...seen].join("\n"));' "$dest/npm/lib/node_modules" > "$work/tgz-$bin.list"
  tgz=0
  while read -r pkg; do
    # Packing asks for the full package document, which the install (abbreviated
    # documents) did not cache: --prefer-offline, untimed.
    (cd "$work/tgz-$bin" && npm pack --prefer-offline --silent --cache "$cache" "$pkg" > /dev/null 2>&1) || true
  done < "$work/tgz-$bin.list"
  tgz=$(du_b "$work/tgz-$bin"/*.tgz 2>/dev/null || echo 0)
  row "$spec (npm)" "$(mb "$tgz")" "$(mb "$installed")" "$t"
}
if [ "${PEER:-1}" = 1 ]; then
  peer_row "$codex" codex
  peer_row "$claude" claude
fi

{
  echo "install.sh on $(nproc) cores, $(date -u +%F), medians of $runs runs, each into an empty folder, offline from local files"
  echo
  echo "| artefact | download | installed tree | install + first --version |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$out/install.md"
