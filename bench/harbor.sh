#!/usr/bin/env bash
# axon at scale under Harbor (issue 34): a Harbor job of the tasks in
# bench/harbor/tasks (3 tasks), ATTEMPTS trials each, CONCURRENT at once
# (default 8 x 8: 24 trials), with axon as the agent
# (integrations.harbor:AxonAgent, installed from a release-shaped archive
# checked by sha256) driven by a scripted model on the host's loopback
# (bench/harbor_model.py: it answers from each request alone, so concurrent
# conversations do not take each other's replies). Then the same job with
# Harbor's `oracle` agent (the tasks' solve.sh), and one trial with a model
# the provider does not know. Prints reward, trials per minute, each trial
# phase's mean for both agents and the difference (axon's overhead per trial
# over the oracle), token totals, and checks every trajectory with Harbor's
# TrajectoryValidator and that the unknown model is a ModelNotFoundError in
# the trial result (bench/harbor_report.py). Exits non-zero when any of those
# fails.
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

# --- the scripted model -----------------------------------------------------
python3 bench/harbor_model.py --model scripted > "$out/model.out" 2> "$out/model.err" &
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

"$venv/bin/python" bench/harbor_report.py "$jobs/oracle-$stamp" "$jobs/axon-$stamp" "$jobs/unknown-model-$stamp" "$url"
