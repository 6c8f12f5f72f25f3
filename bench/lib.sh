# Sourced by the benchmark scripts: a scratch folder `$work` and the
# background processes listed in `pids`, all gone when the script exits.
work=$(mktemp -d "${WORK_PARENT:-${TMPDIR:-/tmp}}/axon-bench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
