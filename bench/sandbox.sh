#!/usr/bin/env bash
# The cost of axon's OS sandbox per command: `true` run N times (default
# 500) through the `shell` tool with the sandbox off and in workspace-write
# (Landlock + seccomp, prepared per command). Target: < 2 ms added per
# command. The peer is bubblewrap (`bwrap`, what Codex's Linux sandbox and
# Claude Code's sandbox-runtime use): `sh -c true` spawned N times directly
# and N times under `bwrap --ro-bind / / --dev /dev --bind WS WS
# --unshare-net`, the same read-only root, writable workspace and no
# network, from one Python loop (so both sides pay the same spawn cost).
#
# Usage: bench/sandbox.sh [N]
# Needs: bwrap (Debian package bubblewrap; installed with apt-get when run as
# root and missing). Where bwrap cannot create its namespaces (most Docker
# containers), its row says so and axon's still runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

n=${1:-500}
out=bench/out
mkdir -p "$out"

if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap
  else
    echo "bench/sandbox.sh: bwrap is missing (apt-get install bubblewrap); the peer row is skipped" >&2
  fi
fi

cargo build -q --release -p axon-testkit --bin sandbox-bench
echo "# axon: shell tool, $n calls each (ms: mean p50 p99)"
target/release/sandbox-bench "$n" | tee "$out/sandbox-axon.txt"

mkdir -p "$work/ws"
echo "# bubblewrap: sh -c true, $n spawns each (ms: mean p50 p99)"
python3 - "$n" "$work/ws" <<'PY' | tee "$out/sandbox-bwrap.txt"
import shutil, statistics, subprocess, sys, time
n, ws = int(sys.argv[1]), sys.argv[2]
plain = ["sh", "-c", "true"]
bwrap = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--bind", ws, ws,
         "--unshare-net", "--die-with-parent", "--", "sh", "-c", "true"]
def once(argv):
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
def show(name, xs):
    xs = sorted(xs)
    print(f"{name} {statistics.fmean(xs):.3f} {xs[len(xs) // 2]:.3f} {xs[round((len(xs) - 1) * 0.99)]:.3f}")
if not shutil.which("bwrap"):
    print("bwrap not installed")
    sys.exit(0)
try:
    for _ in range(20):
        once(plain); once(bwrap)
except subprocess.CalledProcessError as e:
    print(f"bwrap cannot run here: exit {e.returncode}")
    sys.exit(0)
a, b = [], []
for _ in range(n):
    a.append(once(plain)); b.append(once(bwrap))
show("direct", a)
show("bwrap", b)
PY

python3 - "$out/sandbox-axon.txt" "$out/sandbox-bwrap.txt" <<'PY'
import sys
def rows(path):
    return {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(path) if len(l.split()) == 4}
axon, peer = rows(sys.argv[1]), rows(sys.argv[2])
added = axon["workspace-write"][0] - axon["off"][0]
print(f"axon sandbox adds {added:.3f} ms per command (mean; p50 {axon['workspace-write'][1] - axon['off'][1]:.3f} ms); target < 2 ms: {'met' if added < 2 else 'MISSED'}")
if "bwrap" in peer:
    print(f"bubblewrap adds {peer['bwrap'][0] - peer['direct'][0]:.3f} ms per command (mean; p50 {peer['bwrap'][1] - peer['direct'][1]:.3f} ms)")
PY
