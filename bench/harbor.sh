#!/usr/bin/env bash
# axon at scale under Harbor (issue 34): a Harbor job of the tasks in
# bench/harbor/tasks (3 tasks), ATTEMPTS trials each, CONCURRENT at once
# (default 8 x 8: 24 trials), with axon as the agent
# (integrations.harbor:AxonAgent, installed from a release-shaped archive
# checked by sha256) driven by a scripted model on the host's loopback
# (bench/harbor_model.py: it answers from each request alone, so concurrent
# conversations do not take each other's replies). Then the same job with
# Harbor's `oracle` agent (the tasks' solve.sh), one trial with a model the
# provider does not know, and the same job with Harbor's own generic ACP
# agent (`-a acp`) running `axon acp`, `-m` choosing the model through ACP.
# Prints reward, trials per minute, each trial phase's mean for each agent
# and the difference (its overhead per trial over the oracle), token totals,
# and checks every trajectory with Harbor's TrajectoryValidator, that the
# unknown model is a ModelNotFoundError in the trial result, and for `-a acp`
# that the model was set through axon's `model` config option and the
# tokens reached Harbor's results (bench/harbor_report.py). Exits non-zero
# when any of those fails.
#
#   bench/harbor.sh [ATTEMPTS] [CONCURRENT]
#
# AXON_BIN: the axon to run (default target/release/axon, built here with
# cargo when missing); it must run on Debian 12's glibc (the base image). It
# is stripped and packed like scripts/dist's archive. AXON_ARCHIVE instead
# installs a release archive as it is (its .sha256 beside it).
#
# Docker: the daemon DOCKER_HOST names when it answers; else one of its own
# (Debian's docker.io, installed with apt-get when missing) on a private
# socket under DOCKER_ROOT (default /tmp/axon-harbor-docker), without
# iptables or a bridge, stopped at the end. Containers use the host's network
# (integrations.harbor:DockerCliEnvironment: Debian 12 has no Compose v2 for
# Harbor's own docker environment). The base image `axon-harbor-base` is
# Debian 12 minbase from debootstrap (with ca-certificates) piped into
# `docker import`, made once. Harbor itself (PyPI harbor 0.25.0 and its
# dependencies, pinned in bench/harbor-requirements.txt) goes into
# bench/out/harbor-venv with Python 3.12.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

attempts=${1:-8}
concurrent=${2:-8}
out=$PWD/bench/out/harbor
mkdir -p "$out"
stamp=$(date -u +%Y%m%d-%H%M%S)

# --- Harbor ---------------------------------------------------------------
venv=${HARBOR_VENV:-$PWD/bench/out/harbor-venv}
req_stamp=$(sha256sum bench/harbor-requirements.txt | cut -d' ' -f1)
if [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$req_stamp" ]; then
  echo "== installing Harbor into $venv"
  py312=/root/.pyenv/versions/3.12.1/bin/python
  [ -x "$py312" ] || py312=$(command -v python3.12 || true)
  [ -n "$py312" ] || { echo "bench/harbor.sh: Harbor needs Python >= 3.12; install python3.12" >&2; exit 1; }
  rm -rf "$venv"
  "$py312" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r bench/harbor-requirements.txt
  echo "$req_stamp" > "$venv/.stamp"
fi
harbor() { PYTHONPATH=$PWD LITELLM_LOCAL_MODEL_COST_MAP=True "$venv/bin/harbor" "$@"; }

# --- Docker ---------------------------------------------------------------
if ! docker version > /dev/null 2>&1; then
  if ! command -v dockerd > /dev/null; then
    echo "== installing Debian's docker.io (dockerd)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io > /dev/null
  fi
  root=${DOCKER_ROOT:-/tmp/axon-harbor-docker}
  mkdir -p "$root"
  export DOCKER_HOST=unix://$root/docker.sock
  echo "== starting dockerd on $DOCKER_HOST"
  dockerd --host "$DOCKER_HOST" --data-root "$root/data" --exec-root "$root/exec" \
    --pidfile "$root/docker.pid" --iptables=false --bridge=none > "$out/dockerd.log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 1 200); do docker version > /dev/null 2>&1 && break; sleep 0.1; done
  docker version > /dev/null 2>&1 || { echo "dockerd did not start; its log: $out/dockerd.log" >&2; tail -5 "$out/dockerd.log" >&2; exit 1; }
fi
echo "== docker: $(docker version --format '{{.Server.Version}}') at ${DOCKER_HOST:-the default socket}"
if ! docker image inspect axon-harbor-base > /dev/null 2>&1; then
  echo "== making the base image: debootstrap --variant=minbase bookworm | docker import"
  rootfs=$work/rootfs
  debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" > "$out/debootstrap.log" 2>&1 ||
    { echo "debootstrap failed; its log: $out/debootstrap.log" >&2; exit 1; }
  tar -C "$rootfs" -c . | docker import - axon-harbor-base > /dev/null
fi
# What Harbor's `acp` agent provisions in each environment before its first
# run (ACP runner: Python >= 3.12 with agent-client-protocol in
# /opt/harbor-acp-venv, uv in /opt/harbor-acp-tools; its setup skips both
# when present), put into the base image once: it fetches uv from astral.sh
# and Python from GitHub, which this host does not reach (PyPI and Debian's
# mirror it does). Python 3.12 is this host's pyenv build, at the same path
# (its libpython is found by an absolute rpath), without its tests; the
# wheels are downloaded by the host's pip.
if ! docker run --rm axon-harbor-base test -x /opt/harbor-acp-tools/uv > /dev/null 2>&1; then
  echo "== adding Harbor's ACP runner (Python 3.12, agent-client-protocol, uv) to axon-harbor-base"
  py=/root/.pyenv/versions/3.12.1
  [ -x "$py/bin/python3.12" ] || { echo "bench/harbor.sh: the acp job needs $py (pyenv's Python 3.12.1, Debian 12 glibc)" >&2; exit 1; }
  mkdir -p "$work/acp-layer"
  tar -C / --exclude='*/test' --exclude='*/tests' --exclude=__pycache__ --exclude='*.a' \
    --exclude='*/site-packages/*' -cf "$work/acp-layer/python.tar" "${py#/}"
  # The wheels come through the host's pip (its index and certificates).
  "$py/bin/python3.12" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    -d "$work/acp-layer/wheels" agent-client-protocol==0.12.1 uv==0.9.13 > "$out/acp-layer.log" 2>&1 ||
    { echo "pip download for the ACP runner failed; its log: $out/acp-layer.log" >&2; exit 1; }
  cat > "$work/acp-layer/Dockerfile" <<'DOCKERFILE'
FROM axon-harbor-base
ADD python.tar /
COPY wheels /tmp/wheels
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 curl tar unzip bzip2 xz-utils > /dev/null \
 && /root/.pyenv/versions/3.12.1/bin/python3.12 -m venv /opt/harbor-acp-venv \
 && /opt/harbor-acp-venv/bin/pip install --quiet --disable-pip-version-check --no-index --find-links /tmp/wheels agent-client-protocol==0.12.1 uv==0.9.13 \
 && rm -rf /tmp/wheels \
 && mkdir -p /opt/harbor-acp-tools /opt/harbor-acp-python && ln -s /opt/harbor-acp-venv/bin/uv /opt/harbor-acp-tools/uv
DOCKERFILE
  docker build --network host -q -t axon-harbor-base "$work/acp-layer" >> "$out/acp-layer.log" 2>&1 ||
    { echo "adding the ACP runner failed; its log: $out/acp-layer.log" >&2; tail -5 "$out/acp-layer.log" >&2; exit 1; }
fi

# --- axon, packed as a release archive with its sha256 ---------------------
if [ -n "${AXON_ARCHIVE:-}" ]; then
  archive=$AXON_ARCHIVE
  echo "== axon: $archive"
else
  bin=${AXON_BIN:-target/release/axon}
  [ -x "$bin" ] || cargo build --release -p axon-cli
  name=axon-0.0.0-bench-x86_64-unknown-linux-gnu
  rm -rf "$work/stage" && mkdir -p "$work/stage/$name"
  cp "$bin" "$work/stage/$name/axon" && strip "$work/stage/$name/axon"
  archive=$out/$name.tar.gz
  tar -C "$work/stage" -cf - "$name" | gzip -1 > "$archive"
  (cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
  echo "== axon: $bin ($("$bin" --version | head -1)), stripped and packed: $(du -h "$archive" | cut -f1)"
fi
# For Harbor's own `acp` agent: the archive's axon, unpacked where a read-only
# bind mount puts it into every container (/opt/axon), and an ACP registry
# entry whose `local` distribution runs it: Harbor's `binary` distribution
# downloads an https archive with curl inside the environment, which these
# containers cannot reach, and runs dist/<basename of cmd>, not the path in
# the archive.
rm -rf "$work/acp-bin" && mkdir -p "$work/acp-bin"
tar -C "$work/acp-bin" -xzf "$archive"
acp_dir=$(dirname "$(find "$work/acp-bin" -name axon -type f | head -1)")
acp_version=$("$acp_dir/axon" --version | head -1 | awk '{ print $2 }')
cat > "$out/axon-acp-entry.json" <<EOF
{
  "id": "axon",
  "name": "axon",
  "version": "${acp_version:-0.0.0}",
  "description": "axon over ACP, from a binary the environment mounts at /opt/axon",
  "distribution": {
    "local": { "cmd": "/opt/axon/axon", "args": ["acp", "--sandbox", "off"] }
  }
}
EOF

# --- the scripted model -----------------------------------------------------
python3 bench/harbor_model.py --model scripted --model scripted-alt > "$out/model.out" 2> "$out/model.err" &
pids+=("$!")
for _ in $(seq 1 100); do grep -q 'listening on' "$out/model.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$out/model.out")
[ -n "$url" ] || { echo "the scripted model did not start: $(cat "$out/model.err")" >&2; exit 1; }

# --- the jobs ---------------------------------------------------------------
jobs=$out/jobs
job() { # NAME TASKS ATTEMPTS CONCURRENT ARGS...: one Harbor job
  local name=$1 tasks=$2 k=$3 n=$4
  shift 4
  echo "== harbor run: $name ($tasks, $k attempts, $n at once)"
  harbor run -p "$tasks" --env integrations.harbor:DockerCliEnvironment \
    -k "$k" -n "$n" -o "$jobs" --job-name "$name-$stamp" -y -q "$@" > "$out/$name.log" 2>&1 ||
    { echo "harbor run $name failed; its log: $out/$name.log" >&2; tail -20 "$out/$name.log" >&2; exit 1; }
}
axon_args=(-a integrations.harbor:AxonAgent --ak "archive=$archive"
  --ae "AXON_BASE_URL=$url" --ae OPENAI_API_KEY=sk-bench-not-a-secret)
job oracle bench/harbor/tasks "$attempts" "$concurrent" -a oracle
job axon bench/harbor/tasks "$attempts" "$concurrent" "${axon_args[@]}" -m openai/scripted
job unknown-model bench/harbor/tasks/greeting 1 1 "${axon_args[@]}" -m openai/no-such-model
# Harbor's generic ACP agent driving `axon acp`: -m picks the model through
# axon's session config option of category `model` (the scripted model lists
# two; axon would start on its provider default, which the server refuses).
job acp bench/harbor/tasks "$attempts" "$concurrent" -a acp -m openai/scripted \
  --ak "registry_entry_path=$out/axon-acp-entry.json" --ak distribution_preference=local \
  --mounts "[{\"type\": \"bind\", \"source\": \"$acp_dir\", \"target\": \"/opt/axon\", \"read_only\": true}]" \
  --ae "AXON_BASE_URL=$url" --ae OPENAI_API_KEY=sk-bench-not-a-secret --ae AXON_PROVIDER=openai

"$venv/bin/python" bench/harbor_report.py "$jobs/oracle-$stamp" "$jobs/axon-$stamp" "$jobs/unknown-model-$stamp" "$url" \
  "$jobs/acp-$stamp"
