#!/usr/bin/env bash
# nova-sync api under load: 50 concurrent agents (HTTP clients, `nova-load`)
# each create 100 steps and update each twice (15,000 writes), against
#  - SQLite (one API process, the default `--db nova.db`),
#  - PostgreSQL with one API process,
#  - PostgreSQL with two API processes on the same database (agents spread
#    over both),
#  - the same, with one of the two killed with SIGKILL mid-run (agents move
#    to the other one).
# Reports acknowledged writes/s, p50/p99 latency, and lost writes: every
# write the API acknowledged (2xx) is read back at the end and must be there
# (must be 0). PostgreSQL is Debian's package (scripts/peers installs it),
# initdb'd into a scratch folder with its default durability (fsync on),
# on a free loopback port; as root it runs as the `postgres` user.
#
# Usage: bench/nova.sh [AGENTS] [STEPS]   (defaults 50 100)
set -euo pipefail
cd "$(dirname "$0")/.."
agents=${1:-50}
steps=${2:-100}
source bench/lib.sh
mkdir -p bench/out

cargo build --release --locked -p nova --bins
bin=target/release

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "PostgreSQL server not installed: run scripts/peers" >&2; exit 1; }
as_pg=()
if [ "$(id -u)" = 0 ]; then
  as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups --)
  chmod 755 "$work"
fi
mkdir "$work/pg"
[ "$(id -u)" = 0 ] && chown postgres: "$work/pg"
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U nova --auth=trust --locale=C -E UTF8 >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
"${as_pg[@]}" "$pgbin/postgres" -D "$work/pg" -h 127.0.0.1 -p "$port" -k "" \
  -c max_connections=200 >"$work/pg.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
  "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$port" -U nova && break
  sleep 0.1
done
"$pgbin/pg_isready" -q -h 127.0.0.1 -p "$port" -U nova || { cat "$work/pg.log" >&2; exit 1; }
psql() { "$pgbin/psql" -X -q -t -A -h 127.0.0.1 -p "$port" -U nova -d postgres -c "$1"; }

# start_api DB: starts `nova-sync api` on a free port; sets $api_url and $api_pid.
start_api() {
  local log="$work/api-$RANDOM.log"
  "$bin/nova-sync" api --listen 127.0.0.1:0 --db "$1" 2>"$log" &
  api_pid=$!
  pids+=("$api_pid")
  for _ in $(seq 1 300); do
    api_url=$(sed -n 's|.*API at \(http://[^/]*\)/api.*|\1|p' "$log" | head -1)
    [ -n "$api_url" ] && return 0
    sleep 0.05
  done
  cat "$log" >&2
  return 1
}

results=()
# run NAME URLS: one load run, its JSON report kept in $results.
run() {
  local name=$1 urls=$2 report
  report=$("$bin/nova-load" --url "$urls" --agents "$agents" --steps "$steps" --run "$name") || {
    echo "$name: $report" >&2
    results+=("{\"scenario\":\"$name\",\"failed\":true,\"report\":$report}")
    return 0
  }
  results+=("{\"scenario\":\"$name\",\"report\":$report}")
}

echo "== SQLite, 1 API process"
start_api "$work/nova.db"; run sqlite-1 "$api_url"; kill "$api_pid"

echo "== PostgreSQL, 1 API process"
psql "CREATE DATABASE bench1"
start_api "postgres://nova@127.0.0.1:$port/bench1"; run postgres-1 "$api_url"; kill "$api_pid"

echo "== PostgreSQL, 2 API processes"
psql "CREATE DATABASE bench2"
start_api "postgres://nova@127.0.0.1:$port/bench2"; a=$api_url; a_pid=$api_pid
start_api "postgres://nova@127.0.0.1:$port/bench2"; b=$api_url; b_pid=$api_pid
run postgres-2 "$a,$b"; kill "$a_pid" "$b_pid"

echo "== PostgreSQL, 2 API processes, one killed with SIGKILL mid-run"
psql "CREATE DATABASE bench3"
start_api "postgres://nova@127.0.0.1:$port/bench3"; a=$api_url; a_pid=$api_pid
start_api "postgres://nova@127.0.0.1:$port/bench3"; b=$api_url; b_pid=$api_pid
# Killed once a third of the writes are stored.
total=$((agents * steps * 3))
( while :; do
    n=$("$pgbin/psql" -X -q -t -A -h 127.0.0.1 -p "$port" -U nova -d bench3 \
        -c "SELECT count(*) + count(*) FILTER (WHERE message LIKE 'update%') + count(*) FILTER (WHERE message = 'update 2') FROM steps" 2>/dev/null || echo 0)
    if [ "${n:-0}" -ge $((total / 3)) ]; then kill -9 "$b_pid"; echo "killed $b at $n of $total writes" >"$work/killed"; exit 0; fi
    sleep 0.05
  done ) &
watcher=$!
run postgres-2-kill9 "$a,$b"
wait "$watcher" || true
cat "$work/killed" 2>/dev/null || echo "(the run ended before the kill)"
kill "$a_pid" 2>/dev/null || true

printf '%s\n' "${results[@]}" >bench/out/nova.jsonl
echo
printf '| %-18s | %9s | %10s | %8s | %8s | %7s | %10s | %11s | %s\n' scenario writes requests/s p50_ms p99_ms retries duplicates lost_writes errors
printf '%s\n' "${results[@]}" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line); x = r["report"]
    print("| %-18s | %9s | %10s | %8s | %8s | %7s | %10s | %11s | %s" % (r["scenario"], x.get("acknowledged_writes"), x.get("requests_per_second"),
          x.get("p50_ms"), x.get("p99_ms"), x.get("retries"), x.get("duplicate_steps"), x.get("lost_writes"), x.get("agent_errors")))
'
