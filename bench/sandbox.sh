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
# Then a typical session's commands in a fresh repository (git status, an
# edit and git add, git commit, touch, mv, rm at the top and deep down, a
# fresh `cargo new` + `cargo build`, `npm install` of a local tarball), R
# times each (default 3), four ways: directly, through `axon sandbox run
# --sandbox off`, through `axon sandbox run` (the default sandbox) and
# under bwrap with the same protection (the workspace writable, .git's
# config, hooks and info read-only, no network): how many succeed in each,
# and the cost each sandbox adds per command (axon against axon with the
# sandbox off, bwrap against direct).
#
# Usage: bench/sandbox.sh [N] [R]   (AXON_BIN: the axon binary to use,
# default target/release/axon, else target/debug/axon; BENCH_PROFILE=debug
# times the shell tool's debug build). The Landlock-only mode (kernels or
# containers without user namespaces) gets a column of its own.
# Needs: bwrap (Debian package bubblewrap; installed with apt-get when run as
# root and missing). Where bwrap cannot create its namespaces (most Docker
# containers), its row says so and axon's still runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

n=${1:-500}
r=${2:-3}
out=bench/out
mkdir -p "$out"

if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap
  else
    echo "bench/sandbox.sh: bwrap is missing (apt-get install bubblewrap); the peer row is skipped" >&2
  fi
fi

# BENCH_PROFILE=debug measures the debug build (no release build needed).
profile=${BENCH_PROFILE:-release}
if [ "$profile" = release ]; then cargo build -q --release -p axon-testkit --bin sandbox-bench
else cargo build -q -p axon-testkit --bin sandbox-bench; fi
echo "# axon ($profile build): shell tool, $n calls each (ms: mean p50 p99)"
target/$profile/sandbox-bench "$n" | tee "$out/sandbox-axon.txt"

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

# --- A session's commands in a fresh repository ---
axon_bin=${AXON_BIN:-}
if [ -z "$axon_bin" ]; then
  if [ -x target/release/axon ]; then axon_bin=target/release/axon; else
    cargo build -q -p axon-cli --bin axon; axon_bin=target/debug/axon; fi
fi
axon_bin=$(realpath "$axon_bin")
template=$work/template
mkdir -p "$template" "$work/pkg"
(
  cd "$work/pkg" && echo '{"name": "tiny", "version": "1.0.0", "main": "index.js"}' > package.json &&
    echo 'module.exports = 1;' > index.js && npm pack --silent > /dev/null
)
tarball=$work/pkg/tiny-1.0.0.tgz
(
  cd "$template" && git init -q && echo hi > README.md && echo '{"name": "app", "version": "1.0.0"}' > package.json &&
    git add . && git -c user.name=b -c user.email=b@b commit -qm first
)
echo "# a session's commands in a fresh repository, $r runs each (ms: median per command; ok = runs that succeeded)"
python3 - "$r" "$work" "$template" "$axon_bin" "$tarball" <<'PY' | tee "$out/sandbox-workflow.txt"
import os, shutil, statistics, subprocess, sys, time
r, work, template, axon, tarball = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
commands = [
    ("git status", "git status --short"),
    ("edit + git add", "echo change >> README.md && git add README.md"),
    ("git commit", "git -c user.name=b -c user.email=b@b commit -qm bench"),
    ("touch top", "touch NEWFILE.md"),
    ("mv top", "mv NEWFILE.md MOVED.md"),
    ("rm top", "rm MOVED.md"),
    ("deep mkdir/touch/mv/rm", "mkdir -p a/b/c && touch a/b/c/x && mv a/b/c/x a/b/c/y && rm -r a"),
    # Caches inside the fresh workspace: every way starts cold (axon's
    # $TMPDIR is new per command, the others' is not).
    ("cargo new + build", 'cargo new -q --vcs none hello && cd hello && CARGO_HOME="$PWD/../.cargo-home" cargo build -q --offline'),
    ("npm install tarball", f'npm install --offline --no-audit --no-fund --loglevel=error --cache "$PWD/.npm-cache" {tarball}'),
]
def argv(way, ws, line):
    if way == "direct":
        return ["sh", "-c", line]
    if way == "axon off":
        return [axon, "sandbox", "run", "--sandbox", "off", "-C", ws, "--", line]
    if way in ("axon", "axon landlock-only"):
        return [axon, "sandbox", "run", "-C", ws, "--", line]
    binds = []
    for part in ("config", "hooks", "info"):
        p = os.path.join(ws, ".git", part)
        if os.path.exists(p):
            binds += ["--ro-bind", p, p]
    tmp = os.path.join(work, "bwrap-tmp")
    os.makedirs(tmp, exist_ok=True)
    return ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", ws, ws, *binds,
            "--bind", tmp, tmp, "--setenv", "TMPDIR", tmp, "--unshare-net", "--die-with-parent",
            "--chdir", ws, "--", "sh", "-c", line]
ways = ["direct", "axon off", "axon", "axon landlock-only"] + (["bwrap"] if shutil.which("bwrap") else [])
# Each axon way reads its own config: the Landlock-only one turns the
# mount namespace off, as a kernel without user namespaces would.
homes = {}
for way in ways:
    home = os.path.join(work, "home-" + way.replace(" ", "-"))
    os.makedirs(home, exist_ok=True)
    if way == "axon landlock-only":
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write("[sandbox]\nmount_namespace = false\n")
    homes[way] = home
times = {w: {name: [] for name, _ in commands} for w in ways}
ok = {w: {name: 0 for name, _ in commands} for w in ways}
failures = {}
for i in range(r):
    for way in ways:
        ws = os.path.join(work, f"ws-{way.replace(' ', '-')}-{i}")
        shutil.copytree(template, ws, symlinks=True)
        env = dict(os.environ, TMPDIR=os.path.join(work, "tmp"), AXON_HOME=homes[way])
        os.makedirs(env["TMPDIR"], exist_ok=True)
        for name, line in commands:
            t = time.perf_counter()
            p = subprocess.run(argv(way, ws, line), cwd=ws, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            times[way][name].append((time.perf_counter() - t) * 1000)
            if p.returncode == 0:
                ok[way][name] += 1
            else:
                failures.setdefault((way, name), p.stdout.decode(errors="replace").strip().splitlines()[-1:])
print(f"{'command':26}" + "".join(f"{w:>20}" for w in ways))
for name, _ in commands:
    print(f"{name:26}" + "".join(f"{statistics.median(times[w][name]):12.1f} {ok[w][name]}/{r} ok " for w in ways))
total = len(commands) * r
print(f"{'succeeded':26}" + "".join(f"{sum(ok[w].values()):>13}/{total} ok" for w in ways))
def added(a, b):
    return statistics.fmean([statistics.median(times[a][n]) - statistics.median(times[b][n]) for n, _ in commands])
print(f"axon's sandbox adds {added('axon', 'axon off'):.1f} ms per command (mean over the commands of the median difference; axon against axon --sandbox off)")
if "bwrap" in ways:
    print(f"bubblewrap adds {added('bwrap', 'direct'):.1f} ms per command (mean over the commands of the median difference; bwrap against direct)")
for (way, name), last in sorted(failures.items()):
    print(f"failed: {way}: {name}: {' '.join(last)}")
PY
