#!/usr/bin/env bash
# Installs axon from a release archive on this machine, offline:
#   bash install.sh [ARCHIVE] [BINDIR]
# ARCHIVE defaults to the axon-*-ARCH-unknown-linux-gnu.tar.gz for this CPU
# next to this script; BINDIR to ~/.local/bin. Guarantees: nothing is
# installed unless the archive matches its .sha256 (a truncated or damaged
# download stops here with one line), the machine is Linux on x86-64 or
# aarch64 with glibc 2.28 or later, and the archive holds axon and nova-sync;
# then both are copied into BINDIR (replacing older ones), the archive's
# lib/axon/ (llama.cpp, one library per CPU generation) into BINDIR/../lib/axon
# (where axon looks, relative to itself), and `axon --version` runs. Every failure is one line on stderr saying what and what to do.
set -euo pipefail

fail() { echo "install.sh: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
[ "$(uname -s)" = Linux ] || fail "axon's archives are for Linux; on $(uname -s) build from source: https://github.com/axon-agent/axon#set-up"
case "$(uname -m)" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) fail "no axon archive for $(uname -m) (there are x86_64 and aarch64); build from source: https://github.com/axon-agent/axon#set-up" ;;
esac

archive=${1:-}
if [ -z "$archive" ]; then
  shopt -s nullglob
  found=("$here"/axon-*-"$arch"-unknown-linux-gnu.tar.gz)
  shopt -u nullglob
  [ "${#found[@]}" -eq 1 ] || fail "expected one axon-VERSION-$arch-unknown-linux-gnu.tar.gz next to install.sh, found ${#found[@]}; pass the archive: bash install.sh ARCHIVE"
  archive=${found[0]}
fi
bindir=${2:-$HOME/.local/bin}
[ -f "$archive" ] || fail "no such archive: $archive"
name=$(basename "$archive")
case "$name" in
  *-"$arch"-unknown-linux-gnu.tar.gz) ;;
  *) fail "$name is not for this machine ($arch); use axon-VERSION-$arch-unknown-linux-gnu.tar.gz" ;;
esac

# glibc: the binaries need 2.28 or later (Debian 10, RHEL 8, Ubuntu 20.04).
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}') || glibc=""
[ -n "$glibc" ] || fail "this system has no glibc (musl?); axon's archives need glibc 2.28 or later: build from source: https://github.com/axon-agent/axon#set-up"
if [ "$(printf '%s\n2.28\n' "$glibc" | sort -V | head -1)" != 2.28 ]; then
  fail "glibc $glibc is older than the 2.28 axon needs (Debian 10, RHEL 8, Ubuntu 20.04 or later); build from source: https://github.com/axon-agent/axon#set-up"
fi

sums="$archive.sha256"
[ -f "$sums" ] || fail "no $name.sha256 next to the archive; download it too, then run again"
want=$(awk 'NR == 1 { print $1 }' "$sums")
got=$(sha256sum "$archive" | awk '{ print $1 }')
[ "$want" = "$got" ] || fail "$name is damaged or incomplete (its sha256 does not match $name.sha256); download it again"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$archive" -C "$tmp" 2>/dev/null || fail "$name cannot be unpacked although its sha256 matches; download both files again"
src=$tmp/${name%.tar.gz}
for b in axon nova-sync; do
  [ -x "$src/$b" ] || fail "$name holds no $b; download the archive again"
done

mkdir -p "$bindir"
if [ -d "$src/lib/axon" ]; then
  libdir=$(cd "$bindir/.." && pwd)/lib/axon
  mkdir -p "$libdir.new"
  cp "$src"/lib/axon/* "$libdir.new/"
  rm -rf "$libdir.old"
  if [ -d "$libdir" ]; then mv "$libdir" "$libdir.old"; fi
  mv "$libdir.new" "$libdir"
  rm -rf "$libdir.old"
fi
for b in axon nova-sync; do
  install -m 0755 "$src/$b" "$bindir/$b.new"
  mv -f "$bindir/$b.new" "$bindir/$b"
done
"$bindir/axon" --version >/dev/null || fail "$bindir/axon does not run here; report it with the output of: $bindir/axon --version"
echo "installed axon and nova-sync into $bindir${libdir:+, its libraries into $libdir}"
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) echo "add $bindir to PATH, e.g.: echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.profile" ;;
esac
